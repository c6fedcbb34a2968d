#include "report.h"

#include <fmt/format.h>

#include <cmath>

#include "common.h"

namespace kvpolicy::cli {

std::vector<ReplayResult> run_grid(const Trace& trace, const std::vector<PolicySpec>& policies,
                                   const std::vector<Capacity>& capacities, uint64_t seed,
                                   const GridOptions& grid) {
  for (auto& s : policies) PolicyRegistry::instance().get(s.name);
  TraceFacts facts = trace_facts(trace);
  bool need_oracle = false;
  for (auto& s : policies) need_oracle |= PolicyRegistry::instance().get(s.name).needs_oracle;
  Oracle oracle;
  if (need_oracle) oracle = compute_oracle(trace);

  std::vector<ReplayResult> results;
  size_t total = policies.size() * capacities.size(), done = 0;
  Progress progress("replay");
  for (auto& cap : capacities) {
    size_t blocks = cap.blocks(facts.unique_blocks);
    for (auto& spec : policies) {
      ReplayOptions opts;
      opts.seed = seed;
      opts.dram_capacity_blocks = static_cast<size_t>(std::llround(grid.dram_ratio * blocks));
      opts.dram_policy = grid.dram_policy;
      opts.cost_model = grid.cost_model;
      opts.xi_ms = grid.xi_ms;
      opts.slo_ms = grid.slo_ms;
      std::string detail = fmt::format("({} at {})", spec.label(), cap.label());
      opts.progress = [&](double f) { progress.update((done + f) / total, detail); };
      ReplayResult r = replay(trace, need_oracle ? &oracle : nullptr, spec, blocks, opts);
      r.capacity_fraction = cap.is_fraction() ? cap.value : -1;
      r.infinite_hit_rate = facts.infinite_hit_rate;
      results.push_back(std::move(r));
      ++done;
    }
  }
  return results;
}

void print_table(const Trace& trace, const std::vector<ReplayResult>& results) {
  TraceFacts facts = trace_facts(trace);
  fmt::print("trace {}: {} requests, {} block accesses, {} unique blocks of {} tokens\n",
             trace.name, facts.requests, facts.block_accesses, facts.unique_blocks,
             trace.block_tokens);
  fmt::print("infinite cache: block hit rate {:.2f}%\n", facts.infinite_hit_rate * 100);
  if (!results.empty())
    fmt::print("TTFT: replay mode (prefill of uncached tokens, no queueing) on {}; SLO {:g} ms\n",
               results[0].cost_model, results[0].slo_ms);
  fmt::print("\n");
  bool tiers = false;
  for (auto& r : results) tiers |= r.dram_capacity_blocks > 0;
  fmt::print("{:<28} {:>9} {:>10} {:>9} {:>9} {:>11} {:>9}", "policy", "capacity", "blocks",
             "hit %", "token %", "evictions", "ns/acc");
  if (tiers) fmt::print(" {:>10} {:>8} {:>8}", "dram blks", "hbm %", "dram %");
  fmt::print(" {:>9} {:>9} {:>9} {:>7}", "p50 ms", "p90 ms", "p99 ms", "slo %");
  fmt::print("\n");
  for (auto& r : results) {
    std::string cap = r.capacity_fraction >= 0 ? fmt::format("{:g}%", r.capacity_fraction * 100)
                                               : std::string("-");
    std::string name = r.params.empty() ? r.policy : r.policy + ":" + r.params;
    fmt::print("{:<28} {:>9} {:>10} {:>9.2f} {:>9.2f} {:>11} {:>9.1f}", name, cap,
               r.capacity_blocks, r.block_hit_rate * 100, r.token_hit_rate * 100, r.evictions,
               r.ns_per_access);
    if (tiers)
      fmt::print(" {:>10} {:>8.2f} {:>8.2f}", r.dram_capacity_blocks, r.hbm_hit_rate * 100,
                 r.dram_hit_rate * 100);
    fmt::print(" {:>9.1f} {:>9.1f} {:>9.1f} {:>7.2f}", r.ttft_p50_ms, r.ttft_p90_ms, r.ttft_p99_ms,
               r.slo_violation_rate * 100);
    fmt::print("\n");
  }
}

void write_json(const std::string& path, const std::vector<ReplayResult>& results) {
  auto out = open_output(path);
  for (auto& r : results) out << r.to_json() << '\n';
}

}  // namespace kvpolicy::cli
