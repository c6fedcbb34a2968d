// Nearest-rank percentiles, the one definition every report uses.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

namespace kvpolicy {

// The value at 1-based rank ceil(p/100 x n) of an ascending array (p in [0, 100]); 0 if empty.
template <typename T>
T percentile_nearest_rank(std::span<const T> sorted, double p) {
  if (sorted.empty()) return T{};
  if (p <= 0) return sorted.front();
  // The epsilon keeps ranks that are whole in exact arithmetic (0.9 x 100 = 90) from rounding
  // up to the next rank in binary floating point.
  double rank = std::ceil(p / 100.0 * double(sorted.size()) - 1e-9);
  size_t i = static_cast<size_t>(std::clamp(rank, 1.0, double(sorted.size())));
  return sorted[i - 1];
}

template <typename T>
T percentile_nearest_rank(const std::vector<T>& sorted, double p) {
  return percentile_nearest_rank(std::span<const T>(sorted), p);
}

// A distribution-free confidence interval for the p-th percentile (0 < p < 100) of the
// distribution a sample of n values was drawn from: 1-based ranks [low, high] of the ascending
// sample with P(x_low <= the percentile <= x_high) >= level for any continuous distribution,
// each tail at most (1 - level) / 2 (the binomial order-statistic interval). low = 0 when no
// rank bounds it below, high = n + 1 when none bounds it above (too few values beyond it: a P99
// of fewer than 368 values has no 95 % upper bound).
struct RankInterval {
  size_t low = 0, high = 0;
};
RankInterval percentile_rank_interval(size_t n, double p, double level = 0.95);

}  // namespace kvpolicy
