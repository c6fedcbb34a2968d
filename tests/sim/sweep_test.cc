#include "kvpolicy/sim/sweep.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

SweepOptions options(unsigned jobs, const std::string& json = "", bool resume = false) {
  SweepOptions o;
  o.jobs = jobs;
  o.json_path = json;
  o.resume = resume;
  return o;
}

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "kvpolicy-sweep-test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TEST(Sweep, ParallelRunsEqualSerialOnesInConfigurationOrder) {
  Trace t = testing::random_workload({.seed = 3});
  auto configs = grid();
  auto serial = run_sweep(t, configs, options(1));
  auto parallel = run_sweep(t, configs, options(2));
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
  auto results = run_sweep(t, grid(), options(1));
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
  auto r = run_sweep(t, grid(), options(1))[1];
  ReplayResult back = parse_result_json(r.to_json(), "x", 1);
  EXPECT_EQ(result_key(back), result_key(r));
  EXPECT_EQ(back.block_hits, r.block_hits);
  EXPECT_DOUBLE_EQ(back.block_hit_rate, std::stod(fmt::format("{:.6f}", r.block_hit_rate)));
  EXPECT_THROW(parse_result_json(R"({"trace":1})", "f.jsonl", 3), InputError);
}

TEST(Sweep, ResultsSayWhetherThePolicyReadsTheFuture) {
  Trace t = testing::random_workload({.seed = 4});
  auto rows = run_sweep(t, grid(), options(1));  // lru, belady, rlt at two capacities
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
    return run_sweep(t, {c}, options(1))[0];
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

TEST(Sweep, ResumeKeepsFinishedResultsAndRepairsATornLine) {
  Trace t = testing::random_workload({.seed = 5});
  auto configs = grid();
  std::string path = temp_path("resume.jsonl");
  std::filesystem::remove(path);
  auto fresh = run_sweep(t, configs, options(1, path));
  auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), configs.size());

  // An interrupted run: two results were written, the third was cut off mid-line. The first
  // is doctored so that reusing it (rather than recomputing it) shows.
  ReplayResult first = parse_result_json(lines[0], path, 1);
  first.block_hits = 123456;
  {
    std::ofstream out(path, std::ios::trunc);
    out << first.to_json() << '\n' << lines[1] << '\n' << lines[2].substr(0, 40);
  }
  auto resumed = run_sweep(t, configs, options(2, path, true));
  size_t i0 = 0;
  while (result_key(fresh[i0]) != result_key(first)) ++i0;
  EXPECT_EQ(resumed[i0].block_hits, 123456u);  // kept, not recomputed
  for (size_t i = 0; i < configs.size(); ++i)
    if (i != i0) EXPECT_EQ(resumed[i].block_hits, fresh[i].block_hits) << i;
  auto after = lines_of(path);
  ASSERT_EQ(after.size(), configs.size());  // 2 kept + 4 new, the torn line gone
  for (size_t i = 0; i < after.size(); ++i)
    EXPECT_NO_THROW(parse_result_json(after[i], path, i + 1));
}

// A results file that cannot be written (a full disk) is an error, never a silent loss.
TEST(Sweep, AFailedWriteIsAnError) {
  Trace trace = testing::random_workload({.requests = 50});
  try {
    run_sweep(trace, grid(), options(2, "/dev/full"));
    ADD_FAILURE() << "no error writing to /dev/full";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvpolicy
