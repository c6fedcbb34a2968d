// `kvpolicy leaderboard`: every deployable policy on several traces at several capacities, its
// margin over LRU and over the best seed policy per cell, wins per trace and a ranked summary
// (app/leaderboard.h). Flags -> app -> print.
#include "kvpolicy/app/leaderboard.h"

#include <fmt/format.h>

#include <chrono>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/error.h"
#include "plot.h"
#include "report.h"

namespace kvpolicy::cli {
namespace {

struct LeaderboardArgs {
  app::LeaderboardOptions o;
  std::string board_json, plot_path, csv_path;
};

void run(const LeaderboardArgs& a) {
  auto start = std::chrono::steady_clock::now();
  app::LeaderboardOptions o = a.o;
  o.outputs = {{"--board-json", a.board_json}, {"--plot", a.plot_path}, {"--csv", a.csv_path}};
  app::Leaderboard b = app::run_leaderboard(o);
  fmt::print("{}", app::leaderboard_text(b));
  // The rows (and the figure drawn from them) are written whole once the ranking is done.
  write_rows_and_plot(app::leaderboard_rows(b), a.board_json, a.plot_path, "plot_leaderboard.py");
  if (!a.csv_path.empty()) write_csv(a.csv_path, b.results);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("\n{} replays on {} traces in {:.1f} s (seed {})\n", b.results.size(), b.traces.size(),
             secs, a.o.seed);
}

void add(CLI::App& app) {
  auto args = std::make_shared<LeaderboardArgs>();
  app::LeaderboardOptions& o = args->o;
  auto* cmd = app.add_subcommand(
      "leaderboard",
      "every deployable policy on several traces: margins over LRU and the best seed policy, "
      "wins per trace, a ranked summary");
  cmd->add_option("--traces,-T", o.traces,
                  "comma-separated [label=]path[@format], or `builtin` (compare's built-in "
                  "conversation workload) or builtin:KIND (a `trace generate` kind with its "
                  "defaults); the label names the trace in every row (default: the file name "
                  "without directory and extensions)")
      ->required();
  cmd->add_option("--format,-f", o.load.format,
                  "format of the items without @format (auto, or see `kvpolicy trace formats`)")
      ->capture_default_str();
  cmd->add_flag("--skip-bad-lines", o.load.skip_bad_lines, "skip and count malformed records");
  cmd->add_option("--block-tokens", o.load.block_tokens,
                  "tokens per block (default: each format's)");
  cmd->add_option("--max-requests", o.load.max_requests, "read at most this many of each trace");
  cmd->add_option("--sessions", o.load.sessions,
                  "auto: infer sessions from shared prefixes when a trace has none; infer: "
                  "always; keep: as read")
      ->check(CLI::IsMember({"auto", "infer", "keep"}))
      ->capture_default_str();
  add_capacity_option(cmd, o.capacities, false, "2%,5%,10%,20%", "capacities");
  add_policy_option(cmd, o.policies,
                    "deployable policies to rank (sets expanded per trace: lpc only where the "
                    "trace has continuation scores); lru and the seed policies always run, "
                    "belady as the offline reference");
  cmd->add_option("--seeds", o.seeds,
                  "the seed policies every policy is measured against (a seed policy against "
                  "the others); those a trace cannot feed are left out there")
      ->capture_default_str();
  cmd->add_option("--min-margin", o.min_margin_pt,
                  "points a win needs over LRU and over each seed policy (0: more block hits)")
      ->check(finite_in(0, 100))
      ->capture_default_str();
  add_cost_options(cmd, o.cost);
  cmd->add_option("--seed", o.seed, "seed of built-in workloads and randomized policies")
      ->capture_default_str();
  cmd->add_option("--jobs,-j", o.grid.jobs, "replays at once (0 = every core)")
      ->capture_default_str();
  output_file(cmd->add_option(
      "--json", o.grid.json_path,
      "stream one replay row (Result JSON) per (trace, policy, capacity) to this file"));
  cmd->add_flag("--resume", o.grid.resume,
                "keep the replay rows already in --json and run only the missing cells");
  output_file(cmd->add_option("--csv", args->csv_path,
                              "write one CSV row per replay (compare's --csv columns) to this "
                              "file at the end"));
  output_file(cmd->add_option("--board-json", args->board_json,
                              "write the leaderboard's rows (kind cell, trace, summary) to this "
                              "file at the end"));
  output_file(cmd->add_option(
      "--plot,--figure", args->plot_path,
      "draw the heat map (policy x (trace, size), colour = margin over the best seed policy) to "
      "this PNG (the Python package's plot_leaderboard.py through /usr/bin/python3 and "
      "matplotlib)"));
  cmd->footer(
      "A cell is a (trace, capacity). A policy wins a cell when it has more block hits than LRU "
      "and than every seed policy (a seed policy: than every other one). A trace counts for it "
      "when it wins at >= ceil(3/4 of the sizes) of them (3 of 4). Margins are percentage "
      "points of block hit rate. Policies are ranked by traces counted, then mean margin over "
      "LRU. Rows: docs/formats.md (leaderboard).");
  cmd->callback([args] { run(*args); });
}

CommandRegistrar registrar(11, add);

}  // namespace
}  // namespace kvpolicy::cli
