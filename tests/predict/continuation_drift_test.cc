// Platt scaling, the drift rule and per-turn metrics of LPC's continuation scores
// (include/kvpolicy/predict/continuation_calibration.h, turn_metrics.h; docs/policies.md, lpc).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kvpolicy/core/error.h"
#include "kvpolicy/predict/continuation_calibration.h"
#include "kvpolicy/predict/turn_metrics.h"

namespace kvpolicy {
namespace {

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

TEST(PlattScaling, RecoversAKnownMap) {
  // Scores p = sigmoid(x) whose true probability is sigmoid(2x + 0.5): the fit finds a = 2,
  // b = 0.5, and the map it gives is increasing.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1), x(-3, 3);
  std::vector<double> p;
  std::vector<uint8_t> y;
  for (int i = 0; i < 40000; ++i) {
    double xi = x(rng);
    p.push_back(sigmoid(xi));
    y.push_back(u(rng) < sigmoid(2 * xi + 0.5));
  }
  PlattScaling s = PlattScaling::fit(p, y);
  EXPECT_NEAR(s.a, 2.0, 0.1);
  EXPECT_NEAR(s.b, 0.5, 0.06);
  double last = -1;
  for (double q = 0.01; q < 1; q += 0.01) {
    EXPECT_GT(s.apply(q), last) << q;
    last = s.apply(q);
  }
}

TEST(PlattScaling, CalibratedScoresStayPut) {
  // Labels drawn with the score's own probability: the fitted map is (nearly) the identity.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> p;
  std::vector<uint8_t> y;
  for (int i = 0; i < 40000; ++i) {
    double pi = 0.02 + 0.96 * u(rng);
    p.push_back(pi);
    y.push_back(u(rng) < pi);
  }
  PlattScaling s = PlattScaling::fit(p, y);
  EXPECT_NEAR(s.a, 1.0, 0.06);
  EXPECT_NEAR(s.b, 0.0, 0.04);
  for (double q = 0.05; q < 1; q += 0.05) EXPECT_NEAR(s.apply(q), q, 0.015) << q;
  const PlattScaling identity;
  EXPECT_EQ(identity.apply(0.37), 0.37);  // the default is the identity, exactly
}

TEST(PlattScaling, StaysMonotoneOnReversedScoresAndRefusesBadInput) {
  // Scores that rank backwards would need a < 0: clamped at 0, the map is the constant rate.
  std::vector<double> p{0.9, 0.8, 0.7, 0.3, 0.2, 0.1};
  std::vector<uint8_t> y{0, 0, 0, 1, 1, 1};
  PlattScaling s = PlattScaling::fit(p, y);
  EXPECT_EQ(s.a, 0.0);
  EXPECT_NEAR(s.apply(0.1), s.apply(0.9), 1e-12);
  EXPECT_THROW(PlattScaling::fit(std::vector<double>{}, std::vector<uint8_t>{}), Error);
  EXPECT_THROW(PlattScaling::fit(std::vector<double>{0.5}, std::vector<uint8_t>{1, 0}), Error);
}

// Sessions of 1 to 20 turns, one after another (a turn every 10 s, sessions 300 s apart); each
// turn's score is 0.9 or 0.1 and `truth(score)` the probability that the session goes on.
template <typename Truth>
ContinuationDrift run_stream(Truth truth, int sessions, uint64_t seed) {
  DriftOptions o;
  o.timeout_s = 50;
  ContinuationDrift d(o);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  double t = 0;
  for (int s = 0; s < sessions; ++s, t += 300) {
    double now = t;
    for (int turn = 1;; ++turn, now += 10) {
      const double p = u(rng) < 0.5 ? 0.9 : 0.1;
      d.observe(static_cast<SessionId>(s), now, p);
      if (turn == 20 || !(u(rng) < truth(p))) break;
    }
  }
  d.observe(kNoSession, t + 1000, 0.5);  // expires every pending turn
  return d;
}

TEST(ContinuationDrift, SameRateKeepsTrust) {
  // The scores are right: observed rate = expected rate, and they rank the turns.
  ContinuationDrift d = run_stream([](double p) { return p; }, 3000, 3);
  EXPECT_GT(d.resolved(), 5000u);
  EXPECT_NEAR(d.observed_rate(), d.expected_rate(), 0.05);
  EXPECT_GT(d.correlation(), 0.6);  // 0.8 in expectation: cov 0.16 / sqrt(0.16 · 0.25)
  EXPECT_GT(d.trust(), 0.6);
  const double l = d.trust() * std::log(0.9 / 0.1);  // the logit, shrunk by the trust
  EXPECT_NEAR(d.shrink(0.9), 1 / (1 + std::exp(-l)), 1e-9);
}

TEST(ContinuationDrift, ShiftedRateLowersTrust) {
  // The same scores, but sessions go on with probability 0.15 whatever the score says: the
  // observed rate (0.15) is far below the expected one (0.5), and the scores lose all trust, so
  // every request gets p = 1/2 (LPC's order becomes LRU's).
  ContinuationDrift d = run_stream([](double) { return 0.15; }, 3000, 3);
  EXPECT_LT(d.observed_rate(), 0.25);
  EXPECT_GT(d.expected_rate(), 0.4);
  EXPECT_EQ(d.trust(), 0.0);
  EXPECT_EQ(d.shrink(0.9), 0.5);
  EXPECT_EQ(d.shrink(0.1), 0.5);
}

TEST(ContinuationDrift, RightRateWithoutSkillLowersTrust) {
  // The rate matches (0.5 on both sides) but the score says nothing: no correlation, no trust.
  ContinuationDrift d = run_stream([](double) { return 0.5; }, 3000, 5);
  EXPECT_NEAR(d.observed_rate(), d.expected_rate(), 0.1);
  EXPECT_LT(d.trust(), 0.2);
}

TEST(ContinuationDrift, ResolvesByNextTurnOrTimeout) {
  DriftOptions o;
  o.timeout_s = 100;
  o.min_resolved = 1;
  ContinuationDrift d(o);
  d.observe(1, 0, 0.8);
  d.observe(2, 10, 0.3);
  EXPECT_EQ(d.resolved(), 0u);
  d.observe(1, 50, 0.6);  // session 1 went on: its first turn continued
  EXPECT_EQ(d.resolved(), 1u);
  EXPECT_DOUBLE_EQ(d.observed_rate(), 1.0);
  EXPECT_DOUBLE_EQ(d.expected_rate(), 0.8);
  d.observe(kNoSession, 111, 0.5);  // session 2's turn (t = 10) timed out: it ended
  EXPECT_EQ(d.resolved(), 2u);
  d.observe(kNoSession, 151, 0.5);  // session 1's second turn (t = 50) too
  EXPECT_EQ(d.resolved(), 3u);
  const double keep = 1 - 1 / o.window;
  const double w = keep * keep + keep + 1;
  EXPECT_NEAR(d.observed_rate(), keep * keep / w, 1e-12);
  EXPECT_NEAR(d.expected_rate(), (keep * keep * 0.8 + keep * 0.3 + 0.6) / w, 1e-12);
  EXPECT_THROW(ContinuationDrift(DriftOptions{.timeout_s = 0}), ConfigError);
}

TEST(ContinuationDrift, CountsTurnsInArrivalOrder) {
  // A turn resolved early waits for the older turns: what is counted is always every turn up to
  // some time, whichever way each one ended.
  DriftOptions o;
  o.timeout_s = 100;
  o.min_resolved = 1;
  ContinuationDrift d(o);
  d.observe(1, 0, 0.2);
  d.observe(2, 10, 0.9);
  d.observe(2, 20, 0.9);  // session 2's first turn continued, but session 1's is still open
  EXPECT_EQ(d.resolved(), 0u);
  d.observe(3, 101, 0.5);  // session 1's turn timed out: it and session 2's first are counted
  EXPECT_EQ(d.resolved(), 2u);
  d.observe(1, 102, 0.5);  // a late next turn of session 1 changes nothing counted
  EXPECT_EQ(d.resolved(), 2u);
  const double keep = 1 - 1 / o.window;
  EXPECT_NEAR(d.observed_rate(), 1 / (keep + 1), 1e-12);
  EXPECT_NEAR(d.expected_rate(), (keep * 0.2 + 0.9) / (keep + 1), 1e-12);
}

TEST(TurnMetrics, MatchesAHandComputation) {
  const std::vector<uint32_t> turns{1, 1, 2, 2, 2, 5, 6};
  const std::vector<double> p{0.9, 0.8, 0.7, 0.2, 0.6, 0.3, 0.8};
  const std::vector<uint8_t> y{1, 1, 1, 0, 0, 0, 1};
  auto rows = per_turn_metrics(p, y, turns);
  ASSERT_EQ(rows.size(), 3u);  // turns 3 and 4 have no example
  EXPECT_EQ(rows[0].turns, "1");
  EXPECT_EQ(rows[0].n, 2u);
  EXPECT_DOUBLE_EQ(rows[0].base_rate, 1.0);
  EXPECT_EQ(rows[0].mcc, 0.0);  // no negative: MCC undefined, reported 0
  EXPECT_TRUE(std::isnan(rows[0].auc));
  // Turn 2: at 0.5, tp 1 (0.7), fp 1 (0.6), tn 1 (0.2): MCC 1 / sqrt(2·1·2·1); the positive
  // outranks both negatives: AUC 1; Brier (0.09 + 0.04 + 0.36) / 3.
  EXPECT_EQ(rows[1].turns, "2");
  EXPECT_EQ(rows[1].n, 3u);
  EXPECT_NEAR(rows[1].base_rate, 1.0 / 3, 1e-12);
  EXPECT_NEAR(rows[1].mean_p, 0.5, 1e-12);
  EXPECT_NEAR(rows[1].mcc, 0.5, 1e-12);
  EXPECT_NEAR(rows[1].auc, 1.0, 1e-12);
  EXPECT_NEAR(rows[1].brier, 0.49 / 3, 1e-12);
  EXPECT_EQ(rows[2].turns, "5+");  // turns 5 and 6 together
  EXPECT_EQ(rows[2].n, 2u);
  EXPECT_NEAR(rows[2].mcc, 1.0, 1e-12);
  const std::string json = turn_metrics_json(rows);
  EXPECT_NE(json.find("\"turns\":\"5+\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"auc\":null"), std::string::npos) << json;
  EXPECT_THROW(per_turn_metrics(p, y, std::vector<uint32_t>{1}), Error);
}

}  // namespace
}  // namespace kvpolicy
