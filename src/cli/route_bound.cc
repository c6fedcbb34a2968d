// `kvpolicy route-bound`: round_robin, offline_bound and the routers asked on one trace and
// cluster; gap closed to the offline router, per-decision regret, the model's hit ceiling
// (docs/routers.md, offline_bound).
#include "kvpolicy/app/route_bound.h"

#include <fmt/format.h>

#include <cmath>

#include "command.h"
#include "common.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "serve_args.h"

namespace kvpolicy::cli {
namespace {

std::string gap_text(double g) { return std::isnan(g) ? "-" : fmt::format("{:.2f}", g); }

void add(CLI::App& app) {
  auto trace_args = std::make_shared<TraceArgs>();
  auto args = std::make_shared<ServeArgs>();
  auto options = std::make_shared<app::RouteBoundOptions>();
  args->routers = "online";
  args->workers = "4";
  auto* cmd = app.add_subcommand(
      "route-bound",
      "routers against round_robin and the offline router (offline_bound) on one trace: gap "
      "closed on TTFT and hit rate, per-decision regret, the hit-rate ceiling");
  trace_args->add(cmd, true);
  args->add(cmd);
  cmd->get_option("--router")
      ->description(
          "routers, comma-separated, each name[:key=value,...]; \"online\" = every "
          "registered router that reads no future");
  cmd->add_option("--regret-sample", options->regret_sample,
                  "decisions per router whose regret is measured, spread evenly (0 = none)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--regret-window", options->regret_window,
                  "arrivals re-simulated from each sampled decision (0 = to the end)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--regret-mode", options->regret_mode,
                  "model (the prefill-work model: prefill tokens), serve (serve mode re-run: "
                  "summed TTFT, ms) or both")
      ->check(CLI::IsMember({"model", "serve", "both"}))
      ->capture_default_str();
  cmd->add_option("--serve-regret-sample", options->serve_regret_sample,
                  "decisions per router whose serve-mode regret is measured (--regret-mode "
                  "serve|both); each costs one serve run per worker on the requests up to it "
                  "plus the window, about workers/2 full runs on average")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->callback([cmd, trace_args, args, options] {
    if (args->resume) throw ConfigError("--resume: route-bound runs every router at once");
    if (cmd->count("--jobs") > 0)
      fmt::print(stderr, "kvpolicy: route-bound: --jobs has no effect (it runs one at a time)\n");
    args->say_ignored(*cmd);
    args->routers = app::expand_router_sets(args->routers);
    args->validate();
    if (!args->json_path.empty()) check_writable(args->json_path);
    Trace trace = trace_args->load();
    app::RouteBoundReport report = app::route_bound(trace, *args, *options);
    if (!args->json_path.empty()) {
      std::string out;
      for (auto& row : report.rows) out += report.row_json(row) + "\n";
      write_file_atomically(args->json_path, out);
    }
    fmt::print(
        "trace {}: {} requests, {} prompt blocks; model hit ceiling {:.2f} % (no router "
        "can beat it in the prefill-work model)\n",
        trace.name, trace.size(), report.prompt_blocks, report.model_hit_ceiling * 100);
    const bool serve_regret = report.has_serve_regret();
    const bool model_regret = options->regret_mode != "serve";
    auto model_text = [&](double x) {
      return model_regret ? fmt::format("{:.1f}", x) : std::string("-");
    };
    fmt::print("{:<34} {:>7} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>10} {:>10}", "router",
               "hit %", "TTFT ms", "p50", "p99", "gap mean", "gap p50", "gap hit", "model %",
               "regret", "regret p90");
    if (serve_regret) fmt::print(" {:>12} {:>12}", "s-regret ms", "s-regret p90");
    fmt::print("\n");
    for (auto& row : report.rows) {
      const ServeResult& r = row.result;
      std::string name = r.router_params.empty() ? r.router : r.router + ":" + r.router_params;
      fmt::print(
          "{:<34} {:>7.2f} {:>9.1f} {:>9.1f} {:>9.1f} {:>8} {:>8} {:>8} {:>8.2f} {:>10} {:>10}",
          name + (row.offline ? " (offline)" : ""), r.block_hit_rate * 100, r.ttft_ms.mean,
          r.ttft_ms.p50, r.ttft_ms.p99, gap_text(row.gap_ttft_mean), gap_text(row.gap_ttft_p50),
          gap_text(row.gap_hit), row.model_hit_rate * 100, model_text(row.regret_mean_tokens),
          model_text(row.regret_p90_tokens));
      if (serve_regret)
        fmt::print(" {:>12.1f} {:>12.1f}", row.serve_regret_mean_ms, row.serve_regret_p90_ms);
      fmt::print("\n");
    }
    fmt::print(
        "gap = (router - round_robin) / (offline_bound - round_robin); regret: prefill "
        "tokens over {} arrivals in the prefill-work model, mean and P90 of {} decisions\n",
        report.regret_window, model_regret ? options->regret_sample : 0);
    if (serve_regret)
      fmt::print(
          "s-regret: summed TTFT (ms) of the same arrivals, serve mode re-run with each worker "
          "for the decision and the router's later choices, mean and P90 of {} decisions\n",
          options->serve_regret_sample);
  });
}

CommandRegistrar registrar(26, add);

}  // namespace
}  // namespace kvpolicy::cli
