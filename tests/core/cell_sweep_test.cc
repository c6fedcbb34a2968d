#include "kvpolicy/core/cell_sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "kvpolicy/core/error.h"
#include "support/fake_comm.h"

namespace kvpolicy {
namespace {

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "kvpolicy-cell-sweep-test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Rows "key:payload"; the key is what precedes the colon.
std::string key_of(const ResultLine& line) {
  size_t colon = line.text.find(':');
  if (colon == std::string::npos) throw InputError("rows", line.line_no, "", "no key");
  return line.text.substr(0, colon);
}

TEST(CellSweep, LargestFirstKeepsConfigurationOrderAmongEqualWeights) {
  std::vector<double> w = {1, 3, 2, 3, 1};
  EXPECT_EQ(largest_first(w), (std::vector<size_t>{1, 3, 2, 0, 4}));
  EXPECT_TRUE(largest_first(std::vector<double>{}).empty());
}

TEST(CellSweep, ParseShardAcceptsOnlyIOverN) {
  Shard s = parse_shard("1/4");
  EXPECT_EQ(s.index, 1u);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(parse_shard("0/1").count, 1u);
  for (const char* bad : {"", "1", "/2", "1/", "2/2", "5/2", "-1/2", "1/0", "a/2", "1/2/3", " 1/2",
                          "1/2 ", "0/100001", "1.0/2"})
    EXPECT_THROW(parse_shard(bad), ConfigError) << bad;
  try {
    parse_shard("2/2");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--shard '2/2'"), std::string::npos) << e.what();
  }
}

// Shards are contiguous runs of configuration order: concatenating them in shard order gives
// configuration order back, and every cell is in exactly one.
void expect_contiguous(const std::vector<uint32_t>& of, uint32_t count) {
  for (size_t k = 1; k < of.size(); ++k) EXPECT_LE(of[k - 1], of[k]) << k;
  for (uint32_t s : of) EXPECT_LT(s, count);
}

TEST(CellSweep, ShardsSplitEqualWeightsEvenly) {
  std::vector<double> w(10, 1.0);
  auto of = shard_of_cells(w, 3);
  expect_contiguous(of, 3);
  std::map<uint32_t, int> sizes;
  for (uint32_t s : of) ++sizes[s];
  ASSERT_EQ(sizes.size(), 3u);
  for (auto& [s, n] : sizes) EXPECT_TRUE(n == 3 || n == 4) << s << ": " << n;
  for (uint32_t s : shard_of_cells(w, 1)) EXPECT_EQ(s, 0u);
}

TEST(CellSweep, ShardsBalanceWeight) {
  // One heavy cell first: it fills most of the first shard's share.
  std::vector<double> w = {8, 1, 1, 1, 1, 1, 1, 1, 1};
  auto of = shard_of_cells(w, 2);
  expect_contiguous(of, 2);
  EXPECT_EQ(of[0], 0u);
  EXPECT_EQ(of[1], 1u);  // 8 of 16 already on shard 0
  // Zero weights everywhere count as equal weights.
  auto flat = shard_of_cells(std::vector<double>(4, 0.0), 2);
  EXPECT_EQ(flat, (std::vector<uint32_t>{0, 0, 1, 1}));
  // More shards than cells: some stay empty, none is out of range.
  auto few = shard_of_cells(std::vector<double>(3, 1.0), 8);
  expect_contiguous(few, 8);
  EXPECT_EQ(std::set<uint32_t>(few.begin(), few.end()).size(), 3u);
  EXPECT_THROW(shard_of_cells(w, 0), ConfigError);
}

TEST(CellSweep, OrderResultsFilePutsKeysFirstAndKeepsTheRest) {
  std::string path = temp_path("order.jsonl");
  write(path, "c:3\nx:9\na:1\nb:2\na:1 again\n");
  std::vector<std::string> keys = {"a", "b", "c", "d"};
  order_results_file(path, keys, key_of);
  EXPECT_EQ(read(path), "a:1\nb:2\nc:3\nx:9\na:1 again\n");
  // Not a regular file: left as it was streamed.
  EXPECT_NO_THROW(order_results_file("/dev/null", keys, key_of));
  // A line that is no result is an error, and the file stays as it was.
  write(path, "a:1\nnot a row\n");
  EXPECT_THROW(order_results_file(path, keys, key_of), InputError);
  EXPECT_EQ(read(path), "a:1\nnot a row\n");
}

RowIdentity identify(const ResultLine& line, const std::string&) {
  std::string key = key_of(line);
  return {key, line.text.substr(key.size() + 1)};
}

TEST(CellSweep, MergeConcatenatesInTheOrderGiven) {
  std::string a = temp_path("m0.jsonl"), b = temp_path("m1.jsonl"), e = temp_path("m2.jsonl");
  write(a, "p:1\nq:2\n");
  write(b, "r:3\n\ns:4\n");
  write(e, "");
  std::vector<std::string> paths = {a, e, b};
  EXPECT_EQ(merge_result_files(paths, identify), "p:1\nq:2\nr:3\ns:4\n");
}

std::string merge_error(const std::vector<std::string>& paths) {
  try {
    merge_result_files(paths, identify);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CellSweep, MergeRefusesDuplicatesConflictsAndTornLines) {
  std::string a = temp_path("d0.jsonl"), b = temp_path("d1.jsonl");
  write(a, "p:1\nq:2\n");
  write(b, "r:3\nq:2\n");
  std::string dup = merge_error({a, b});
  EXPECT_NE(dup.find(b + ":2: duplicate row"), std::string::npos) << dup;
  EXPECT_NE(dup.find(a + ":2"), std::string::npos) << dup;
  EXPECT_NE(merge_error({a, a}).find("duplicate row"), std::string::npos);
  write(b, "q:5\n");
  std::string conflict = merge_error({a, b});
  EXPECT_NE(conflict.find(b + ":1: conflicting rows"), std::string::npos) << conflict;
  write(b, "r:3\ns:4");
  std::string torn = merge_error({a, b});
  EXPECT_NE(torn.find(b + ":2: the last line has no end"), std::string::npos) << torn;
  write(b, "r:3\nno key here\n");
  EXPECT_NE(merge_error({a, b}).find("rows:2"), std::string::npos);
  EXPECT_NE(merge_error({a, temp_path("absent.jsonl")}).find("cannot read"), std::string::npos);
}

using testing::FakeComm;
using testing::FakeWorld;

struct SweepRun {
  std::vector<std::string> rows;
  std::vector<std::pair<int, size_t>> ran;  // (rank, cell) in the order they started
};

// `ranks` ranks sweep `n` cells into `run`; the row of cell i is "k<i>:row <i>". Cell `fail`
// (if any) throws wherever it runs.
void sweep_into(SweepRun& run, int ranks, size_t n, const CoordinatorOptions& options,
                std::vector<double> weights = {}, size_t fail = SIZE_MAX) {
  std::vector<std::string> keys;
  for (size_t i = 0; i < n; ++i) keys.push_back("k" + std::to_string(i));
  if (weights.empty()) weights.assign(n, 1.0);
  FakeWorld world(ranks);
  std::mutex mu;
  auto cell = [&](int rank) {
    return [&, rank](size_t i) {
      {
        std::lock_guard lock(mu);
        run.ran.push_back({rank, i});
      }
      if (i == fail) throw Error("cell " + std::to_string(i) + " broke");
      // Let every rank get cells.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return "k" + std::to_string(i) + ":row " + std::to_string(i);
    };
  };
  std::vector<std::thread> workers;
  for (int r = 1; r < ranks; ++r)
    workers.emplace_back([&, r] {
      FakeComm comm(world, r);
      try {
        work_for_coordinator(comm, cell(r));
      } catch (const Error&) {
      }
    });
  FakeComm comm(world, 0);
  try {
    run.rows = coordinate_cells(comm, keys, weights, cell(0), options);
  } catch (...) {
    for (auto& t : workers) t.join();
    throw;
  }
  for (auto& t : workers) t.join();
}

SweepRun sweep(int ranks, size_t n, const CoordinatorOptions& options,
               std::vector<double> weights = {}) {
  SweepRun run;
  sweep_into(run, ranks, n, options, std::move(weights));
  return run;
}

CoordinatorOptions to_file(const std::string& path, bool resume = false) {
  CoordinatorOptions o;
  o.json_path = path;
  o.resume = resume;
  o.key_of = key_of;
  return o;
}

std::string expected_file(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += "k" + std::to_string(i) + ":row " + std::to_string(i) + "\n";
  return s;
}

TEST(CellSweep, RanksRunEveryCellOnceAndTheFileEndsInConfigurationOrder) {
  std::string path = temp_path("ranks.jsonl");
  write(path, "");
  size_t progress_calls = 0;
  CoordinatorOptions o = to_file(path);
  o.progress = [&](size_t done, size_t total) {
    ++progress_calls;
    EXPECT_EQ(total, 40u);
    EXPECT_LE(done, total);
  };
  SweepRun run = sweep(4, 40, o);
  ASSERT_EQ(run.rows.size(), 40u);
  for (size_t i = 0; i < 40; ++i)
    EXPECT_EQ(run.rows[i], "k" + std::to_string(i) + ":row " + std::to_string(i));
  EXPECT_EQ(run.ran.size(), 40u);
  std::set<size_t> cells;
  std::set<int> ranks;
  for (auto [rank, cell] : run.ran) {
    cells.insert(cell);
    ranks.insert(rank);
  }
  EXPECT_EQ(cells.size(), 40u);
  EXPECT_EQ(ranks.size(), 4u) << "rank 0 runs cells too, and every worker got some";
  EXPECT_EQ(progress_calls, 40u);
  EXPECT_EQ(read(path), expected_file(40));
}

TEST(CellSweep, OneRankRunsLargestCellsFirst) {
  std::vector<double> w = {1, 5, 2, 5, 3};
  SweepRun run = sweep(1, 5, CoordinatorOptions{}, w);
  std::vector<size_t> order;
  for (auto [rank, cell] : run.ran) order.push_back(cell);
  EXPECT_EQ(order, largest_first(w));
  EXPECT_EQ(run.rows.size(), 5u);
}

TEST(CellSweep, ResumeRunsOnlyTheMissingCells) {
  std::string path = temp_path("resume.jsonl");
  // Rows of an earlier run (one of another configuration), a torn last line.
  write(path, "k3:row 3\nother:x\nk0:row 0\nk5:ro");
  SweepRun run = sweep(3, 6, to_file(path, true));
  std::set<size_t> cells;
  for (auto [rank, cell] : run.ran) cells.insert(cell);
  EXPECT_EQ(cells, (std::set<size_t>{1, 2, 4, 5}));
  EXPECT_EQ(run.rows[3], "k3:row 3");
  EXPECT_EQ(read(path), expected_file(6) + "other:x\n");
}

TEST(CellSweep, AnErrorNamesItsRankAndKeepsFinishedRows) {
  std::string path = temp_path("error.jsonl");
  write(path, "");
  SweepRun run;
  std::string message;
  try {
    sweep_into(run, 3, 30, to_file(path), {}, 7);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("cell 7 broke"), std::string::npos) << message;
  int rank = -1;
  for (auto [r, cell] : run.ran)
    if (cell == 7) rank = r;
  if (rank > 0)
    EXPECT_NE(message.find("rank " + std::to_string(rank) + " failed"), std::string::npos)
        << message;
  // Every row written is whole, of a cell that finished, and cell 7 has none.
  std::ifstream in(path);
  size_t rows = 0;
  for (std::string line; std::getline(in, line); ++rows) {
    EXPECT_NE(line.find(":row "), std::string::npos) << line;
    EXPECT_NE(line.substr(0, 3), "k7:");
  }
  EXPECT_GE(rows, 1u);
}

}  // namespace
}  // namespace kvpolicy
