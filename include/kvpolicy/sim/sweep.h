// Replay sweeps' cells: the configurations of a grid, each one's resume key, cost and replay.
// Results files, resuming, shards and ranks are the application layer's (app/sweep.h).
#pragma once

#include <functional>
#include <mutex>
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

// One configuration per (capacity, policy), capacities outer, each with `base`'s options and a
// DRAM tier of dram_ratio x its HBM blocks: the grid `simulate` and `compare` sweep. Capacities
// are shares or whole blocks (replay_capacity converts the other units).
std::vector<SweepConfig> grid_configs(const std::vector<PolicySpec>& policies,
                                      const std::vector<CapacitySpec>& capacities,
                                      size_t unique_blocks, const ReplayOptions& base,
                                      double dram_ratio = 0);

// One replay of a configuration with the options it is given (its progress callback set).
using ReplayFn = std::function<ReplayResult(const SweepConfig&, const ReplayOptions&)>;

// A sweep's configurations one at a time, for runs that hand them out (threads, shards, MPI
// ranks): each one's resume key and estimated cost before it runs, and its replay.
class ReplayCells {
 public:
  // Over a trace in memory (which must outlive this): its oracle is computed once, by the first
  // replay that needs it. `facts`, when given, are the trace's, not counted again.
  ReplayCells(const Trace& trace, std::vector<SweepConfig> configs,
              const TraceFacts* facts = nullptr);
  // Over any other source (a streamed trace): what results name, and how to replay one.
  // `fingerprint` (TraceChecksum) may be empty when no pass counted it: the keys then match no
  // row of a results file (each result carries the one its replay counted).
  ReplayCells(std::string trace_name, std::string fingerprint, uint32_t block_tokens,
              double infinite_hit_rate, uint64_t block_accesses, std::vector<SweepConfig> configs,
              ReplayFn replay_one);
  ReplayCells(const ReplayCells&) = delete;  // replay_one_ may point into it
  ReplayCells& operator=(const ReplayCells&) = delete;

  size_t size() const { return configs_.size(); }
  const std::string& trace_name() const { return trace_name_; }
  const std::string& fingerprint() const { return fingerprint_; }
  const SweepConfig& config(size_t i) const { return configs_[i]; }
  // The key its result will have (result_key), known before it runs.
  std::string key(size_t i) const;
  // Relative cost for handing out the largest first: the trace's block accesses, doubled for a
  // policy that reads the future (the oracle's bookkeeping; DESIGN allows it up to 3x LRU).
  double weight(size_t i) const;
  // Thread-safe; `progress` hears the share of this replay done.
  ReplayResult run(size_t i, const std::function<void(double)>& progress = {}) const;

 private:
  std::string trace_name_;
  std::string fingerprint_;
  uint32_t block_tokens_;
  double infinite_hit_rate_;
  uint64_t block_accesses_;
  std::vector<SweepConfig> configs_;
  ReplayFn replay_one_;
  mutable std::once_flag oracle_once_;
  mutable Oracle oracle_;
};

// Runs every cell on `jobs` threads (0 = every core), in memory: no file, no progress. Results in
// configuration order.
std::vector<ReplayResult> run_cells(const ReplayCells& cells, unsigned jobs);

// run_cells over a trace in memory.
std::vector<ReplayResult> run_sweep(const Trace& trace, const std::vector<SweepConfig>& configs,
                                    unsigned jobs, const TraceFacts* facts = nullptr);

// What identifies a result for resuming: trace, policy, capacities, seed and cost settings.
std::string result_key(const ReplayResult& r);
// Parses a line written by ReplayResult::to_json; throws InputError naming path and line.
ReplayResult parse_result_json(const std::string& line, const std::string& path, uint64_t line_no);

}  // namespace kvpolicy
