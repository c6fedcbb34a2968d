// `kvpolicy study lpc-decay`: LPC's decay rate chosen on a validation trace (app/lpc_decay.h).
#include "kvpolicy/app/lpc_decay.h"

#include <fmt/format.h>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"

namespace kvpolicy::cli {
namespace {

CLI::App* add(CLI::App& parent, const std::string& name) {
  auto trace_args = std::make_shared<TraceArgs>();
  auto o = std::make_shared<app::LpcDecayOptions>();
  auto json = std::make_shared<std::string>();
  auto cost = std::make_shared<CostArgs>();
  auto* cmd = parent.add_subcommand(
      name,
      "choose LPC's decay rate (scale_s) on a validation trace: the highest mean block hit "
      "rate over the capacities");
  trace_args->add(cmd, true);
  cost->add(cmd);
  cmd->add_option("--scales", o->scales, "decay rates to try, per second (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--capacity,-c", o->capacities,
                  "capacities the mean is taken over (blocks, %, tokens or KV memory)")
      ->capture_default_str();
  cmd->add_option("--lpc-params", o->lpc_params,
                  "more lpc parameters for every run, k=v,k=v (e.g. drift=false)");
  cmd->add_option("--seed", o->seed, "seed of the replays")->capture_default_str();
  cmd->add_option("--jobs,-j", o->jobs, "replays at once (0 = every core)")->capture_default_str();
  output_file(cmd->add_option("--json", *json, "write the table and the choice as one object"));
  cmd->footer(
      "Build the trace from the validation split of the classifier's training data (`trace build "
      "--classifier M --split validation --validation-share V`, the V of `classifier train`), "
      "never from the split you report on; then run lpc with scale_s=<chosen>.");
  cmd->callback([trace_args, o, json, cost] {
    if (!json->empty()) check_writable(*json);
    Trace trace = trace_args->load();
    CostModel kv = cost->make().with_block_tokens(trace.block_tokens);
    app::LpcDecayChoice c = app::choose_lpc_decay(trace, *o, kv);
    fmt::print("block hit rate, %, of lpc:scale_s=X{} on {}\n{:>10}",
               o->lpc_params.empty() ? "" : "," + o->lpc_params, trace.name, "scale_s");
    for (auto& cap : c.capacities) fmt::print(" {:>9}", cap);
    fmt::print(" {:>9}\n{:>10}", "mean", "lru");
    double lru_mean = 0;
    for (double h : c.lru_hit_rates) {
      fmt::print(" {:>9.2f}", h * 100);
      lru_mean += h / double(c.lru_hit_rates.size());
    }
    fmt::print(" {:>9.2f}\n", lru_mean * 100);
    for (size_t i = 0; i < c.scales.size(); ++i) {
      fmt::print("{:>10g}", c.scales[i]);
      for (double h : c.hit_rates[i]) fmt::print(" {:>9.2f}", h * 100);
      fmt::print(" {:>9.2f}{}\n", c.mean_hit_rate[i] * 100, c.scales[i] == c.chosen ? "  <-" : "");
    }
    fmt::print("chosen: scale_s={:g}\n", c.chosen);
    if (!json->empty()) {
      write_file_atomically(*json, c.json() + "\n");
      fmt::print("wrote {}\n", *json);
    }
  });
  return cmd;
}

StudyRegistrar registrar(66, "lpc-decay", "", add);

}  // namespace
}  // namespace kvpolicy::cli
