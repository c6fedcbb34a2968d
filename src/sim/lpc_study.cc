#include "kvpolicy/sim/lpc_study.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"

namespace kvpolicy {

double capacity_for_hit_rate(const std::vector<double>& capacities,
                             const std::vector<double>& hit_rates, double target, bool* at_most) {
  if (at_most) *at_most = false;
  for (size_t i = 0; i < capacities.size(); ++i) {
    if (hit_rates[i] < target) continue;
    if (i == 0) {
      if (at_most) *at_most = true;
      return capacities[0];
    }
    double h0 = hit_rates[i - 1], h1 = hit_rates[i];
    double c0 = capacities[i - 1], c1 = capacities[i];
    return h1 == h0 ? c1 : c0 + (c1 - c0) * (target - h0) / (h1 - h0);
  }
  return std::nan("");
}

LpcStudy run_lpc_study(const Trace& trace, const LpcStudyOptions& o) {
  std::vector<PolicySpec> specs = parse_policy_list(o.policies);
  auto has = [&](const std::string& label) {
    return std::any_of(specs.begin(), specs.end(), [&](auto& s) { return s.label() == label; });
  };
  if (!has(o.baseline))
    throw ConfigError("lpc-study: the baseline '" + o.baseline + "' is not among the policies");
  if (o.capacities.empty()) throw ConfigError("lpc-study: no capacity given");
  size_t unique = count_unique_blocks(trace);
  ReplayOptions priced;
  priced.cost_model = o.cost_model;
  CostModel at_trace = replay_cost_model(trace, priced);
  // (share, blocks) per capacity, ascending: a share as written, else its blocks' share.
  std::vector<std::pair<double, size_t>> points;
  for (const CapacitySpec& c : o.capacities) {
    size_t blocks = c.blocks(unique, at_trace.block_tokens(), at_trace.kv_bytes_per_block());
    points.emplace_back(c.is_fraction() ? c.value : double(blocks) / double(unique), blocks);
  }
  std::sort(points.begin(), points.end());
  std::vector<double> caps;
  std::vector<SweepConfig> configs;
  for (auto [share, blocks] : points) {
    caps.push_back(share);
    for (auto& spec : specs) {
      SweepConfig sc;
      sc.policy = spec;
      sc.capacity_blocks = blocks;
      sc.capacity_fraction = share;
      sc.options.seed = o.seed;
      sc.options.cost_model = o.cost_model;
      configs.push_back(sc);
    }
  }
  LpcStudy study;
  study.runs = o.replay ? o.replay(trace, configs) : run_sweep(trace, configs, o.jobs);

  // Hit-rate curves by policy label, in capacity order.
  std::map<std::string, std::vector<double>> curve;
  for (size_t i = 0; i < configs.size(); ++i)
    curve[configs[i].policy.label()].push_back(study.runs[i].block_hit_rate);
  const std::vector<double>& lru = curve[o.baseline];
  const std::vector<double>* oracle = has(o.oracle) ? &curve[o.oracle] : nullptr;
  for (auto& spec : specs) {
    if (spec.label() == o.baseline) continue;
    const std::vector<double>& mine = curve[spec.label()];
    for (size_t i = 0; i < caps.size(); ++i) {
      CapacitySaving s;
      s.policy = spec.label();
      s.capacity_fraction = caps[i];
      s.lru_hit_rate = lru[i];
      s.hit_rate = mine[i];
      s.capacity_needed = capacity_for_hit_rate(caps, mine, lru[i], &s.at_most);
      double gap = oracle ? (*oracle)[i] - lru[i] : 0;
      s.gap_closed = gap > 0 ? (mine[i] - lru[i]) / gap : std::nan("");
      study.savings.push_back(s);
    }
  }
  return study;
}

}  // namespace kvpolicy
