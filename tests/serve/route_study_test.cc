// The routing study's workloads: the GSP orders are generated, text workloads come from the
// data directory and are skipped with a reason without it, unknown names are one clear error.
#include "kvpolicy/serve/route_study.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

TEST(RouteStudy, GspOrdersAreGeneratedAndNamed) {
  RouteStudyWorkloadOptions o;
  o.gsp_params = "groups=8,prompts=4";
  auto w = route_study_workloads({"gsp-random", "gsp-round_robin", "gsp-grouped"}, o, nullptr);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[1].name, "gsp-round_robin");
  EXPECT_EQ(w[1].trace.name, "gsp-round_robin");
  for (auto& s : w) EXPECT_EQ(s.trace.size(), 32u);
  // Round-robin order: consecutive requests belong to different groups (sessions).
  EXPECT_NE(w[1].trace.session[0], w[1].trace.session[1]);
  // Grouped order: a group's prompts come together.
  EXPECT_EQ(w[2].trace.session[0], w[2].trace.session[1]);
}

TEST(RouteStudy, TextWorkloadsNeedTheDataDirectory) {
  RouteStudyWorkloadOptions o;
  std::vector<std::string> skipped;
  auto w = route_study_workloads({"sharegpt", "loogle"}, o, &skipped);
  EXPECT_TRUE(w.empty());
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_NE(skipped[0].find("no data directory"), std::string::npos) << skipped[0];
  EXPECT_THROW(route_study_workloads({"gsp-sideways"}, o, nullptr), ConfigError);
  EXPECT_THROW(route_study_workloads({"wildchat"}, o, nullptr), ConfigError);
}

TEST(RouteStudy, ConversationsFromShareGpt) {
  const char* data = std::getenv("KVPOLICY_DATA");
  if (!data) GTEST_SKIP() << "KVPOLICY_DATA is not set";
  RouteStudyWorkloadOptions o;
  o.data_dir = data;
  o.tokenizer = "approx";
  o.max_conversations = 50;
  auto w = route_study_workloads({"sharegpt"}, o, nullptr);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_GT(w[0].trace.size(), 50u);  // several turns per conversation
}

}  // namespace
}  // namespace kvpolicy
