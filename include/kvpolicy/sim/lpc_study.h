// The LPC paper's evaluation (docs/policies.md, lpc): hit rate against capacity for LRU, LPC
// and its oracle, Belady and other policies on a conversation trace, and from those curves the
// cache each policy needs for LRU's hit rate and the share of the LRU-to-oracle gap it closes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kvpolicy/sim/sim.h"
#include "kvpolicy/sim/sweep.h"

namespace kvpolicy {

struct LpcStudyOptions {
  // In any unit (tokens and KV memory through cost_model); the curves are drawn against each
  // one's share of the unique blocks.
  std::vector<CapacitySpec> capacities =
      parse_capacity_list("0.01,0.02,0.03,0.05,0.075,0.1,0.15,0.2");
  std::string policies = "lru,lpc,lpc:predictor=oracle,belady,wa,s3fifo";
  std::string baseline = "lru";
  std::string oracle = "lpc:predictor=oracle";  // the gap's upper end
  uint64_t seed = 1;
  // Prices TTFT and sizes each result's capacity_gb; null = the default preset.
  const CostModel* cost_model = nullptr;
  unsigned jobs = 0;  // replays at once; 0 = every core
  // Runs the study's replays, results in configuration order (empty: run_sweep on `jobs`
  // threads); the command line's streams them to its --json file and resumes (app/sweep.h).
  std::function<std::vector<ReplayResult>(const Trace&, const std::vector<SweepConfig>&)> replay;
};

// One policy at one of LRU's points.
struct CapacitySaving {
  std::string policy;
  double capacity_fraction = 0;  // where LRU was measured
  double lru_hit_rate = 0;
  double hit_rate = 0;  // this policy's, at the same capacity
  // The capacity at which this policy's curve reaches LRU's hit rate (linear interpolation
  // between measured points); NaN when it never does within the sweep; `at_most` when it
  // already does at the smallest capacity measured (the value is then an upper bound).
  double capacity_needed = 0;
  bool at_most = false;
  double saving() const { return 1 - capacity_needed / capacity_fraction; }
  // (hit rate - LRU's) / (oracle's - LRU's); NaN when the oracle does not beat LRU.
  double gap_closed = 0;
};

struct LpcStudy {
  std::vector<ReplayResult> runs;  // every policy at every capacity
  std::vector<CapacitySaving> savings;
};

LpcStudy run_lpc_study(const Trace& trace, const LpcStudyOptions& options);

// The capacity at which the curve (capacities ascending, hit rates) first reaches `target`,
// by linear interpolation; NaN if never; the first capacity with *at_most set if already there.
double capacity_for_hit_rate(const std::vector<double>& capacities,
                             const std::vector<double>& hit_rates, double target, bool* at_most);

}  // namespace kvpolicy
