// Running a (policy x capacity) grid and printing it, shared by simulate and compare.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common.h"
#include "distributed.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/sim/sweep.h"

namespace kvpolicy::cli {

// A DRAM tier sized as a multiple of each HBM capacity (0 = one tier).
struct GridOptions {
  double dram_ratio = 0;
  PolicySpec dram_policy{"lru", ""};
  // TTFT metrics: the cost model (null = the default preset), TEL's threshold, the SLO.
  const CostModel* cost_model = nullptr;
  double xi_ms = 200;
  double slo_ms = 200;
  unsigned jobs = 0;      // replays at once; 0 = every core
  std::string json_path;  // stream each result here as it finishes
  std::string csv_path;   // all results as CSV rows at the end
  bool resume = false;    // keep results already in json_path and skip their configurations
};

// Adds --jobs, --json, --csv and --resume to a command.
void add_sweep_options(CLI::App* cmd, GridOptions& grid);
// Truncates the JSON output unless resuming; call once before the first run_grid.
void start_json_output(const GridOptions& grid);

// The options of a sweep run with `grid`'s settings.
ReplayOptions grid_replay_options(uint64_t seed, const GridOptions& grid);
// The configurations run_grid replays: every policy at every capacity, capacities outer.
// `facts`, when given, are trace_facts(trace), so they are not counted again (also below).
std::vector<SweepConfig> grid_sweep_configs(const Trace& trace,
                                            const std::vector<PolicySpec>& policies,
                                            const std::vector<Capacity>& capacities, uint64_t seed,
                                            const GridOptions& grid,
                                            const TraceFacts* facts = nullptr);
// Replays every policy at every capacity on all cores, with a progress line on long runs; or
// only the cells of `where`'s shard (the --json file then in configuration order); or, on rank 0
// of an mpirun, over every rank (see run_on_ranks). Results in configuration order.
std::vector<ReplayResult> run_grid(const Trace& trace, const std::vector<PolicySpec>& policies,
                                   const std::vector<Capacity>& capacities, uint64_t seed,
                                   const GridOptions& grid = {}, const SweepPlacement& where = {},
                                   const TraceFacts* facts = nullptr);
// The sweep settings of `grid`, its progress shown on `progress`.
SweepOptions grid_sweep_options(const GridOptions& grid, Progress& progress);
// A replay sweep's cells for a sharded or distributed run; rows are read back from `json_path`.
SweepCells replay_sweep_cells(const ReplayCells& cells, const std::string& json_path);
// Rows of replay results back into results; `path` names them in errors.
std::vector<ReplayResult> parse_result_rows(const std::vector<std::string>& rows,
                                            const std::string& path);
void print_table(const Trace& trace, const std::vector<ReplayResult>& results,
                 const TraceFacts* facts = nullptr);
// The same for a trace not held (a stream): facts.unique_blocks = 0 when not counted.
void print_table(const std::string& trace_name, uint32_t block_tokens, const TraceFacts& facts,
                 const std::vector<ReplayResult>& results);
// One stderr line per row whose policy's model was never fitted (ReplayResult::model_fitted).
void warn_unfitted_models(const std::vector<ReplayResult>& results);
void write_json(const std::string& path, const std::vector<ReplayResult>& results);
// One CSV row per result (a header first): the identifying fields, hit rates, capacity in GB,
// and the TTFT metrics. Throws naming the file if it cannot be written in full.
void write_csv(const std::string& path, const std::vector<ReplayResult>& results);

}  // namespace kvpolicy::cli
