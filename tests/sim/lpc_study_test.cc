// The LPC study's derived figures: the capacity a curve needs for a hit rate, and the savings
// and gap shares computed from the sweep.
#include "kvpolicy/sim/lpc_study.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kvpolicy/core/error.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

TEST(LpcStudy, CapacityForHitRateInterpolates) {
  std::vector<double> caps = {0.1, 0.2, 0.4};
  std::vector<double> hits = {0.10, 0.30, 0.50};
  bool at_most = false;
  EXPECT_NEAR(capacity_for_hit_rate(caps, hits, 0.20, &at_most), 0.15, 1e-12);
  EXPECT_FALSE(at_most);
  EXPECT_NEAR(capacity_for_hit_rate(caps, hits, 0.40, &at_most), 0.30, 1e-12);
  EXPECT_EQ(capacity_for_hit_rate(caps, hits, 0.05, &at_most), 0.1);
  EXPECT_TRUE(at_most);
  EXPECT_TRUE(std::isnan(capacity_for_hit_rate(caps, hits, 0.6, &at_most)));
}

TEST(LpcStudy, BeladyNeedsLessCacheAndClosesTheWholeGapToItself) {
  Trace trace = testing::random_workload({.requests = 600});
  LpcStudyOptions o;
  o.capacities = parse_capacity_list("0.05,0.1,0.2,0.4");
  o.policies = "lru,belady,fifo";
  o.oracle = "belady";
  o.jobs = 1;
  LpcStudy s = run_lpc_study(trace, o);
  ASSERT_EQ(s.runs.size(), 12u);
  for (const CapacitySaving& x : s.savings) {
    if (x.policy != "belady") continue;
    EXPECT_GE(x.hit_rate, x.lru_hit_rate);
    EXPECT_LE(x.capacity_needed, x.capacity_fraction + 1e-12);  // never more cache than LRU
    if (!std::isnan(x.gap_closed)) EXPECT_NEAR(x.gap_closed, 1.0, 1e-12);
  }
  o.baseline = "lfu";
  EXPECT_THROW(run_lpc_study(trace, o), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
