// LPC's decay rate chosen on a validation trace (docs/policies.md, lpc): the rate scale_s at which
// LPC's mean block hit rate over a few capacities is highest, on a trace built from the
// *validation* split of the classifier's training data (`trace build --split validation`), so
// the test split never picks it. Shared by `kvpolicy study lpc-decay` and Python.
#pragma once

#include <string>
#include <vector>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy::app {

struct LpcDecayOptions {
  std::vector<double> scales = {0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2};  // per second
  std::string capacities = "2%,5%,10%,20%";
  std::string lpc_params;  // more of lpc's parameters, "k=v,k=v" (e.g. drift=false)
  uint64_t seed = 1;
  unsigned jobs = 0;  // replays at once; 0 = every core
};

struct LpcDecayChoice {
  std::vector<double> scales;
  std::vector<std::string> capacities;         // their labels
  std::vector<std::vector<double>> hit_rates;  // [scale][capacity], block hit rate
  std::vector<double> mean_hit_rate;           // per scale, over the capacities
  std::vector<double> lru_hit_rates;           // per capacity, for reference
  double chosen = 0;                           // the scale of the highest mean (first on ties)
  std::string json() const;                    // one object: the table and the choice
};

// Throws ConfigError on an empty or non-positive scale, bad capacities, or a trace LPC cannot
// replay with `lpc_params` (e.g. no continuation scores with the default predictor).
LpcDecayChoice choose_lpc_decay(const Trace& trace, const LpcDecayOptions& options,
                                const CostModel& cost);

}  // namespace kvpolicy::app
