// docs/engines.md's capability matrix is what the code answers: the table between its
// engine-matrix markers must be `kvpolicy recommend --matrix` (app::engine_matrix_markdown).
#include <gtest/gtest.h>

#include <algorithm>

#include "kvpolicy/app/recommend.h"
#include "support/doc_check.h"

namespace kvpolicy {
namespace {

TEST(EngineMatrix, EnginesDocMatchesTheCode) {
  std::string doc = testing::read_source_file("docs/engines.md");
  std::string begin = "<!-- engine-matrix:begin", end = "<!-- engine-matrix:end -->";
  size_t from = doc.find(begin), to = doc.find(end);
  ASSERT_NE(from, std::string::npos) << "docs/engines.md lacks the " << begin << " marker";
  ASSERT_NE(to, std::string::npos) << "docs/engines.md lacks the " << end << " marker";
  from = doc.find('\n', from) + 1;
  EXPECT_EQ(doc.substr(from, to - from), app::engine_matrix_markdown())
      << "docs/engines.md's capability matrix differs from the code (src/app/"
         "recommend_engines.cc and the registry). Regenerate it: replace the lines between the "
         "engine-matrix markers with the output of `build/kvpolicy recommend --matrix`.";
}

TEST(EngineMatrix, OfflinePoliciesAreCannotEverywhere) {
  for (const PolicyInfo& info : PolicyRegistry::instance().all()) {
    if (!needs_future(PolicySpec{info.name, ""})) continue;
    app::Recommendation r;
    r.policy = info.name;
    r.capacity_blocks = 64;
    r.block_tokens = 16;
    for (const app::EngineConfig& e : app::engine_configs(r)) {
      EXPECT_EQ(e.support, "cannot") << info.name << " in " << e.engine;
      EXPECT_NE(e.why.find("future"), std::string::npos) << e.why;
      EXPECT_TRUE(e.config.empty() && e.install.empty());
    }
  }
}

TEST(EngineMatrix, ConfigurationsNameTheSpec) {
  app::Recommendation r;
  r.policy = "s3fifo";
  r.capacity_blocks = 1000;
  r.block_tokens = 16;
  r.kv_bytes_per_block = 2.5e6;
  auto engines = app::engine_configs(r);
  ASSERT_EQ(engines.size(), 3u);
  EXPECT_EQ(engines[0].support, "kvpolicy");
  EXPECT_NE(engines[0].config.find("\"eviction_policy\":\"kvp:s3fifo\""), std::string::npos);
  EXPECT_NE(engines[0].config.find("\"cpu_bytes_to_use\":2500000000"), std::string::npos);
  EXPECT_NE(engines[1].config.find("KVPOLICY_SGLANG_SPEC='s3fifo'"), std::string::npos);
  EXPECT_NE(engines[1].config.find("--radix-cache-backend kvpolicy"), std::string::npos);
  EXPECT_NE(engines[2].config.find("eviction_policy: \"kvp:s3fifo\""), std::string::npos);
  // LRU is every engine's own: no plugin, and the adapter form as the alternative.
  r.policy = "lru";
  engines = app::engine_configs(r);
  for (const auto& e : engines) EXPECT_EQ(e.support, "native") << e.engine;
  EXPECT_NE(engines[0].alternative.find("kvp:lru"), std::string::npos);
  EXPECT_EQ(engines[1].config, "--radix-eviction-policy lru");
}

// auto hears every request with each candidate, so it reads what they read: with wa among them
// LMCache (no request field) cannot run it; with field-free candidates every engine can.
TEST(EngineMatrix, AutoReadsWhatItsCandidatesRead) {
  app::Recommendation r;
  r.capacity_blocks = 64;
  r.block_tokens = 16;
  r.policy = "auto";
  EXPECT_EQ(app::engine_configs(r)[2].support, "cannot");
  EXPECT_NE(app::engine_configs(r)[2].why.find("category"), std::string::npos);
  r.policy = "auto:candidates=lru|s3fifo|gdsf";
  for (const app::EngineConfig& e : app::engine_configs(r))
    EXPECT_EQ(e.support, "kvpolicy") << e.engine << ": " << e.why;
}

bool registered(const std::string& name) {
  auto names = PolicyRegistry::instance().names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// SGLang's own slru takes its threshold through --radix-eviction-policy-config; a parameter its
// own policy lacks (priority's combine=last) moves the policy to kvpolicy's backend; hpt is a
// score strategy of kvpolicy's plugin.
TEST(EngineMatrix, SglangFormsFollowTheParameters) {
  if (!registered("slru") || !registered("priority") || !registered("hpt"))
    GTEST_SKIP() << "slru, priority or hpt is not registered in this build";
  app::Recommendation r;
  r.capacity_blocks = 64;
  r.block_tokens = 16;
  r.policy = "slru:protected_threshold=4";
  app::EngineConfig e = app::engine_configs(r)[1];
  EXPECT_EQ(e.support, "native");
  EXPECT_EQ(e.config,
            "--radix-eviction-policy slru --radix-eviction-policy-config "
            "'{\"protected_threshold\":4}'");
  EXPECT_NE(e.requires_version.find("#37795"), std::string::npos);
  r.policy = "priority:combine=last";
  EXPECT_EQ(app::engine_configs(r)[1].support, "kvpolicy");
  r.policy = "priority";
  auto engines = app::engine_configs(r);
  EXPECT_EQ(engines[1].config, "--radix-eviction-policy priority");
  EXPECT_EQ(engines[0].support, "cannot");  // vLLM passes no request priority
  r.policy = "hpt";
  e = app::engine_configs(r)[1];
  EXPECT_EQ(e.support, "score");
  EXPECT_EQ(e.config, "SGLANG_PLUGINS=kvpolicy --radix-eviction-policy kvp_hpt");
}

}  // namespace
}  // namespace kvpolicy
