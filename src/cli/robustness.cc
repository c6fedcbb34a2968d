// `kvpolicy study robustness`: hit rate of LRU, FPB, HF, LARU and Belady as the noisy oracle's
// corruption probability grows (the LCR paper's Figures 5 and 13).
#include "kvpolicy/sim/robustness.h"

#include <fmt/format.h>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"

namespace kvpolicy::cli {
namespace {

struct RobustnessArgs {
  TraceArgs trace;
  CapacityArgs capacities;
  CostArgs cost;
  std::string noise = "0:1:0.1";
  std::string policies = "lru,fpb,hf,laru,belady";
  std::string noise_kind = "adversarial";
  std::string redraw = "request";
  double sigma = 1;
  uint64_t seed = 1;
  std::string json, csv;
};

void print(const std::vector<RobustnessRow>& rows, const std::vector<std::string>& names) {
  fmt::print("{:>6}", "p");
  for (auto& n : names) fmt::print(" {:>12}", n);
  fmt::print("   (block hit %)\n");
  for (size_t i = 0; i < rows.size(); i += names.size()) {
    fmt::print("{:>6.2f}", rows[i].noise);
    for (size_t j = 0; j < names.size(); ++j)
      fmt::print(" {:>12.2f}", rows[i + j].block_hit_rate * 100);
    fmt::print("\n");
  }
  fmt::print("\npredictor calls (candidates scored, as the paper's sync mode would ask):\n{:>6}",
             "p");
  for (size_t j = 0; j < names.size(); ++j)
    if (rows[j].learned) fmt::print(" {:>12}", names[j]);
  fmt::print("\n");
  for (size_t i = 0; i < rows.size(); i += names.size()) {
    fmt::print("{:>6.2f}", rows[i].noise);
    for (size_t j = 0; j < names.size(); ++j)
      if (rows[i + j].learned) fmt::print(" {:>12.4g}", rows[i + j].predictor_calls);
    fmt::print("\n");
  }
}

CLI::App* add(CLI::App& parent, const std::string& name) {
  auto args = std::make_shared<RobustnessArgs>();
  auto* cmd = parent.add_subcommand(
      name, "hit rate of learned policies as predictions are corrupted (LCR Fig. 5, 13)");
  args->trace.add(cmd, true);
  args->capacities.add(cmd, "0.05");
  args->cost.add(cmd);
  cmd->add_option("--noise,-n", args->noise,
                  "corruption probabilities: a list 0,0.5,1 or a range start:stop:step")
      ->capture_default_str();
  add_policy_option(cmd, args->policies,
                    "policies; those with a predictor get predictor=noisy,p=<level>, and one "
                    "holding {p} gets the level there instead "
                    "(guarded:inner=fpb,inner_params=predictor=noisy;p={p})");
  cmd->add_option("--noise-kind", args->noise_kind,
                  "adversarial (negated true next time) or lognormal")
      ->check(CLI::IsMember({"adversarial", "lognormal"}))
      ->capture_default_str();
  cmd->add_option("--redraw", args->redraw,
                  "when the noise is drawn afresh: request (each request's eviction call "
                  "predicts anew, the paper's sync mode) or access (a corrupted prediction "
                  "persists until the block is used again: a persistent adversary)")
      ->check(CLI::IsMember({"request", "access"}))
      ->capture_default_str();
  cmd->add_option("--sigma", args->sigma, "lognormal noise: sigma, seconds")->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of the noise")->capture_default_str();
  output_file(
      cmd->add_option("--json", args->json, "write one JSON object per (noise, policy, capacity)"));
  output_file(cmd->add_option("--csv", args->csv, "write the same rows as CSV"));
  cmd->footer(
      "Terms: p = probability that a prediction is corrupted; block hit % = share of prompt "
      "blocks found cached; predictor calls = candidates scored per run, as the paper's sync "
      "mode would ask. Capacity: as written, then blocks and GB of KV.");
  cmd->callback([args] {
    RobustnessOptions opts;
    opts.noise = parse_noise_levels(args->noise);
    opts.policies = expand_policy_sets_text(args->policies);
    opts.learned_params = "noise=" + args->noise_kind + fmt::format(",sigma={}", args->sigma);
    opts.redraw = args->redraw;
    opts.seed = args->seed;
    args->capacities.specs();  // fail before loading
    CostModel cost = args->cost.make();
    std::vector<std::string> names;
    for (auto& s : parse_policy_list(opts.policies)) {
      PolicyRegistry::instance().get(s.name);  // fail before loading
      names.push_back(s.label());
    }
    Trace trace = args->trace.load();
    Oracle oracle = compute_oracle(trace);
    TraceFacts facts = trace_facts(trace);
    cost = cost.with_block_tokens(trace.block_tokens);
    opts.cost_model = &cost;
    auto caps = args->capacities.resolve(facts.unique_blocks, cost);
    std::vector<RobustnessRow> all;
    Progress progress("robustness");
    for (size_t c = 0; c < caps.size(); ++c) {
      size_t blocks = caps[c].blocks;
      opts.progress = [&](double f, const std::string& d) {
        progress.update((c + f) / caps.size(), "(" + d + ")");
      };
      auto rows = run_robustness(trace, oracle, blocks, opts);
      for (auto& r : rows) r.capacity_fraction = caps[c].capacity.fraction();
      print_assumptions(trace.assumptions);
      fmt::print("trace {}: capacity {}, {} noise redrawn per {}\n", trace.name, caps[c].label(),
                 args->noise_kind, args->redraw);
      print(rows, names);
      fmt::print("\n");
      all.insert(all.end(), rows.begin(), rows.end());
    }
    if (!args->json.empty()) {
      std::string out;
      for (auto& r : all) out += r.to_json() + '\n';
      write_file_atomically(args->json, out);
    }
    if (!args->csv.empty()) {
      std::string out = RobustnessRow::csv_header() + '\n';
      for (auto& r : all) out += r.to_csv() + '\n';
      write_file_atomically(args->csv, out);
    }
  });
  return cmd;
}

StudyRegistrar registrar(62, "robustness", "robustness", add);

}  // namespace
}  // namespace kvpolicy::cli
