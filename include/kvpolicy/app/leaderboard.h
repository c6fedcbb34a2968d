// The cross-trace evaluation both front ends run (`kvpolicy leaderboard`, kvpolicy.leaderboard):
// every deployable policy on several traces at several capacities, in one replay sweep, each
// cell's margin over LRU and over the best seed policy (the papers' deployable policies), wins
// per trace and a summary per policy (docs/formats.md, "leaderboard --board-json").
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kvpolicy/app/inputs.h"
#include "kvpolicy/app/replay.h"
#include "kvpolicy/trace/result_field.h"

namespace kvpolicy::app {

// The seed policies' default: the five papers' policies in their deployable forms (LPC only where
// the trace carries classifier scores).
inline constexpr const char* kDefaultSeeds =
    "wa,tlru,rlt,laru:predictor=reuse,fpb:predictor=reuse,lpc";

// One item of --traces: `[label=]source[@format]`, the source a file or a built-in workload
// (`builtin`, the conversation workload of `compare`; `builtin:KIND`, a `trace generate` kind
// with its defaults). The label names the trace in every row; by default the file's name
// without its directory and extensions, or the source for a built-in.
struct BoardTrace {
  std::string label;
  std::string source;
  std::string format;  // empty: the global format
  bool builtin() const;
};
// Parses the comma-separated list; throws ConfigError naming the item (an empty list or item, a
// bad or repeated label).
std::vector<BoardTrace> parse_board_traces(const std::string& text);

struct LeaderboardOptions {
  std::string traces;
  TraceOptions load;  // format (the default of items without @format), sessions, skip, ...
  std::string capacities = "2%,5%,10%,20%";
  std::string policies = "online";
  std::string seeds = kDefaultSeeds;
  CostOptions cost;
  uint64_t seed = 1;  // built-in workloads and randomized policies
  // A cell is won by more than this many points over LRU and over every other seed policy; 0:
  // by more block hits (a handful of hits on a large trace counts).
  double min_margin_pt = 0;
  GridOptions grid;  // jobs, --json (replay rows, streamed) and --resume
  // The front end's other outputs, (flag, path): refused, with grid.json_path, when one is a
  // trace of the list (the command line compares its file options itself, not inside a list).
  std::vector<std::pair<std::string, std::string>> outputs;
};

// One policy at one (trace, capacity). Margins are in percentage points of block hit rate.
struct BoardCell {
  std::string trace, policy, capacity;  // capacity as written ("5%")
  size_t capacity_blocks = 0;
  bool is_seed = false;
  double hit_rate = 0, lru_hit_rate = 0, belady_hit_rate = -1;  // < 0: no Belady row
  std::string best_seed;           // the best seed policy but this one ("" when none ran)
  double best_seed_hit_rate = -1;  // < 0 when none
  double margin_lru_pt = 0;
  double margin_seed_pt = 0;  // 0 when no seed policy ran
  bool beats_lru = false, beats_seeds = false, win = false;
  double gap_closed = -1;  // (hit - LRU) / (Belady - LRU); < 0 when the gap is under 0.1 pt
};

// One policy on one trace.
struct BoardTraceRow {
  std::string trace, policy;
  bool is_seed = false;
  uint32_t sizes = 0, wins = 0, wins_needed = 0;
  bool counts = false;  // wins >= wins_needed
  double worst_margin_lru_pt = 0, mean_margin_lru_pt = 0, mean_margin_seed_pt = 0;
};

// One policy over every trace.
struct BoardSummary {
  std::string policy;
  bool is_seed = false;
  uint32_t traces = 0, traces_won = 0, sizes = 0, wins_needed = 0;
  double min_margin_pt = 0;  // the margin a win needs (LeaderboardOptions)
  double worst_margin_lru_pt = 0, mean_margin_lru_pt = 0, mean_margin_seed_pt = 0;
  std::string worst_cell;  // "trace at 5%"
  std::string statement;   // "beats LRU and every seed policy at >= 3 of 4 sizes on N of T traces"
};

struct BoardTraceInfo {
  std::string label, source, name;  // name: the trace's own (file or generator)
  size_t unique_blocks = 0;
  std::vector<size_t> capacity_blocks;  // each capacity resolved against it
  uint64_t requests = 0, block_accesses = 0;
  bool has_scores = false;
  std::string skipped;  // policies it could not feed, and why
};

struct Leaderboard {
  std::vector<BoardTraceInfo> traces;
  std::vector<std::string> capacities;  // as written
  std::vector<std::string> seeds;       // seed labels as given (after checking)
  uint32_t wins_needed = 0;
  double min_margin_pt = 0;
  std::vector<ReplayResult> results;  // every replay, in configuration order
  std::vector<BoardCell> cells;       // trace outer, then capacity, then policy
  std::vector<BoardTraceRow> per_trace;
  std::vector<BoardSummary> summary;  // ranked: traces_won, then mean margin over LRU
};

// The rule: a trace counts for a policy when it wins at >= ceil(3/4 of the sizes) (3 of 4).
uint32_t board_wins_needed(size_t sizes);

// Loads every trace, replays every (trace, policy, capacity) cell in one sweep (progress line,
// --json rows streamed, --resume), then ranks. Throws ConfigError/InputError naming the argument
// before anything is written.
Leaderboard run_leaderboard(const LeaderboardOptions& o);

// The ranking from replay rows (used by run_leaderboard; public for tests): `results` hold each
// trace's rows (ReplayResult::trace is its label) at its capacity_blocks, `seeds` the seed
// labels. LRU's row must be there at every cell; Belady's is optional.
Leaderboard rank_leaderboard(std::vector<BoardTraceInfo> traces,
                             std::vector<std::string> capacities, std::vector<std::string> seeds,
                             std::vector<ReplayResult> results, double min_margin_pt = 0);

// The readable tables (a string, so Python can print it too).
std::string leaderboard_text(const Leaderboard& b);

// The --board-json rows: kind "cell", "trace" and "summary" (docs/formats.md).
std::vector<std::string> leaderboard_rows(const Leaderboard& b);
const std::vector<ResultFieldOf<BoardCell>>& board_cell_fields();
const std::vector<ResultFieldOf<BoardTraceRow>>& board_trace_fields();
const std::vector<ResultFieldOf<BoardSummary>>& board_summary_fields();

}  // namespace kvpolicy::app
