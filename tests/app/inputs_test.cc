// The application layer's inputs, the one place every front end resolves them: the policies a
// trace can feed, capacities against a trace, and the trace options.
#include "kvpolicy/app/inputs.h"

#include <gtest/gtest.h>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/generators.h"

namespace kvpolicy::app {
namespace {

Trace small_trace() { return generate_workload("conversation", "sessions=20", 1); }

TEST(AppInputs, ANamedPolicyTheTraceCannotFeedIsAnErrorASetSkipsIt) {
  Trace t = small_trace();
  ASSERT_FALSE(t.has_continuation());
  try {
    policies_the_trace_feeds("lru,lpc", t);
    FAIL() << "lpc named on a trace without continuation scores must be an error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("policy lpc: this trace carries no continuation"),
              std::string::npos)
        << e.what();
  }
  std::string skipped;
  auto online = policies_the_trace_feeds("online", t, &skipped);
  for (auto& s : online) EXPECT_NE(s.name, "lpc");
  EXPECT_NE(skipped.find("skipped lpc"), std::string::npos) << skipped;
  // Never its oracle variant in its place.
  for (auto& s : online) EXPECT_EQ(s.params.find("oracle"), std::string::npos) << s.label();

  t.continuation.assign(t.size(), 0.5f);  // a trace with scores feeds it
  auto fed = policies_the_trace_feeds("lru,lpc", t, &skipped);
  ASSERT_EQ(fed.size(), 2u);
  EXPECT_EQ(fed[1].name, "lpc");
  EXPECT_TRUE(skipped.empty());
}

TEST(AppInputs, CapacitiesResolveAgainstTheTrace) {
  CostModel cost = CostOptions{}.make().with_block_tokens(16);
  auto caps = resolve_capacities("5%,100,1GB", 1000, cost);
  ASSERT_EQ(caps.size(), 3u);
  EXPECT_EQ(caps[0].blocks, 50u);
  EXPECT_TRUE(caps[0].capacity.is_fraction());
  EXPECT_EQ(caps[0].written(), "5%");
  EXPECT_EQ(caps[1].blocks, 100u);
  EXPECT_EQ(caps[1].label().rfind("100 (100 blocks, ", 0), 0u) << caps[1].label();
  EXPECT_NEAR(caps[2].gb, 1.0, cost.kv_bytes_per_block() / 1e9);
  EXPECT_THROW(capacity_specs("5%,10%", true), ConfigError);
  EXPECT_THROW(resolve_capacities("5x", 1000, cost), ConfigError);
}

TEST(AppInputs, TraceOptionsRefuseAnUnknownSessionsMode) {
  TraceOptions o;
  o.sessions = "sometimes";
  EXPECT_THROW(o.read_options(), ConfigError);
  o.sessions = "keep";
  o.max_requests = 7;
  EXPECT_EQ(o.read_options().max_requests, 7u);
}

TEST(AppInputs, RepeatedConfigurationsRunOnce) {
  std::vector<int> configs = {1, 2, 1, 3, 2};
  drop_repeated_configs(
      configs, [](int c) { return std::to_string(c); }, [](int c) { return std::to_string(c); });
  EXPECT_EQ(configs, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(with_commas(1234567), "1,234,567");
  EXPECT_EQ(gb_text(0.0312), "0.0312");
}

}  // namespace
}  // namespace kvpolicy::app
