// The leaderboard (app/leaderboard.h): its --traces list, the 3-of-4 rule, the ranking on rows
// whose answer is known by construction, and a run on small generated traces whose margins must
// be the differences of direct replays of the same cells.
#include "kvpolicy/app/leaderboard.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::app {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("kvpolicy-board-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

// A small conversation trace written as a native file (sessions and turns from the generator).
std::string small_trace(const std::string& name, uint64_t seed) {
  Trace t = generate_workload("conversation",
                              "sessions=60,max_active=20,system_prompts=4,think_s=20", seed);
  std::string path = temp_path(name + ".kvtrace");
  write_native(t, path);
  return path;
}

std::string error_of(const std::string& text) {
  try {
    parse_board_traces(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Leaderboard, ParsesTraceItems) {
  std::string path = small_trace("parse", 1);
  auto items = parse_board_traces("a=" + path + "@native," + path + ",builtin,g=builtin:gsp");
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[0].label, "a");
  EXPECT_EQ(items[0].source, path);
  EXPECT_EQ(items[0].format, "native");
  EXPECT_EQ(items[1].label, fs::path(path).filename().string().substr(
                                0, fs::path(path).filename().string().find('.')));
  EXPECT_EQ(items[1].format, "");
  EXPECT_TRUE(items[2].builtin());
  EXPECT_EQ(items[2].label, "builtin");
  EXPECT_EQ(items[3].label, "g");
  EXPECT_EQ(items[3].source, "builtin:gsp");
  fs::remove(path);
}

TEST(Leaderboard, RefusesBadTraceItemsNamingThem) {
  std::string path = small_trace("bad", 1);
  EXPECT_NE(error_of("").find("--traces: the list is empty"), std::string::npos);
  EXPECT_NE(error_of(" , ").find("the list is empty"), std::string::npos);
  EXPECT_NE(error_of("a=" + path + ",,b=" + path).find("an empty item"), std::string::npos);
  EXPECT_NE(error_of("no/such.jsonl").find("no such file 'no/such.jsonl'"), std::string::npos);
  EXPECT_NE(error_of("a b=" + path).find("bad label 'a b'"), std::string::npos);
  EXPECT_NE(error_of("=" + path).find("bad label ''"), std::string::npos);
  EXPECT_NE(error_of("x=" + path + ",x=" + path).find("the label 'x' is given twice"),
            std::string::npos);
  EXPECT_NE(error_of(path + "," + path).find("given twice"), std::string::npos);
  EXPECT_NE(error_of("builtin:nope").find("no built-in workload 'nope'"), std::string::npos);
  EXPECT_NE(error_of("builtin@native").find("takes no @format"), std::string::npos);
  fs::remove(path);
}

TEST(Leaderboard, ThreeOfFourRule) {
  EXPECT_EQ(board_wins_needed(4), 3u);
  EXPECT_EQ(board_wins_needed(1), 1u);
  EXPECT_EQ(board_wins_needed(2), 2u);
  EXPECT_EQ(board_wins_needed(3), 3u);
  EXPECT_EQ(board_wins_needed(5), 4u);
  EXPECT_EQ(board_wins_needed(8), 6u);
}

ReplayResult row(const std::string& trace, const std::string& policy, size_t cap, uint64_t hits,
                 bool offline = false) {
  ReplayResult r;
  r.trace = trace;
  auto colon = policy.find(':');
  r.policy = policy.substr(0, colon);
  r.params = colon == std::string::npos ? "" : policy.substr(colon + 1);
  r.capacity_blocks = cap;
  r.block_accesses = 1000;
  r.block_hits = hits;
  r.block_hit_rate = double(hits) / 1000;
  r.offline = offline;
  return r;
}

// Rows whose answer is known: `twin` is LRU renamed (it must never win), `good` beats LRU and
// both seeds at 3 of 4 sizes on trace a and at 2 of 4 on trace b, `bad` loses 5 points once.
TEST(Leaderboard, RanksRowsWhoseAnswerIsKnown) {
  std::vector<ReplayResult> rows;
  const std::vector<size_t> caps = {10, 20, 30, 40};
  //                      lru  twin  s1   s2   good bad  belady
  const uint64_t a[4][7] = {{100, 100, 110, 105, 120, 100, 200},
                            {200, 200, 210, 220, 230, 150, 300},
                            {300, 300, 290, 280, 299, 300, 400},
                            {400, 400, 390, 410, 415, 401, 500}};
  const uint64_t b[4][7] = {{100, 100, 110, 105, 111, 100, 200},
                            {200, 200, 210, 220, 219, 200, 300},
                            {300, 300, 290, 280, 301, 300, 400},
                            {400, 400, 390, 410, 405, 400, 500}};
  const char* names[7] = {"lru", "twin", "s1", "s2:x=1", "good", "bad", "belady"};
  for (int k = 0; k < 4; ++k)
    for (int p = 0; p < 7; ++p) {
      rows.push_back(row("a", names[p], caps[k], a[k][p], p == 6));
      rows.push_back(row("b", names[p], caps[k], b[k][p], p == 6));
    }
  std::vector<BoardTraceInfo> traces(2);
  traces[0].label = "a";
  traces[1].label = "b";
  traces[0].capacity_blocks = traces[1].capacity_blocks = caps;
  Leaderboard board = rank_leaderboard(traces, {"1%", "2%", "3%", "4%"}, {"s1", "s2:x=1"}, rows);
  EXPECT_EQ(board.wins_needed, 3u);

  auto cell = [&](const std::string& t, const std::string& p, const std::string& c) {
    for (auto& x : board.cells)
      if (x.trace == t && x.policy == p && x.capacity == c) return x;
    ADD_FAILURE() << "no cell " << t << " " << p << " " << c;
    return BoardCell{};
  };
  auto summary = [&](const std::string& p) {
    for (auto& s : board.summary)
      if (s.policy == p) return s;
    ADD_FAILURE() << "no summary for " << p;
    return BoardSummary{};
  };
  // LRU renamed: margins 0, never a win, and the reference rows are not ranked.
  for (auto& c : board.cells) {
    EXPECT_NE(c.policy, "belady");
    if (c.policy == "twin" || c.policy == "lru") {
      EXPECT_DOUBLE_EQ(c.margin_lru_pt, 0.0);
      EXPECT_FALSE(c.win);
    }
  }
  EXPECT_EQ(summary("twin").traces_won, 0u);
  // Margins in points; the best seed per cell; a seed measured against the other seed only.
  BoardCell g = cell("a", "good", "1%");
  EXPECT_NEAR(g.margin_lru_pt, 2.0, 1e-9);
  EXPECT_EQ(g.best_seed, "s1");
  EXPECT_NEAR(g.margin_seed_pt, 1.0, 1e-9);
  EXPECT_TRUE(g.win);
  EXPECT_NEAR(g.gap_closed, 0.2, 1e-9);
  EXPECT_NEAR(g.belady_hit_rate, 0.2, 1e-12);
  BoardCell g3 = cell("a", "good", "3%");  // beats both seeds, not LRU
  EXPECT_TRUE(g3.beats_seeds);
  EXPECT_FALSE(g3.beats_lru);
  EXPECT_FALSE(g3.win);
  BoardCell s1 = cell("a", "s1", "1%");
  EXPECT_EQ(s1.best_seed, "s2:x=1");
  EXPECT_NEAR(s1.margin_seed_pt, 0.5, 1e-9);
  EXPECT_TRUE(s1.win);
  EXPECT_TRUE(s1.is_seed);
  // Per trace: good counts on a (3 of 4), not on b (2 of 4).
  for (auto& t : board.per_trace) {
    if (t.policy != "good") continue;
    EXPECT_EQ(t.wins, t.trace == "a" ? 3u : 2u) << t.trace;
    EXPECT_EQ(t.counts, t.trace == "a") << t.trace;
  }
  BoardSummary sg = summary("good");
  EXPECT_EQ(sg.traces, 2u);
  EXPECT_EQ(sg.traces_won, 1u);
  EXPECT_NEAR(sg.worst_margin_lru_pt, -0.1, 1e-9);
  EXPECT_EQ(sg.worst_cell, "a at 3%");
  EXPECT_NE(sg.statement.find(">= 3 of 4 sizes on 1 of 2 traces"), std::string::npos);
  EXPECT_NE(sg.statement.find("never more than 0.10 pt below LRU"), std::string::npos);
  BoardSummary sb = summary("bad");
  EXPECT_NEAR(sb.worst_margin_lru_pt, -5.0, 1e-9);
  // Ranked: traces won first, then mean margin over LRU.
  EXPECT_EQ(board.summary.front().policy, "good");
  // The rows: one per cell, per (policy, trace), per policy.
  auto json = leaderboard_rows(board);
  EXPECT_EQ(json.size(), board.cells.size() + board.per_trace.size() + board.summary.size());
  EXPECT_EQ(board.cells.size(), 2u * 4u * 6u);
  EXPECT_NE(json.front().find("\"kind\":\"cell\""), std::string::npos);
  EXPECT_NE(json.back().find("\"kind\":\"summary\""), std::string::npos);
  EXPECT_NE(leaderboard_text(board).find("good: beats LRU and every seed policy"),
            std::string::npos);

  // With a 1.5-point margin asked, good's wins on a by 1.0 and 0.5 points no longer count.
  Leaderboard strict =
      rank_leaderboard(traces, {"1%", "2%", "3%", "4%"}, {"s1", "s2:x=1"}, rows, 1.5);
  for (auto& t : strict.per_trace)
    if (t.policy == "good") EXPECT_EQ(t.wins, 0u) << t.trace;
  for (auto& s : strict.summary) {
    EXPECT_EQ(s.min_margin_pt, 1.5);
    if (s.policy == "good") EXPECT_NE(s.statement.find("by > 1.5 pt"), std::string::npos);
  }
}

// The margins the leaderboard reports are the differences of direct replays of the same cells,
// and --resume reruns nothing and gives the same board.
TEST(Leaderboard, MarginsAreDirectReplayDifferencesAndResumeKeepsThem) {
  std::string p1 = small_trace("t1", 3), p2 = small_trace("t2", 4);
  std::string json = temp_path("rows.jsonl");
  LeaderboardOptions o;
  o.traces = "one=" + p1 + ",two=" + p2 + "@native";
  o.capacities = "5%,10%,20%,40%";
  o.policies = "s3fifo,sieve,priority";  // priority without a priority column: LRU renamed
  o.seeds = "rlt,wa,lpc";  // lpc: the traces carry no scores, so it is left out (a note)
  o.grid.jobs = 2;
  o.grid.json_path = json;
  Leaderboard b = run_leaderboard(o);
  ASSERT_EQ(b.traces.size(), 2u);
  EXPECT_NE(b.traces[0].skipped.find("lpc"), std::string::npos);
  // lru, s3fifo, sieve, priority, rlt, wa, belady at 4 capacities on 2 traces.
  EXPECT_EQ(b.results.size(), 2u * 7u * 4u);
  size_t renamed = 0;
  for (const BoardCell& c : b.cells)
    if (c.policy == "priority") {
      ++renamed;
      EXPECT_EQ(c.margin_lru_pt, 0.0) << c.trace << " " << c.capacity;
      EXPECT_FALSE(c.beats_lru);
      EXPECT_FALSE(c.win);
    }
  EXPECT_EQ(renamed, 8u);
  for (const char* label : {"one", "two"}) {
    TraceOptions to;
    to.path = label == std::string("one") ? p1 : p2;
    Trace t = load_trace(to);
    GridOptions grid;
    grid.jobs = 2;
    std::vector<CapacitySpec> caps = capacity_specs(o.capacities);
    auto direct =
        run_grid(t, {{"lru", ""}, {"s3fifo", ""}, {"rlt", ""}, {"wa", ""}}, caps, 1, grid);
    auto hit = [&](const std::string& p, size_t k) {
      return direct[k * 4 + (p == "lru"      ? 0
                             : p == "s3fifo" ? 1
                             : p == "rlt"    ? 2
                                             : 3)]
          .block_hit_rate;
    };
    for (const BoardCell& c : b.cells) {
      if (c.trace != label || c.policy != "s3fifo") continue;
      size_t k =
          std::find(b.capacities.begin(), b.capacities.end(), c.capacity) - b.capacities.begin();
      ASSERT_LT(k, 4u);
      EXPECT_NEAR(c.margin_lru_pt, (hit("s3fifo", k) - hit("lru", k)) * 100, 1e-9);
      double best = std::max(hit("rlt", k), hit("wa", k));
      EXPECT_NEAR(c.margin_seed_pt, (hit("s3fifo", k) - best) * 100, 1e-9);
      EXPECT_EQ(c.best_seed, hit("rlt", k) >= hit("wa", k) ? "rlt" : "wa");
    }
  }
  // Resume: every cell's row is in the file, so nothing reruns and the board is the same.
  std::ifstream in(json);
  size_t lines = 0;
  for (std::string l; std::getline(in, l);) ++lines;
  EXPECT_EQ(lines, b.results.size());
  o.grid.resume = true;
  o.grid.jobs = 1;
  Leaderboard again = run_leaderboard(o);
  EXPECT_EQ(leaderboard_rows(again), leaderboard_rows(b));
  fs::remove(p1);
  fs::remove(p2);
  fs::remove(json);
}

}  // namespace
}  // namespace kvpolicy::app
