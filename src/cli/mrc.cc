// `kvpolicy mrc`: hit rate and replay TTFT against capacity in GB of KV, per policy, and the
// smallest capacity that reaches a target hit rate (sizing). LRU from one stack-distance pass,
// other policies by parallel replays at the same capacities.
#include "kvpolicy/app/mrc.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/capacity.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/sim/sweep.h"
#include "plot.h"
#include "report.h"

namespace kvpolicy::cli {
namespace {

// app::MrcOptions from flags, and what the command writes.
struct MrcArgs : app::MrcOptions {
  uint32_t check_lru = 0;
  std::string json_path, csv_path, plot_path;
};

using app::kv_label;
using Curve = app::MrcCurve;

void write_csv(const std::string& path, const Trace& trace, const std::vector<Curve>& curves,
               double block_bytes) {
  std::string out;
  out +=
      "trace,policy,method,capacity_blocks,capacity_gb,block_hit_rate,token_hit_rate,"
      "ttft_mean_ms,ttft_p50_ms,ttft_p99_ms,block_hits,block_accesses,token_hits,"
      "prompt_tokens,cost_model\n";
  for (auto& c : curves)
    for (auto& r : c.points)
      out += fmt::format(
          "\"{}\",\"{}\",{},{},{:.6f},{:.6f},{:.6f},{:.3f},{:.3f},{:.3f},{},{},{},{},{}\n",
          trace.name, c.spec.label(), c.method, r.capacity_blocks,
          double(r.capacity_blocks) * block_bytes / 1e9, r.block_hit_rate, r.token_hit_rate,
          r.ttft_mean_ms, r.ttft_p50_ms, r.ttft_p99_ms, r.block_hits, r.block_accesses,
          r.token_hits, r.prompt_tokens, r.cost_model);
  write_file_atomically(path, out);
}

// Replays LRU at `n` of the capacities and fails if any differs from the one-pass curve.
void check_lru(const Trace& trace, const Curve& lru, uint32_t n, const ReplayOptions& base,
               unsigned jobs) {
  std::vector<SweepConfig> configs;
  std::vector<size_t> which;
  size_t m = lru.points.size();
  for (uint32_t k = 0; k < std::min<size_t>(n, m); ++k) {
    size_t i = n == 1 ? m - 1 : k * (m - 1) / std::max<uint32_t>(1, n - 1);
    if (!which.empty() && which.back() == i) continue;
    which.push_back(i);
    configs.push_back({{"lru", ""}, lru.points[i].capacity_blocks, -1, base});
  }
  auto replays = run_sweep(trace, configs, jobs);
  for (size_t k = 0; k < which.size(); ++k) {
    const ReplayResult& a = lru.points[which[k]];
    const ReplayResult& b = replays[k];
    if (a.block_hits != b.block_hits || a.token_hits != b.token_hits ||
        a.ttft_p99_ms != b.ttft_p99_ms || a.ttft_mean_ms != b.ttft_mean_ms)
      throw Error(fmt::format(
          "--check-lru: at {} blocks the one-pass curve gives {} block hits, {} token hits, "
          "TTFT mean {} P99 {} ms; a replay gives {}, {}, {}, {}",
          a.capacity_blocks, a.block_hits, a.token_hits, a.ttft_mean_ms, a.ttft_p99_ms,
          b.block_hits, b.token_hits, b.ttft_mean_ms, b.ttft_p99_ms));
  }
  fmt::print("lru one-pass curve checked against {} replays: identical hits and TTFT\n\n",
             which.size());
}

void run(const MrcArgs& a) {
  const CostModel cost = app::mrc_cost_model(a);
  std::optional<double> target = app::check_mrc_options(a);
  SweepPlacement where = sweep_placement("", a.jobs);
  if (where.worker()) {  // loads the trace on its first cell, prints nothing
    app::work_on_rank(where, [&] {
      auto plan = app::make_mrc_plan(a, cost);
      auto cells = std::make_shared<ReplayCells>(plan->trace, plan->configs);
      return [plan, cells](size_t i) { return cells->run(i).to_json(); };
    });
    return;
  }
  if (!a.json_path.empty()) check_writable(a.json_path);  // fail before the work
  if (!a.csv_path.empty()) check_writable(a.csv_path);

  auto plan = app::make_mrc_plan(a, cost);
  const Trace& trace = plan->trace;
  const TraceFacts& facts = plan->facts;
  const CostModel& at_trace = plan->at_trace;
  const double block_bytes = plan->block_bytes;
  const size_t hi = plan->hi;
  const ReplayOptions& opts = plan->opts;

  print_assumptions(trace.assumptions);
  fmt::print("trace {}: {} requests, {} block accesses, {} unique blocks of {} tokens\n",
             trace.name, facts.requests, facts.block_accesses, facts.unique_blocks,
             trace.block_tokens);
  fmt::print(
      "KV per block: {} bytes ({}); all unique blocks = {} GB; infinite cache hits {:.2f}%\n",
      with_commas(static_cast<uint64_t>(block_bytes)), kv_label(at_trace),
      gb_text(facts.unique_blocks * block_bytes / 1e9), facts.infinite_hit_rate * 100);
  fmt::print("TTFT: replay mode (prefill of uncached tokens, no queueing) on {}\n\n",
             at_trace.label());

  app::MrcRun mrc = app::mrc_curves(plan, app::run_mrc_replays(*plan, a.jobs, where));
  std::vector<Curve>& curves = mrc.curves;
  for (auto& c : curves) {
    if (std::string(c.method) == "stack" && a.check_lru > 0)
      check_lru(trace, c, a.check_lru, opts, a.jobs);
  }

  for (auto& c : curves) {
    fmt::print("{} ({})\n", c.spec.label(),
               std::string(c.method) == "stack" ? "one-pass LRU stack distances" : "replays");
    fmt::print("{:>12} {:>10} {:>8} {:>9} {:>9} {:>12} {:>11}\n", "blocks", "GB of KV", "% uniq",
               "block %", "token %", "TTFT mean", "TTFT P99");
    for (auto& r : c.points)
      fmt::print("{:>12} {:>10} {:>8.2f} {:>9.2f} {:>9.2f} {:>9.1f} ms {:>8.1f} ms\n",
                 r.capacity_blocks, gb_text(r.capacity_blocks * block_bytes / 1e9),
                 100.0 * r.capacity_blocks / std::max<size_t>(1, facts.unique_blocks),
                 r.block_hit_rate * 100, r.token_hit_rate * 100, r.ttft_mean_ms, r.ttft_p99_ms);
    fmt::print("\n");
  }

  if (target) {
    app::find_mrc_targets(mrc, *target);
    std::string what = fmt::format("{:g} % block hit rate", *target * 100);
    const Curve* best = nullptr;  // the deployable policy that needs the least memory
    for (auto& c : curves) {
      const TargetSearch& s = *c.target;
      std::string name = c.spec.label();
      if (!s.capacity_blocks) {
        if (std::string(c.method) == "stack") {
          fmt::print("{}: {} is out of reach: an infinite cache hits {:.2f} %\n", name, what,
                     facts.infinite_hit_rate * 100);
        } else {
          fmt::print("{}: {} not reached up to {} GB (best {:.2f} % on the curve)\n", name, what,
                     gb_text(hi * block_bytes / 1e9), s.block_hit_rate * 100);
        }
        continue;
      }
      size_t b = *s.capacity_blocks;
      std::string how =
          std::string(c.method) == "stack"
              ? "exact"
              : fmt::format("by bisection to 0.1 %, {} extra replays{}", s.replays,
                            s.non_monotone ? "; hit rate is not monotone in capacity on this "
                                             "curve, so this is the smallest point found"
                                           : "");
      bool offline = needs_future(c.spec);
      fmt::print("{}{}: {} needs {} GB of KV ({} blocks of {} tokens, {}; {:.2f} % at it, {})\n",
                 name, offline ? " (offline reference: reads the trace's future)" : "", what,
                 gb_text(b * block_bytes / 1e9), with_commas(b), trace.block_tokens,
                 kv_label(at_trace), s.block_hit_rate * 100, how);
      if (!offline && (!best || b < *best->target->capacity_blocks)) best = &c;
    }
    if (best)
      fmt::print(
          "\nanswer (replay: one cache for the whole trace, not per replica; see kvpolicy "
          "size): {} GB of KV for {} with {} ({})\n",
          gb_text(*best->target->capacity_blocks * block_bytes / 1e9), what, best->spec.label(),
          kv_label(at_trace));
  }

  if (!a.csv_path.empty()) write_csv(a.csv_path, trace, curves, block_bytes);
  write_rows_and_plot(app::mrc_rows(mrc), a.json_path, a.plot_path, "plot_mrc.py");
}

void add(CLI::App& app) {
  auto args = std::make_shared<MrcArgs>();
  auto* cmd = app.add_subcommand(
      "mrc",
      "hit rate and TTFT against capacity in GB (LRU in one pass), and the capacity a "
      "target hit rate needs");
  add_trace_options(cmd, args->trace, true);
  cmd->add_option("--policy,-p", args->policies,
                  "policies, comma-separated, each name[:key=value,...]; lru from its stack "
                  "distances, the others by replays")
      ->capture_default_str();
  cmd->add_option("--points", args->points, "capacities on the curve")
      ->check(CLI::Range(1u, 100000u))
      ->capture_default_str();
  cmd->add_option("--min", args->min,
                  "smallest capacity: blocks, a share (0.01 or 1%), tokens (10000t) or KV memory "
                  "(4GB, 4GiB)")
      ->capture_default_str();
  cmd->add_option("--max", args->max, "largest capacity, same forms")->capture_default_str();
  cmd->add_flag("--linear", args->linear, "space the capacities linearly (default geometrically)");
  cmd->add_option("--target-hit", args->target_hit,
                  "print per policy the smallest capacity whose block hit rate reaches this (30% "
                  "or 0.3), in one replay cache for the whole trace (per replica behind a "
                  "router, on GPUs: `kvpolicy size`)");
  cmd->add_option("--model", args->cost.model, "cost model: a model preset or 'linear'")
      ->capture_default_str();
  cmd->add_option("--gpu", args->cost.gpu, "cost model: a GPU preset")->capture_default_str();
  cmd->add_option("--kv-dtype", args->cost.kv_dtype,
                  "KV cache dtype: auto (the model's), fp16, bf16, fp8")
      ->capture_default_str();
  cmd->add_option("--cost-params", args->cost.cost_params,
                  "cost model options, key=value,... (see `kvpolicy cost-model --help`)");
  cmd->add_option("--seed", args->seed, "seed of randomized policies")->capture_default_str();
  cmd->add_option("--jobs,-j", args->jobs, "replays at once (0 = every core)")
      ->capture_default_str();
  cmd->add_option("--check-lru", args->check_lru,
                  "also replay LRU at this many of the capacities and fail unless the one-pass "
                  "curve matches them exactly")
      ->capture_default_str();
  output_file(
      cmd->add_option("--json", args->json_path,
                      "write one JSON object per (policy, capacity), and per target answer"));
  output_file(cmd->add_option("--csv", args->csv_path, "write one CSV row per (policy, capacity)"));
  output_file(cmd->add_option(
      "--plot", args->plot_path,
      "draw hit rate and TTFT vs GB to this PNG (the Python package's plot_mrc.py through "
      "/usr/bin/python3 and Debian's python3-matplotlib)"));
  cmd->callback([args] { run(*args); });
}

CommandRegistrar registrar(22, add);

}  // namespace
}  // namespace kvpolicy::cli
