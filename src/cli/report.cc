#include "report.h"

#include <fmt/format.h>

#include "common.h"

namespace kvpolicy::cli {

std::vector<ReplayResult> run_grid(const Trace& trace, const std::vector<PolicySpec>& policies,
                                   const std::vector<Capacity>& capacities, uint64_t seed) {
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
  fmt::print("infinite cache: block hit rate {:.2f}%\n\n", facts.infinite_hit_rate * 100);
  fmt::print("{:<28} {:>9} {:>10} {:>9} {:>9} {:>11} {:>9}\n", "policy", "capacity", "blocks",
             "hit %", "token %", "evictions", "ns/acc");
  for (auto& r : results) {
    std::string cap = r.capacity_fraction >= 0 ? fmt::format("{:g}%", r.capacity_fraction * 100)
                                               : std::string("-");
    std::string name = r.params.empty() ? r.policy : r.policy + ":" + r.params;
    fmt::print("{:<28} {:>9} {:>10} {:>9.2f} {:>9.2f} {:>11} {:>9.1f}\n", name, cap,
               r.capacity_blocks, r.block_hit_rate * 100, r.token_hit_rate * 100, r.evictions,
               r.ns_per_access);
  }
}

void write_json(const std::string& path, const std::vector<ReplayResult>& results) {
  auto out = open_output(path);
  for (auto& r : results) out << r.to_json() << '\n';
}

}  // namespace kvpolicy::cli
