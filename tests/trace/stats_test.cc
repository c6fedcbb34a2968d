// trace stats' arrival figures (trace/trace_stats.h): the busiest tenth of the span and the
// coefficient of variation of the gaps, against their closed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kvpolicy/trace/trace_stats.h"

namespace kvpolicy {
namespace {

Trace at_times(const std::vector<Time>& times) {
  Trace t;
  t.block_tokens = 16;
  uint64_t key = 1;
  for (Time time : times) {
    std::vector<uint64_t> ids{key++};
    t.add_request(time, ids, 16, 1);
  }
  return t;
}

TEST(TraceStats, EvenArrivalsHaveATenthInEachTenthAndNoVariation) {
  std::vector<Time> times;
  for (Time s = 0; s <= 100; ++s) times.push_back(s * kMicrosPerSecond);  // 101 arrivals, 100 s
  TraceStats s = trace_stats(at_times(times));
  EXPECT_DOUBLE_EQ(s.peak_tenth_share, 10.0 / 101);  // [t, t + 10 s) holds 10
  EXPECT_NEAR(s.gap_cv, 0, 1e-12);
  EXPECT_NEAR(s.request_rate, 1.01, 1e-12);
}

TEST(TraceStats, AFrontLoadedBurstIsItsShareOfRequests) {
  // 50 arrivals in the first 49 ms, then 50 from 1 s to 10 s: the span is 10 s, its busiest
  // tenth [0, 1 s) holds the burst, half the requests (5x the mean rate).
  std::vector<Time> times;
  for (Time ms = 0; ms < 50; ++ms) times.push_back(ms * 1000);
  for (int k = 0; k < 50; ++k)
    times.push_back(kMicrosPerSecond + Time(k) * 9 * kMicrosPerSecond / 49);
  TraceStats s = trace_stats(at_times(times));
  EXPECT_DOUBLE_EQ(s.peak_tenth_share, 0.5);
  // Gaps: 49 of 1 ms, one of 951 ms, 49 of about 184 ms.
  double sum = 0, sq = 0;
  for (size_t i = 1; i < times.size(); ++i) {
    double gap = double(times[i] - times[i - 1]);
    sum += gap, sq += gap * gap;
  }
  double mean = sum / 99;
  EXPECT_NEAR(s.gap_cv, std::sqrt(sq / 99 - mean * mean) / mean, 1e-9);
  EXPECT_NEAR(s.gap_cv, 1.2377, 1e-4);
  // All at once: the whole trace is its busiest tenth.
  EXPECT_DOUBLE_EQ(trace_stats(at_times({5, 5, 5})).peak_tenth_share, 1.0);
  EXPECT_DOUBLE_EQ(trace_stats(at_times({5, 5, 5})).gap_cv, 0);
}

TEST(TraceStats, PoissonArrivalsHaveGapsOfCoefficientOfVariationOne) {
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> gap(1.0);  // one a second
  std::vector<Time> times{0};
  for (int i = 0; i < 200000; ++i)
    times.push_back(times.back() + Time(std::llround(gap(rng) * kMicrosPerSecond)));
  TraceStats s = trace_stats(at_times(times));
  EXPECT_NEAR(s.gap_cv, 1.0, 0.01);
  EXPECT_NEAR(s.peak_tenth_share, 0.1, 0.005);  // a tenth of 200,000 s holds about 20,000
}

}  // namespace
}  // namespace kvpolicy
