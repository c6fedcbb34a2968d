// Sweeps: many replay configurations on all cores, streamed to a JSONL file, resumable.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kvpolicy/sim/sim.h"

namespace kvpolicy {

struct SweepConfig {
  PolicySpec policy;
  size_t capacity_blocks = 0;
  double capacity_fraction = -1;  // < 0 when given in blocks
  ReplayOptions options;          // its progress callback is replaced by the sweep's
};

struct SweepOptions {
  unsigned jobs = 0;      // threads; 0 = every core
  std::string json_path;  // append one line per finished result (empty = none)
  // Read results already in json_path and skip their configurations, so an interrupted sweep
  // continues where it stopped.
  bool resume = false;
  // Share of all configurations done, and the one running.
  std::function<void(double, const std::string&)> progress;
};

// One configuration per (capacity, policy), capacities outer, each with `base`'s options and a
// DRAM tier of dram_ratio x its HBM blocks: the grid `simulate` and `compare` sweep.
std::vector<SweepConfig> grid_configs(const std::vector<PolicySpec>& policies,
                                      const std::vector<Capacity>& capacities, size_t unique_blocks,
                                      const ReplayOptions& base, double dram_ratio = 0);

// Runs every configuration; results come back in configuration order. The oracle is computed
// once when a policy needs it. `facts`, when given, are the trace's (trace_facts), not counted
// again.
std::vector<ReplayResult> run_sweep(const Trace& trace, const std::vector<SweepConfig>& configs,
                                    const SweepOptions& options, const TraceFacts* facts = nullptr);

// What run_sweep and the streamed sweep share: resuming from options.json_path, the threads, the
// results file. `replay_one` runs one configuration with the options it is given.
using ReplayFn = std::function<ReplayResult(const SweepConfig&, const ReplayOptions&)>;
std::vector<ReplayResult> run_configs(const std::string& trace_name, uint32_t block_tokens,
                                      double infinite_hit_rate,
                                      const std::vector<SweepConfig>& configs,
                                      const SweepOptions& options, const ReplayFn& replay_one);

// What identifies a result for resuming: trace, policy, capacities, seed and cost settings.
std::string result_key(const ReplayResult& r);
// Parses a line written by ReplayResult::to_json; throws InputError naming path and line.
ReplayResult parse_result_json(const std::string& line, const std::string& path, uint64_t line_no);

}  // namespace kvpolicy
