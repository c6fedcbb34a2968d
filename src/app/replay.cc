#include "kvpolicy/app/replay.h"

#include <fmt/format.h>

#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/resumable.h"

namespace kvpolicy::app {

void start_json_output(const GridOptions& grid) {
  if (grid.resume && grid.json_path.empty()) throw ConfigError("--resume needs --json FILE");
  if (!grid.json_path.empty()) check_writable(grid.json_path);  // emptied at the first row
}

ReplayOptions grid_replay_options(uint64_t seed, const GridOptions& grid) {
  ReplayOptions base;
  base.seed = seed;
  base.dram_policy = grid.dram_policy;
  base.offload_min_priority = grid.offload_min_priority;
  base.cost_model = grid.cost_model;
  base.xi_ms = grid.xi_ms;
  base.slo_ms = grid.slo_ms;
  return base;
}

std::vector<SweepConfig> distinct_grid_configs(const std::vector<PolicySpec>& policies,
                                               const std::vector<CapacitySpec>& capacities,
                                               size_t unique_blocks, const ReplayOptions& base,
                                               double dram_ratio) {
  auto configs = grid_configs(policies, capacities, unique_blocks, base, dram_ratio);
  // What ReplayCells::key varies within one grid (the rest is the grid's own).
  drop_repeated_configs(
      configs,
      [](const SweepConfig& c) {
        return fmt::format("{}|{}|{}", c.policy.label(), c.capacity_blocks,
                           c.options.dram_capacity_blocks);
      },
      [](const SweepConfig& c) {
        return fmt::format("{} at {} blocks", c.policy.label(), with_commas(c.capacity_blocks));
      });
  return configs;
}

std::vector<SweepConfig> grid_sweep_configs(const Trace& trace,
                                            const std::vector<PolicySpec>& policies,
                                            const std::vector<CapacitySpec>& capacities,
                                            uint64_t seed, const GridOptions& grid,
                                            const TraceFacts* facts) {
  for (auto& s : policies) PolicyRegistry::instance().get(s.name);
  return distinct_grid_configs(policies, capacities,
                               facts ? facts->unique_blocks : count_unique_blocks(trace),
                               grid_replay_options(seed, grid), grid.dram_ratio);
}

SweepSettings grid_sweep_settings(const GridOptions& grid, const SweepPlacement& where) {
  SweepSettings s;
  s.jobs = grid.jobs;
  s.json_path = grid.json_path;
  s.resume = grid.resume;
  s.what = "replay";
  s.where = where;
  return s;
}

Sweep<ReplayResult> replay_sweep(const ReplayCells& cells, const std::string& json_path) {
  Sweep<ReplayResult> sweep;
  for (size_t i = 0; i < cells.size(); ++i) {
    sweep.cells.keys.push_back(cells.key(i));
    sweep.cells.weights.push_back(cells.weight(i));
  }
  sweep.cells.key_of = [json_path, trace = cells.trace_name(),
                        fingerprint = cells.fingerprint()](const ResultLine& line) {
    ReplayResult r = parse_result_json(line.text, json_path, line.line_no);
    refuse_stale_row(json_path, line.line_no, r.trace, r.trace_fingerprint, trace, fingerprint);
    return result_key(r);
  };
  sweep.run = [&cells](size_t i, const std::function<void(double)>& progress) {
    return cells.run(i, progress);
  };
  sweep.row = [](const ReplayResult& r) { return r.to_json(); };
  sweep.parse = parse_result_json;
  sweep.detail = [&cells](size_t i) {
    const SweepConfig& c = cells.config(i);
    return "(" + c.policy.label() + " at " + std::to_string(c.capacity_blocks) + ")";
  };
  return sweep;
}

ReplayPlan plan_replay_grid(const Trace& trace, const std::string& policies,
                            const std::string& capacities, const CostModel& cost,
                            std::string* skipped) {
  ReplayPlan p;
  p.facts = trace_facts(trace);
  p.specs = policies_the_trace_feeds(policies, trace, skipped);
  for (auto& c :
       resolve_capacities(capacities, p.facts.unique_blocks,
                          cost.with_block_tokens(std::max<uint32_t>(trace.block_tokens, 1))))
    p.caps.push_back(c.capacity);
  return p;
}

std::vector<ReplayResult> run_grid(const Trace& trace, const std::vector<PolicySpec>& policies,
                                   const std::vector<CapacitySpec>& capacities, uint64_t seed,
                                   const GridOptions& grid, const SweepPlacement& where,
                                   const TraceFacts* facts) {
  ReplayCells cells(trace, grid_sweep_configs(trace, policies, capacities, seed, grid, facts),
                    facts);
  return run_sweep(replay_sweep(cells, grid.json_path), grid_sweep_settings(grid, where));
}

}  // namespace kvpolicy::app
