// A replay grid as both front ends ask for it: every policy at every capacity of a trace
// (sim/sweep.h), on all cores, streaming rows to a JSON file and resuming from it.
#pragma once

#include <string>
#include <vector>

#include "kvpolicy/app/inputs.h"
#include "kvpolicy/app/sweep.h"
#include "kvpolicy/core/cell_sweep.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/sim/sweep.h"

namespace kvpolicy::app {

// A DRAM tier sized as a multiple of each HBM capacity (0 = one tier), the TTFT metrics, and
// where the rows go.
struct GridOptions {
  double dram_ratio = 0;
  PolicySpec dram_policy{"lru", ""};
  int32_t offload_min_priority = -1;  // with a DRAM tier (ReplayOptions); -1 = off
  // TTFT metrics: the cost model (null = the default preset), TEL's threshold, the SLO.
  const CostModel* cost_model = nullptr;
  double xi_ms = 200;
  double slo_ms = 200;
  unsigned jobs = 0;      // replays at once; 0 = every core
  std::string json_path;  // stream each result here as it finishes
  std::string csv_path;   // all results as CSV rows at the end
  bool resume = false;    // keep results already in json_path and skip their configurations
};

// Checks the JSON output can be written, touching nothing; call once before the first run.
void start_json_output(const GridOptions& grid);

// The options of a sweep run with `grid`'s settings.
ReplayOptions grid_replay_options(uint64_t seed, const GridOptions& grid);
// grid_configs with each configuration once (drop_repeated_configs): two capacities of the same
// blocks (5% and 0.05) are one.
std::vector<SweepConfig> distinct_grid_configs(const std::vector<PolicySpec>& policies,
                                               const std::vector<CapacitySpec>& capacities,
                                               size_t unique_blocks, const ReplayOptions& base,
                                               double dram_ratio);
// The configurations a grid replays: every policy at every capacity, capacities outer, once.
// `facts`, when given, are trace_facts(trace), so they are not counted again (also below).
std::vector<SweepConfig> grid_sweep_configs(const Trace& trace,
                                            const std::vector<PolicySpec>& policies,
                                            const std::vector<CapacitySpec>& capacities,
                                            uint64_t seed, const GridOptions& grid,
                                            const TraceFacts* facts = nullptr);
// The sweep settings of `grid` (its jobs, JSON file and resume) at `where`.
SweepSettings grid_sweep_settings(const GridOptions& grid, const SweepPlacement& where = {});
// A replay sweep's cells: each runs into a ReplayResult, rows read back from `json_path`.
Sweep<ReplayResult> replay_sweep(const ReplayCells& cells, const std::string& json_path);

// What a grid on `trace` replays: the policies of `policies` it can feed
// (policies_the_trace_feeds; the note on a set's skipped members goes to `skipped` when given,
// else to stderr) and the capacities of `capacities` resolved against it through `cost`.
struct ReplayPlan {
  TraceFacts facts;
  std::vector<PolicySpec> specs;
  std::vector<CapacitySpec> caps;
};
ReplayPlan plan_replay_grid(const Trace& trace, const std::string& policies,
                            const std::string& capacities, const CostModel& cost,
                            std::string* skipped = nullptr);

// Replays every policy at every capacity (app::run_sweep): on `grid.jobs` threads with a
// progress line, streaming and resuming `grid.json_path`; or the cells of `where`'s shard, or on
// rank 0 of an mpirun every rank's. Results in configuration order.
std::vector<ReplayResult> run_grid(const Trace& trace, const std::vector<PolicySpec>& policies,
                                   const std::vector<CapacitySpec>& capacities, uint64_t seed,
                                   const GridOptions& grid = {}, const SweepPlacement& where = {},
                                   const TraceFacts* facts = nullptr);

}  // namespace kvpolicy::app
