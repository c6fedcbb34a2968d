#include "kvpolicy/core/percentile.h"

namespace kvpolicy {

// The number of sample values below the percentile is Binomial(n, p/100), so x_r lies at or
// below it with probability P(B >= r): low is the largest rank with P(B <= low - 1) <= tail,
// high the smallest with P(B <= high - 1) >= 1 - tail. The CDF is summed over the pmf in log
// space (lgamma), so n in the millions neither overflows nor underflows. It starts 12 standard
// deviations below the mean, where the mass left out is below 1e-30, so a run of a million
// requests sums a few thousand terms, not a million.
RankInterval percentile_rank_interval(size_t n, double p, double level) {
  const double q = p / 100.0, tail = (1.0 - level) / 2.0;
  RankInterval out{0, n + 1};
  if (n == 0 || q <= 0 || q >= 1) return out;
  const double log_q = std::log(q), log_1q = std::log1p(-q), lg_n1 = std::lgamma(double(n) + 1);
  const double start = double(n) * q - 12 * std::sqrt(double(n) * q * (1 - q)) - 1;
  const size_t first = start > 0 ? size_t(start) : 0;
  out.low = first;  // P(B <= first - 1) is below 1e-30
  double cdf = 0;   // P(B <= k)
  for (size_t k = first; k < n; ++k) {
    const double kk = double(k);
    cdf += std::exp(lg_n1 - std::lgamma(kk + 1) - std::lgamma(double(n) - kk + 1) + kk * log_q +
                    (double(n) - kk) * log_1q);
    if (cdf <= tail) out.low = k + 1;  // rank k + 1 has P(B <= k) <= tail
    if (cdf >= 1.0 - tail) {
      out.high = k + 1;
      break;
    }
  }
  return out;
}

}  // namespace kvpolicy
