#include "kvpolicy/sim/sweep.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kvpolicy/core/error.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

std::vector<SweepConfig> grid() {
  std::vector<SweepConfig> configs;
  for (size_t cap : {10, 30}) {
    for (const char* p : {"lru", "belady", "rlt"}) {
      SweepConfig c;
      c.policy = {p, ""};
      c.capacity_blocks = cap;
      c.options.seed = 7;
      configs.push_back(c);
    }
  }
  return configs;
}

TEST(Sweep, ParallelRunsEqualSerialOnesInConfigurationOrder) {
  Trace t = testing::random_workload({.seed = 3});
  auto configs = grid();
  auto serial = run_sweep(t, configs, 1);
  auto parallel = run_sweep(t, configs, 2);
  ASSERT_EQ(serial.size(), configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    EXPECT_EQ(parallel[i].policy, configs[i].policy.name);
    EXPECT_EQ(parallel[i].capacity_blocks, configs[i].capacity_blocks);
    EXPECT_EQ(parallel[i].block_hits, serial[i].block_hits);
    EXPECT_EQ(parallel[i].evictions, serial[i].evictions);
  }
}

TEST(Sweep, CellsKnowTheirKeyBeforeRunningAndWeighTheFutureDouble) {
  Trace t = testing::random_workload({.seed = 6});
  ReplayCells cells(t, grid());  // lru, belady, rlt at two capacities
  auto results = run_sweep(t, grid(), 1);
  ASSERT_EQ(cells.size(), results.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    EXPECT_EQ(cells.key(i), result_key(results[i])) << i;
    ReplayResult r = cells.run(i);
    EXPECT_EQ(result_key(r), cells.key(i));
    EXPECT_EQ(r.block_hits, results[i].block_hits) << i;
    EXPECT_EQ(r.infinite_hit_rate, results[i].infinite_hit_rate);
  }
  double accesses = double(t.num_block_accesses());
  EXPECT_EQ(cells.weight(0), accesses);      // lru
  EXPECT_EQ(cells.weight(1), 2 * accesses);  // belady reads the future
  EXPECT_EQ(cells.weight(2), accesses);      // rlt
}

TEST(Sweep, ResultLinesRoundTrip) {
  Trace t = testing::random_workload({.seed = 4});
  auto r = run_sweep(t, grid(), 1)[1];
  ReplayResult back = parse_result_json(r.to_json(), "x", 1);
  EXPECT_EQ(result_key(back), result_key(r));
  EXPECT_EQ(back.block_hits, r.block_hits);
  EXPECT_DOUBLE_EQ(back.block_hit_rate, std::stod(fmt::format("{:.6f}", r.block_hit_rate)));
  EXPECT_THROW(parse_result_json(R"({"trace":1})", "f.jsonl", 3), InputError);
}

TEST(Sweep, ResultsSayWhetherThePolicyReadsTheFuture) {
  Trace t = testing::random_workload({.seed = 4});
  auto rows = run_sweep(t, grid(), 1);  // lru, belady, rlt at two capacities
  EXPECT_FALSE(rows[0].offline);
  EXPECT_TRUE(rows[1].offline);
  EXPECT_FALSE(rows[2].offline);
  EXPECT_TRUE(parse_result_json(rows[1].to_json(), "x", 1).offline);
  // Lines written before the field existed read as online.
  std::string old = rows[1].to_json();
  old.erase(old.find("\"offline\":true,"), std::string("\"offline\":true,").size());
  EXPECT_FALSE(parse_result_json(old, "x", 1).offline);
}

// A learned row whose model never fitted looked like any other (issue 32, item 8). WA refits
// every refit_s of trace time: beyond the trace's span it never fits, and the row says so.
TEST(Sweep, ResultsSayWhetherThePolicysModelWasEverFitted) {
  Trace t = testing::random_workload({.seed = 4});
  auto row = [&](const char* policy, const char* params) {
    SweepConfig c;
    c.policy = {policy, params};
    c.capacity_blocks = 30;
    return run_sweep(t, {c}, 1)[0];
  };
  ReplayResult never = row("wa", "refit_s=1000000000");
  ASSERT_TRUE(never.model_fitted().has_value());
  EXPECT_FALSE(*never.model_fitted());
  EXPECT_NE(never.to_json().find(R"("model_fitted":false)"), std::string::npos);
  EXPECT_EQ(parse_result_json(never.to_json(), "x", 1).model_fitted(), std::optional(false));
  EXPECT_EQ(row("wa", "refit_s=0.001").model_fitted(), std::optional(true));
  ReplayResult lru = row("lru", "");
  EXPECT_FALSE(lru.model_fitted().has_value()) << "no model";
  EXPECT_EQ(lru.to_json().find("model_fitted"), std::string::npos);
}

}  // namespace
}  // namespace kvpolicy
