// `kvpolicy study lpc`: the LPC paper's evaluation on a conversation trace: hit rate against
// capacity, the cache each policy needs for LRU's hit rate, and the share of the gap to the
// oracle it closes.
#include "kvpolicy/sim/lpc_study.h"

#include <fmt/format.h>

#include <cmath>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/app/replay.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/strings.h"

namespace kvpolicy::cli {
namespace {

void print(const LpcStudy& s, const LpcStudyOptions& o) {
  std::vector<std::string> labels;
  for (auto& spec : parse_policy_list(o.policies)) labels.push_back(spec.label());
  fmt::print(
      "block hit rate, % (capacity: share of the trace's unique blocks, blocks, GB of KV)\n"
      "{:>9} {:>10} {:>9}",
      "capacity", "blocks", "GB");
  for (auto& l : labels) fmt::print(" {:>22}", l);
  fmt::print("\n");
  for (size_t i = 0; i < s.runs.size(); i += labels.size()) {
    fmt::print("{:>8.3g}% {:>10} {:>9}", s.runs[i].capacity_fraction * 100,
               with_commas(s.runs[i].capacity_blocks), gb_text(s.runs[i].capacity_gb));
    for (size_t j = 0; j < labels.size(); ++j)
      fmt::print(" {:>22.2f}", s.runs[i + j].block_hit_rate * 100);
    fmt::print("\n");
  }
  fmt::print(
      "\nagainst {} (paper: LPC needs 18-47 % less cache for LRU's hit rate and closes 22-64 % "
      "of the gap to the oracle, {}):\n",
      o.baseline, o.oracle);
  fmt::print("{:<24} {:>9} {:>8} {:>8} {:>16} {:>8} {:>11}\n", "policy", "capacity", "LRU %",
             "hit %", "cache for LRU %", "saving", "gap closed");
  for (const CapacitySaving& x : s.savings) {
    std::string needed =
        std::isnan(x.capacity_needed)
            ? "never"
            : fmt::format("{}{:.3g}%", x.at_most ? "<=" : "", x.capacity_needed * 100);
    std::string saving = std::isnan(x.capacity_needed)
                             ? "-"
                             : fmt::format("{}{:.1f}%", x.at_most ? ">=" : "", x.saving() * 100);
    std::string gap = std::isnan(x.gap_closed) ? "-" : fmt::format("{:.1f}%", x.gap_closed * 100);
    fmt::print("{:<24} {:>8.3g}% {:>8.2f} {:>8.2f} {:>16} {:>8} {:>11}\n", x.policy,
               x.capacity_fraction * 100, x.lru_hit_rate * 100, x.hit_rate * 100, needed, saving,
               gap);
  }
}

CLI::App* add(CLI::App& parent, const std::string& name) {
  auto trace_args = std::make_shared<TraceArgs>();
  auto o = std::make_shared<LpcStudyOptions>();
  // Where the replays' rows go: --json, streamed and resumable (app::run_sweep).
  struct Output {
    std::string json_path;
    bool resume = false;
  };
  auto out = std::make_shared<Output>();
  auto capacities = std::make_shared<CapacityArgs>();
  auto cost = std::make_shared<CostArgs>();
  auto* cmd = parent.add_subcommand(
      name, "LPC's evaluation: hit rate vs capacity, cache saved at LRU's hit rate, gap closed");
  trace_args->add(cmd, true);
  capacities->add(cmd, "0.01,0.02,0.03,0.05,0.075,0.1,0.15,0.2",
                  "capacities (the study interpolates between them as shares of the trace's "
                  "unique blocks)");
  cost->add(cmd);
  add_policy_option(cmd, o->policies, "policies");
  cmd->add_option("--baseline", o->baseline, "the policy savings are measured against")
      ->capture_default_str();
  cmd->add_option("--oracle", o->oracle, "the policy that bounds the gap")->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of randomized policies")->capture_default_str();
  cmd->add_option("--jobs,-j", o->jobs, "replays at once (0 = every core)")->capture_default_str();
  output_file(
      cmd->add_option("--json", out->json_path, "write one JSON object per (policy, capacity)"));
  cmd->add_flag("--resume", out->resume, "keep the results already in --json");
  cmd->footer(
      "Terms: block hit rate = share of prompt blocks found cached; cache for LRU % = the "
      "capacity at which a policy's curve reaches LRU's hit rate (interpolated); saving = 1 - "
      "that / LRU's capacity; gap closed = (policy - LRU) / (oracle - LRU).");
  cmd->callback([trace_args, o, out, capacities, cost] {
    o->capacities = capacities->specs();  // fail before loading
    for (auto& s : expand_policy_sets(o->policies)) PolicyRegistry::instance().get(s.name);
    if (out->resume && out->json_path.empty()) throw ConfigError("--resume needs --json FILE");
    if (!out->json_path.empty()) check_writable(out->json_path);  // before the work
    Trace trace = trace_args->load();
    print_assumptions(trace.assumptions);  // above the tables that follow
    std::string policies;
    for (auto& s : policies_the_trace_feeds(o->policies, trace))
      policies += (policies.empty() ? "" : ",") + s.label();
    o->policies = policies;
    CostModel kv = cost->make().with_block_tokens(trace.block_tokens);
    o->cost_model = &kv;
    // Two capacities of one block count are one configuration: run it once.
    size_t unique = count_unique_blocks(trace);
    drop_repeated_configs(
        o->capacities,
        [&](const CapacitySpec& c) {
          return std::to_string(c.blocks(unique, kv.block_tokens(), kv.kv_bytes_per_block()));
        },
        [](const CapacitySpec& c) { return "capacity " + c.label(); });
    o->replay = [&](const Trace& t, const std::vector<SweepConfig>& configs) {
      ReplayCells cells(t, configs);
      app::Sweep<ReplayResult> sweep = app::replay_sweep(cells, out->json_path);
      sweep.detail = [&](size_t i) {
        return cells.config(i).policy.label() + " at " +
               std::to_string(cells.config(i).capacity_blocks);
      };
      app::SweepSettings settings;
      settings.jobs = o->jobs;
      settings.json_path = out->json_path;
      settings.resume = out->resume;
      settings.what = "lpc-study";
      return app::run_sweep(sweep, settings);
    };
    print(run_lpc_study(trace, *o), *o);
  });
  return cmd;
}

StudyRegistrar registrar(65, "lpc", "lpc-study", add);

}  // namespace
}  // namespace kvpolicy::cli
