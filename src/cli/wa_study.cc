// `kvpolicy study wa`: the paper's Figures 25-27 in replay mode. A fixed HBM cache and a DRAM
// tier growing from 0 to a few times HBM; hit rate and TTFT of WA against LRU, FIFO, LFU,
// S3-FIFO and GDSF, plus WA's ablations (no lifespan term, one category).
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/sim/sim.h"
#include "report.h"

namespace kvpolicy::cli {
namespace {

struct StudyArgs {
  TraceArgs trace;
  CapacityArgs hbm;
  std::string ratios = "0,1,2,3,4";
  std::string policies = "lru,fifo,lfu,s3fifo,gdsf,wa,wa:life=none,wa:categories=single";
  std::string dram_policy = "same";
  CostArgs cost;
  uint64_t seed = 1;
  std::string json, csv;
};

std::vector<double> parse_ratios(const std::string& text) {
  std::vector<double> out;
  for (const std::string& item : split_list(text)) {
    std::optional<double> v = read_number(item);
    if (!v || *v < 0) throw ConfigError("DRAM ratio '" + item + "' must be a number >= 0");
    out.push_back(*v);
  }
  if (out.empty()) throw ConfigError("no DRAM ratio given");
  return out;
}

bool is_wa(const PolicySpec& s) { return s.name == "wa"; }

void run(const StudyArgs& a) {
  auto specs = expand_policy_sets(a.policies);
  for (auto& s : specs) PolicyRegistry::instance().get(s.name);
  auto ratios = parse_ratios(a.ratios);
  a.hbm.specs();  // fail before loading
  CostModel cost = a.cost.make();
  Trace trace = a.trace.load();
  specs = policies_the_trace_feeds(a.policies, trace);
  cost = cost.with_block_tokens(trace.block_tokens);
  TraceFacts facts = trace_facts(trace);
  ResolvedCapacity hbm_capacity = a.hbm.resolve(facts.unique_blocks, cost)[0];
  size_t hbm = hbm_capacity.blocks;

  std::vector<ReplayResult> results;
  std::map<std::pair<size_t, size_t>, size_t> at;  // (ratio, policy) -> result
  Progress progress("wa-study");
  size_t total = ratios.size() * specs.size(), done = 0;
  for (size_t ri = 0; ri < ratios.size(); ++ri) {
    for (size_t pi = 0; pi < specs.size(); ++pi) {
      ReplayOptions opts;
      opts.seed = a.seed;
      opts.cost_model = &cost;
      opts.dram_capacity_blocks = static_cast<size_t>(std::llround(ratios[ri] * double(hbm)));
      opts.dram_policy = a.dram_policy == "same" ? specs[pi] : parse_policy_spec(a.dram_policy);
      std::string detail = fmt::format("({} at DRAM {:g}x)", specs[pi].label(), ratios[ri]);
      opts.progress = [&](double f) { progress.update((double(done) + f) / total, detail); };
      ReplayResult r = replay(trace, nullptr, specs[pi], hbm, opts);
      r.infinite_hit_rate = facts.infinite_hit_rate;
      at[{ri, pi}] = results.size();
      results.push_back(std::move(r));
      ++done;
    }
  }

  print_assumptions(trace.assumptions);
  fmt::print(
      "trace {}: {} requests, {} block accesses, {} unique blocks of {} tokens; infinite-cache "
      "hit rate {:.2f}%\n",
      trace.name, facts.requests, facts.block_accesses, facts.unique_blocks, trace.block_tokens,
      facts.infinite_hit_rate * 100);
  fmt::print(
      "HBM {} of KV for {}, DRAM = ratio x HBM, DRAM policy {}; TTFT in "
      "replay mode (prefill + PCIe transfer of DRAM hits, no queueing)\n\n",
      hbm_capacity.label(), cost.label(),
      a.dram_policy == "same" ? "= the HBM policy" : a.dram_policy);

  auto table = [&](const char* title, auto value, const char* fmtspec) {
    fmt::print("{}\n{:<8}", title, "DRAM/HBM");
    for (auto& s : specs) fmt::print(" {:>22}", s.label());
    fmt::print("\n");
    for (size_t ri = 0; ri < ratios.size(); ++ri) {
      fmt::print("{:<8g}", ratios[ri]);
      for (size_t pi = 0; pi < specs.size(); ++pi)
        fmt::print(" {:>22}", fmt::format(fmt::runtime(fmtspec), value(results[at[{ri, pi}]])));
      fmt::print("\n");
    }
    fmt::print("\n");
  };
  table(
      "block hit rate (%)", [](const ReplayResult& r) { return r.block_hit_rate * 100; }, "{:.2f}");
  table(
      "mean TTFT (ms)", [](const ReplayResult& r) { return r.ttft_mean_ms; }, "{:.1f}");
  table(
      "P99 TTFT (ms)", [](const ReplayResult& r) { return r.ttft_p99_ms; }, "{:.1f}");

  // WA (as given, first wa spec) against the best baseline (every non-wa policy).
  size_t wa = specs.size();
  for (size_t pi = 0; pi < specs.size() && wa == specs.size(); ++pi)
    if (is_wa(specs[pi])) wa = pi;
  if (wa < specs.size()) {
    fmt::print("{} vs the best baseline\n{:<8} {:>12} {:>10} {:>10} {:>12} {:>12}\n",
               specs[wa].label(), "DRAM/HBM", "best", "best hit%", "wa hit%", "gain (pts)",
               "mean TTFT");
    for (size_t ri = 0; ri < ratios.size(); ++ri) {
      size_t best = specs.size();
      for (size_t pi = 0; pi < specs.size(); ++pi)
        if (!is_wa(specs[pi]) &&
            (best == specs.size() ||
             results[at[{ri, pi}]].block_hit_rate > results[at[{ri, best}]].block_hit_rate))
          best = pi;
      if (best == specs.size()) break;
      const ReplayResult& b = results[at[{ri, best}]];
      const ReplayResult& w = results[at[{ri, wa}]];
      fmt::print("{:<8g} {:>12} {:>10.2f} {:>10.2f} {:>+12.2f} {:>+11.1f}%\n", ratios[ri],
                 specs[best].label(), b.block_hit_rate * 100, w.block_hit_rate * 100,
                 (w.block_hit_rate - b.block_hit_rate) * 100,
                 b.ttft_mean_ms > 0 ? (w.ttft_mean_ms / b.ttft_mean_ms - 1) * 100 : 0.0);
    }
  }
  if (!a.json.empty()) write_json(a.json, results);
  if (!a.csv.empty()) write_csv(a.csv, results);
}

CLI::App* add(CLI::App& parent, const std::string& name) {
  auto args = std::make_shared<StudyArgs>();
  auto* cmd = parent.add_subcommand(
      name, "WA vs classic policies as a DRAM tier grows (the WA paper's Figures 25-27)");
  args->trace.add(cmd, true);
  args->hbm.single = true;
  args->hbm.add(cmd, "0.05", "HBM capacity", {"--hbm"});
  cmd->add_option("--dram-ratios", args->ratios, "DRAM capacities as multiples of HBM")
      ->capture_default_str();
  add_policy_option(cmd, args->policies, "policies", {});
  cmd->add_option("--dram-policy", args->dram_policy,
                  "policy of the DRAM tier: same (as HBM) or a policy spec")
      ->capture_default_str();
  args->cost.add(cmd);
  cmd->add_option("--seed", args->seed, "seed of randomized policies")->capture_default_str();
  output_file(
      cmd->add_option("--json", args->json, "write one JSON object per replay to this file"));
  output_file(cmd->add_option("--csv", args->csv, "write one CSV row per replay to this file"));
  cmd->footer(
      "Terms: block hit rate = share of prompt blocks found in HBM or DRAM; TTFT in replay mode "
      "= prefill of the uncached tokens + PCIe transfer of DRAM hits, no queueing; gain (pts) = "
      "WA's hit rate minus the best other policy's, in percentage points.");
  cmd->callback([args] { run(*args); });
  return cmd;
}

StudyRegistrar registrar(64, "wa", "wa-study", add);

}  // namespace
}  // namespace kvpolicy::cli
