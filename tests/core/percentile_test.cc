#include "kvpolicy/core/percentile.h"

#include <gtest/gtest.h>

#include <random>

namespace kvpolicy {
namespace {

// The binomial CDF by the pmf's recurrence (in logs, so 0.01^400 does not underflow), a
// reference independent of the lgamma form the code sums.
double binomial_cdf(size_t n, double q, size_t k) {
  double log_pmf = double(n) * std::log(1 - q), cdf = 0;
  for (size_t i = 0; i <= k && i <= n; ++i) {
    cdf += std::exp(log_pmf);
    log_pmf += std::log(double(n - i)) - std::log(double(i + 1)) + std::log(q / (1 - q));
  }
  return cdf;
}

// The ranks are the tightest equal-tailed ones: each end meets its tail bound, and moving
// either end one rank inward breaks it.
TEST(PercentileRankInterval, EndsAreTheTightestMeetingEachTail) {
  for (const auto& [n, p] : std::vector<std::pair<size_t, double>>{
           {20, 50}, {100, 50}, {1000, 50}, {500, 90}, {400, 99}, {2000, 99}}) {
    SCOPED_TRACE(testing::Message() << "n " << n << " p " << p);
    const RankInterval r = percentile_rank_interval(n, p);
    const double q = p / 100;
    ASSERT_GE(r.low, 1u);
    ASSERT_LE(r.high, n);
    EXPECT_LE(binomial_cdf(n, q, r.low - 1), 0.025);
    EXPECT_GT(binomial_cdf(n, q, r.low), 0.025);
    EXPECT_GE(binomial_cdf(n, q, r.high - 1), 0.975);
    EXPECT_LT(binomial_cdf(n, q, r.high - 2), 0.975);
    EXPECT_LE(r.low, size_t(std::ceil(q * double(n))));  // around the nearest rank
    EXPECT_GE(r.high, size_t(std::ceil(q * double(n))));
  }
  // The normal approximation for the median of 1,000: 500 -/+ 1.96 x sqrt(250), about 469-532.
  const RankInterval m = percentile_rank_interval(1000, 50);
  EXPECT_NEAR(double(m.low), 469.5, 1.5);
  EXPECT_NEAR(double(m.high), 531.5, 1.5);
  // And the P99 of a million: 990,000 -/+ 1.96 x sqrt(9,900), about 989,805-990,196.
  const RankInterval t = percentile_rank_interval(1'000'000, 99);
  EXPECT_NEAR(double(t.low), 989805, 3);
  EXPECT_NEAR(double(t.high), 990196, 3);
}

// Too few values beyond the percentile for a bound: P(all 123 below the P99) = 0.29, so even
// the largest value is not a 95 % upper bound; a median of 5 has no bound either side.
TEST(PercentileRankInterval, NoRankWhenTheSampleCannotBoundIt) {
  EXPECT_EQ(percentile_rank_interval(123, 99).high, 124u);
  EXPECT_GE(percentile_rank_interval(123, 99).low, 1u);
  EXPECT_EQ(percentile_rank_interval(5, 50).low, 0u);
  EXPECT_EQ(percentile_rank_interval(5, 50).high, 6u);
  EXPECT_EQ(percentile_rank_interval(0, 50).low, 0u);
  EXPECT_EQ(percentile_rank_interval(0, 50).high, 1u);
}

// Coverage by simulation: over 4,000 samples of 400 exponential values, the interval holds the
// true P99 (ln 100) at least 95 % of the time, less three standard errors.
TEST(PercentileRankInterval, CoversTheTruePercentileAtTheStatedLevel) {
  std::mt19937_64 rng(1);
  std::exponential_distribution<double> draw(1.0);
  const size_t n = 400, trials = 4000;
  const RankInterval r = percentile_rank_interval(n, 99);
  ASSERT_LE(r.high, n);
  const double truth = std::log(100.0);
  size_t covered = 0;
  std::vector<double> x(n);
  for (size_t t = 0; t < trials; ++t) {
    for (double& v : x) v = draw(rng);
    std::sort(x.begin(), x.end());
    covered += x[r.low - 1] <= truth && truth <= x[r.high - 1];
  }
  EXPECT_GE(double(covered) / trials, 0.95 - 3 * std::sqrt(0.95 * 0.05 / trials));
}

}  // namespace
}  // namespace kvpolicy
