// The continuation classifier's quality per turn (docs/results/lpc.md, "across datasets"): a
// score that is right on first turns and at chance later looks good overall, so `classifier
// eval` breaks its metrics down by the turn index.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kvpolicy {

struct TurnGroupMetrics {
  std::string turns;  // "1", "2", ..., or "5+" for the last group
  uint64_t n = 0;
  double base_rate = 0;  // share of label 1
  double mean_p = 0;     // mean score
  double mcc = 0;        // at the 0.5 threshold; 0 when a row or column of the table is empty
  double auc = 0;        // NaN when the group holds one label only
  double brier = 0;
};

// Groups turn 1, 2, ..., last_group - 1 and last_group+ ("5+" for 5); a group without
// examples is left out. Throws Error if the spans differ in length or last_group is 0.
std::vector<TurnGroupMetrics> per_turn_metrics(std::span<const double> p,
                                               std::span<const uint8_t> labels,
                                               std::span<const uint32_t> turns,
                                               uint32_t last_group = 5);

// A table with one row per group, and a JSON array of objects (turns, n, base_rate, mean_p,
// mcc, auc, brier; a NaN is null).
std::string format_turn_metrics(const std::vector<TurnGroupMetrics>& rows);
std::string turn_metrics_json(const std::vector<TurnGroupMetrics>& rows);

}  // namespace kvpolicy
