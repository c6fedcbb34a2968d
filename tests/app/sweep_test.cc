// The one sweep every command goes through (app::run_sweep): threads, shards, resume, results
// file.
#include "kvpolicy/app/sweep.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "kvpolicy/app/replay.h"
#include "kvpolicy/app/serve.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/route/router.h"
#include "kvpolicy/trace/generators.h"
#include "support/fake_comm.h"
#include "support/random_workload.h"

namespace kvpolicy::app {
namespace {

std::vector<SweepConfig> replay_grid() {
  std::vector<SweepConfig> configs;
  for (size_t cap : {10, 30})
    for (const char* p : {"lru", "belady", "rlt"}) {
      SweepConfig c;
      c.policy = {p, ""};
      c.capacity_blocks = cap;
      c.options.seed = 7;
      configs.push_back(c);
    }
  return configs;
}

SweepSettings settings(unsigned jobs, const std::string& json = "", bool resume = false) {
  SweepSettings s;
  s.jobs = jobs;
  s.json_path = json;
  s.resume = resume;
  s.what = "test";
  return s;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// A replay grid through the one sweep, as simulate runs it on one process.
std::vector<ReplayResult> replay(const Trace& t, const std::vector<SweepConfig>& configs,
                                 unsigned jobs, const std::string& json = "", bool resume = false) {
  ReplayCells cells(t, configs);
  return run_sweep(replay_sweep(cells, json), settings(jobs, json, resume));
}

TEST(AppSweep, ThreadsGiveTheSerialResultsInConfigurationOrder) {
  Trace t = testing::random_workload({.seed = 3});
  ReplayCells cells(t, replay_grid());
  auto serial = run_sweep(replay_sweep(cells, ""), settings(1));
  // The results file too, whichever thread finished first.
  std::string path = ::testing::TempDir() + "/app_sweep_threads.jsonl";
  std::remove(path.c_str());
  auto parallel = run_sweep(replay_sweep(cells, path), settings(2, path));
  ASSERT_EQ(parallel.size(), cells.size());
  auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), cells.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    EXPECT_EQ(result_key(parse_result_json(lines[i], path, i + 1)), cells.key(i)) << i;
    EXPECT_EQ(result_key(parallel[i]), cells.key(i)) << i;
    EXPECT_EQ(parallel[i].block_hits, serial[i].block_hits) << i;
    EXPECT_EQ(parallel[i].evictions, serial[i].evictions) << i;
  }
}

TEST(AppSweep, ShardsRunTheirCellsAndTheirFilesConcatenateIntoTheWholes) {
  Trace t = testing::random_workload({.seed = 4});
  ReplayCells cells(t, replay_grid());
  Sweep<ReplayResult> sweep = replay_sweep(cells, "");
  std::vector<std::string> keys;
  for (uint32_t i = 0; i < 2; ++i) {
    std::string path = ::testing::TempDir() + "/app_sweep_shard" + std::to_string(i) + ".jsonl";
    std::remove(path.c_str());
    SweepSettings s = settings(2, path);
    s.where.shard = {i, 2};
    s.where.sharded = true;
    auto results = run_sweep(replay_sweep(cells, path), s);
    auto mine = cells_of_shard(sweep.cells, s.where.shard);
    ASSERT_EQ(results.size(), mine.size());
    auto lines = lines_of(path);
    ASSERT_EQ(lines.size(), mine.size());
    for (size_t k = 0; k < mine.size(); ++k) {
      EXPECT_EQ(result_key(results[k]), cells.key(mine[k]));
      keys.push_back(result_key(parse_result_json(lines[k], path, k + 1)));
    }
  }
  ASSERT_EQ(keys.size(), cells.size());
  for (size_t i = 0; i < cells.size(); ++i) EXPECT_EQ(keys[i], cells.key(i)) << i;
}

using kvpolicy::testing::FakeComm;
using kvpolicy::testing::FakeWorld;

// Under an mpirun, rank 0 reads every row back (its own too) and the workers run what it hands
// out: the same results as threads here, the file in configuration order, the transport ended on
// every rank.
TEST(AppSweep, RanksGiveTheResultsOfThreadsAndEndTheTransport) {
  Trace t = testing::random_workload({.seed = 8});
  ReplayCells cells(t, replay_grid());
  auto here = run_sweep(replay_sweep(cells, ""), settings(1));
  std::string path = ::testing::TempDir() + "/app_sweep_ranks.jsonl";
  std::remove(path.c_str());
  FakeWorld world(3);
  std::atomic<int> ended = 0;
  std::vector<std::thread> workers;
  for (int r = 1; r < 3; ++r)
    workers.emplace_back([&, r] {
      FakeComm comm(world, r);
      SweepPlacement where;
      where.comm = &comm;
      where.end_comm = [&] { ++ended; };
      ASSERT_TRUE(where.worker());
      work_on_rank(where, [&] { return [&](size_t i) { return cells.run(i).to_json(); }; });
    });
  FakeComm comm(world, 0);
  SweepSettings s = settings(1, path);
  s.where.comm = &comm;
  s.where.end_comm = [&] { ++ended; };
  auto ranked = run_sweep(replay_sweep(cells, path), s);
  for (auto& w : workers) w.join();
  EXPECT_EQ(ended, 3);
  ASSERT_EQ(ranked.size(), here.size());
  auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), here.size());
  for (size_t i = 0; i < here.size(); ++i) {
    EXPECT_EQ(result_key(ranked[i]), cells.key(i)) << i;
    EXPECT_EQ(ranked[i].block_hits, here[i].block_hits) << i;
    EXPECT_EQ(ranked[i].evictions, here[i].evictions) << i;
    EXPECT_EQ(result_key(parse_result_json(lines[i], path, i + 1)), cells.key(i)) << i;
  }
}

TEST(AppSweep, ServeResumesWithoutRerunningFinishedConfigurations) {
  ConversationParams cp;
  cp.sessions = 40;
  Trace trace = generate_conversation(cp, 6);
  std::vector<ServeOptions> configs;
  for (const char* router : {"round_robin", "least_loaded", "lbgr"}) {
    ServeOptions o;
    o.workers = 2;
    o.router = parse_router_spec(router);
    o.capacity_blocks = 3000;
    configs.push_back(o);
  }
  std::string path = ::testing::TempDir() + "/app_serve_sweep.jsonl";
  std::remove(path.c_str());
  std::vector<ServeOptions> first_two = {configs[0], configs[1]};
  auto first = run_sweep(serve_cells(trace, first_two, path), settings(2, path));
  // A kill mid-write leaves a torn line; resuming cuts it off and keeps the finished results.
  { std::ofstream(path, std::ios::app) << "{\"mode\":\"serve\",\"trace\""; }
  auto all = run_sweep(serve_cells(trace, configs, path), settings(2, path, true));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_NEAR(all[0].ttft_ms.p99, first[0].ttft_ms.p99, 1e-3);  // read back from the file
  EXPECT_EQ(all[1].block_hits, first[1].block_hits);
  EXPECT_EQ(all[2].router, "lbgr");
  auto lines = lines_of(path);
  for (size_t i = 0; i < lines.size(); ++i)
    EXPECT_NO_THROW(parse_serve_result(lines[i], path, i + 1)) << lines[i];
  EXPECT_EQ(lines.size(), 3u);  // a re-run would have appended the first two again
}

// A results file that cannot be written (a full disk) is an error, never a silent loss.
TEST(AppSweep, AFailedWriteIsAnError) {
  Trace trace = testing::random_workload({.seed = 5});
  ServeOptions o;
  o.capacity_blocks = 100;
  std::vector<ServeOptions> configs = {o};
  try {
    run_sweep(serve_cells(trace, configs, "/dev/full"), settings(1, "/dev/full"));
    ADD_FAILURE() << "no error writing to /dev/full";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
  }
}

TEST(AppSweep, ReplayResumeKeepsFinishedResultsAndRepairsATornLine) {
  Trace t = testing::random_workload({.seed = 5});
  auto configs = replay_grid();
  std::string path = ::testing::TempDir() + "/app_sweep_resume.jsonl";
  std::remove(path.c_str());
  auto fresh = replay(t, configs, 1, path);
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
  auto resumed = replay(t, configs, 2, path, true);
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

// Issue 32: the trace at the same path changed (300 requests, then 3,000) and --resume reported
// the old trace's rows as the new one's. The key holds the trace's fingerprint: the stale rows
// are refused, naming both contents, and the file is left as it was.
TEST(AppSweep, ReplayResumeRefusesRowsOfAChangedTrace) {
  std::string trace_path = ::testing::TempDir() + "/app_sweep_t.kvtrace";
  Trace before = testing::random_workload({.seed = 5, .requests = 300});
  before.name = trace_path;
  auto configs = replay_grid();
  std::string path = ::testing::TempDir() + "/app_sweep_changed.jsonl";
  std::remove(path.c_str());
  replay(before, configs, 1, path);
  auto rows = lines_of(path);
  Trace after = testing::random_workload({.seed = 5, .requests = 3000});
  after.name = trace_path;
  try {
    replay(after, configs, 1, path, true);
    ADD_FAILURE() << "rows of the 300-request trace were resumed for the 3,000-request one";
  } catch (const InputError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("300 requests"), std::string::npos) << what;
    EXPECT_NE(what.find("3000 requests"), std::string::npos) << what;
    EXPECT_EQ(e.field(), "trace_fingerprint");
  }
  EXPECT_EQ(lines_of(path), rows);
  // The same content resumes every row.
  auto again = replay(before, configs, 1, path, true);
  EXPECT_EQ(lines_of(path), rows);
}

// A results file that cannot be written (a full disk) is an error, never a silent loss.
TEST(AppSweep, ReplayAFailedWriteIsAnError) {
  Trace trace = testing::random_workload({.requests = 50});
  try {
    replay(trace, replay_grid(), 2, "/dev/full");
    ADD_FAILURE() << "no error writing to /dev/full";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvpolicy::app
