// `kvpolicy route-tune`: one router's parameters searched in serve mode on the first part of a
// trace, judged on the rest, and the configuration to paste (docs/serve.md, "Autotuning a
// router: route-tune").
#include "kvpolicy/app/route_tune.h"

#include <fmt/format.h>

#include "command.h"
#include "common.h"
#include "kvpolicy/core/error.h"
#include "serve_args.h"

namespace kvpolicy::cli {
namespace {

void print_row(const std::string& which, const std::string& part, const app::TuneFigures& f) {
  fmt::print("{:<8} {:<9} {:>9} {:>10.1f} {:>10.1f} {:>10.1f} {:>8.2f}\n", which, part, f.requests,
             f.ttft_p50_ms, f.ttft_p99_ms, f.ttft_mean_ms, f.hit_rate * 100);
}

void print_result(const app::TuneResult& r) {
  fmt::print(
      "route-tune {}: tuning part {} requests (before {:.1f} s, --split {:g}), held-out "
      "part {} requests\n",
      r.router, r.tune_requests, r.cut_s, r.split, r.held_requests);
  fmt::print("space ({} knobs):\n", r.knobs.size());
  for (const app::TuneKnob& k : r.knobs) fmt::print("  {}\n", k.describe());
  fmt::print(
      "search {} (seed {}): {} settings run on the tuning part, the default included; "
      "objective {}\n",
      r.search, r.seed, r.runs.size(), r.objective);
  if (r.replicates > 1)
    fmt::print(
        "replicates: {} per setting (seeds {}..{}, arrival jitter {:.4g} s); figures are "
        "their means\n",
        r.replicates, r.seed, r.seed + r.replicates - 1, r.arrival_jitter_s);
  fmt::print("default: {}\ntuned:   {}\n", r.default_params, r.best_params);
  fmt::print("{:<8} {:<9} {:>9} {:>10} {:>10} {:>10} {:>8}\n", "setting", "part", "requests",
             "TTFT p50", "TTFT p99", "TTFT mean", "hit %");
  print_row("default", "tuning", r.default_tune);
  print_row("tuned", "tuning", r.best_tune);
  print_row("default", "held-out", r.default_held);
  print_row("tuned", "held-out", r.best_held);
  if (r.best_params == r.default_params)
    fmt::print("verdict: the default was best on the tuning part; nothing to change\n");
  else
    fmt::print(
        "verdict: the tuned setting {} the default on the held-out part ({} {:.4g} vs "
        "{:.4g})\n",
        r.beats_default_held ? "beats" : "does NOT beat", r.objective,
        std::abs(app::objective_value(r.objective, r.best_held)),
        std::abs(app::objective_value(r.objective, r.default_held)));
  if (r.replicates > 1 && r.best_params != r.default_params)
    fmt::print(
        "paired by seed, tuned - default: {:.4g} +- {:.4g} (standard error, {} replicates; "
        "lower is better)\n",
        r.held_difference, r.held_difference_se, r.replicates);
  fmt::print("\nconfiguration to paste:\n{}", r.export_text);
}

void add(CLI::App& app) {
  auto trace_args = std::make_shared<TraceArgs>();
  auto args = std::make_shared<ServeArgs>();
  auto spec = std::make_shared<app::TuneSpec>();
  args->workers = "4";
  args->routers = "";  // --router is required
  auto* cmd = app.add_subcommand(
      "route-tune",
      "search a router's parameters in serve mode on the first part of a trace, check them on "
      "the rest, print the configuration to paste (SGLang, Dynamo, llm-d)");
  trace_args->add(cmd, true);
  args->add(cmd);
  cmd->get_option("--router")
      ->required()
      ->description("the router to tune: name[:key=value,...] (given values are fixed)");
  cmd->get_option("--json")->description(
      "write the report (every run, default and tuned on both parts, the export) to this file "
      "at the end; meanwhile the runs stream to FILE.runs, which --resume reads");
  cmd->get_option("--seed")->description("seed of the search, the routers and the policies");
  cmd->add_option("--objective", spec->objective,
                  "what to minimise: ttft-p50, ttft-p99, ttft-mean, or hit (maximised)")
      ->capture_default_str();
  cmd->add_option("--budget", spec->budget,
                  "router settings tried on the tuning part besides the default")
      ->capture_default_str();
  cmd->add_option("--search", spec->search,
                  "grid (levels per knob from the budget), random (seeded random search, then "
                  "local refinement around the best) or cmaes (CMA-ES from the default)")
      ->capture_default_str();
  cmd->add_option("--split", spec->split,
                  "tune on requests arriving in this first share of the trace's time span; the "
                  "rest is held out")
      ->capture_default_str();
  cmd->add_option("--replicates", spec->replicates,
                  "run each setting on this many sample paths (seeds seed..seed+N-1, arrivals "
                  "jittered by --arrival-jitter or 1 % of the mean gap) and judge their means")
      ->capture_default_str();
  cmd->add_option("--space", spec->space,
                  "override the space: key=lo:hi[:log|:lin], key=a|b|c, or key=value to fix it; "
                  "comma-separated");
  cmd->callback([cmd, trace_args, args, spec] {
    args->say_ignored(*cmd);
    spec->serve = *args;
    spec->json_path = args->json_path;
    spec->resume = args->resume;
    spec->serve.json_path.clear();
    spec->serve.resume = false;
    spec->validate();  // bad flags fail before a long load
    Trace trace = trace_args->load();
    print_result(app::route_tune(trace, *spec));
  });
}

CommandRegistrar registrar(26, add);

}  // namespace
}  // namespace kvpolicy::cli
