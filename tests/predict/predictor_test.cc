// The oracle and noisy predictors, the feature tracker and the audit wrapper.
#include "kvpolicy/predict/predictor.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy {
namespace {

// Requests of single raw ids at the given times (seconds); access index = request index.
Trace flat(const std::vector<std::pair<double, uint64_t>>& reqs) {
  Trace t;
  for (auto& [sec, id] : reqs)
    t.add_request(Time(sec * kMicrosPerSecond), std::span<const uint64_t>(&id, 1), 16, 1);
  return t;
}

// The start of request r, as a policy tells its predictor.
RequestView request(RequestIndex r) {
  RequestView v;
  v.index = r;
  return v;
}

AccessInfo access_of(const Trace& t, size_t r, bool hit) {
  AccessInfo a;
  a.now = t.time[r];
  a.req = RequestIndex(r);
  a.access = t.block_offset[r];
  a.kind = hit ? AccessKind::kReused : AccessKind::kInserted;
  return a;
}

TEST(StrictTimes, SharedTimestampsBecomeDistinctInRequestOrder) {
  Trace t = flat({{0, 1}, {0, 2}, {0, 3}, {5, 1}, {5, 2}});
  std::vector<Time> s = strict_request_times(t.time);
  EXPECT_EQ(s, (std::vector<Time>{0, 1, 2, 5'000'000, 5'000'001}));
}

// The noisy oracle adds up to 1e17 us to a true next time: a view holding a time near 2^63
// (built through the C++ API, not read) overflowed; it is refused when the predictor is built.
TEST(StrictTimes, TimesPast2To62AreRefused) {
  std::vector<Time> late = {0, INT64_MAX - 5};
  EXPECT_THROW(strict_request_times(late), Error);
  std::vector<Time> negative = {-1};
  EXPECT_THROW(strict_request_times(negative), Error);
  Trace t = flat({{0, 1}, {1, 1}});
  t.time[1] = INT64_MAX - 5;
  Oracle o = compute_oracle(t);
  EXPECT_THROW(NoisyPredictor(o.view(t), 1.0, NoiseKind::kLogNormal, 3, 1, NoiseRedraw::kPerAccess),
               Error);
}

TEST(OraclePredictor, AnswersTheNextRequestOfTheKey) {
  // Items 1 and 2 are next used by two requests sharing a timestamp; the earlier request must
  // still look sooner (Belady's order).
  Trace t = flat({{0, 1}, {1, 2}, {2, 3}, {7, 2}, {7, 1}});
  Oracle o = compute_oracle(t);
  OraclePredictor p(o.view(t));
  p.on_access(0, access_of(t, 0, false));  // node 0 holds item 1
  p.on_access(1, access_of(t, 1, false));  // node 1 holds item 2
  p.on_access(2, access_of(t, 2, false));  // node 2 holds item 3, never used again
  NodeId nodes[] = {0, 1, 2};
  Time out[3];
  p.predict(nodes, out);
  EXPECT_EQ(out[0], 7'000'001);  // request 4 at 7 s, after request 3 at the same time
  EXPECT_EQ(out[1], 7'000'000);
  EXPECT_EQ(out[2], kNever);
  EXPECT_EQ(p.predictions(), 3u);
  EXPECT_EQ(p.batches(), 1u);
  // A later access moves the answer to the access after it.
  p.on_access(1, access_of(t, 3, true));
  p.predict(std::span<const NodeId>(nodes + 1, 1), std::span<Time>(out, 1));
  EXPECT_EQ(out[0], kNever);
}

Trace long_flat(size_t n) {
  std::vector<std::pair<double, uint64_t>> reqs;
  for (size_t i = 0; i < n; ++i) reqs.push_back({double(i), i % 37});
  return flat(reqs);
}

TEST(NoisyPredictor, ZeroNoiseIsTheOracleFullAdversarialIsItsNegation) {
  Trace t = long_flat(400);
  Oracle o = compute_oracle(t);
  OraclePredictor exact(o.view(t));
  NoisyPredictor clean(o.view(t), 0.0, NoiseKind::kAdversarial, 1, 7, NoiseRedraw::kPerAccess);
  NoisyPredictor adv(o.view(t), 1.0, NoiseKind::kAdversarial, 1, 7, NoiseRedraw::kPerAccess);
  for (size_t r = 0; r < t.size(); ++r) {
    NodeId n = NodeId(r);
    for (NextAccessPredictor* p :
         {static_cast<NextAccessPredictor*>(&exact), static_cast<NextAccessPredictor*>(&clean),
          static_cast<NextAccessPredictor*>(&adv)})
      p->on_access(n, access_of(t, r, false));
    Time a, b, c;
    exact.predict(std::span<const NodeId>(&n, 1), std::span<Time>(&a, 1));
    clean.predict(std::span<const NodeId>(&n, 1), std::span<Time>(&b, 1));
    adv.predict(std::span<const NodeId>(&n, 1), std::span<Time>(&c, 1));
    EXPECT_EQ(b, a);
    EXPECT_EQ(c, -a);
  }
}

TEST(NoisyPredictor, CorruptsAboutAShareP_DeterministicallyPerAccess) {
  Trace t = long_flat(4000);
  Oracle o = compute_oracle(t);
  OraclePredictor exact(o.view(t));
  NoisyPredictor noisy(o.view(t), 0.3, NoiseKind::kAdversarial, 1, 11, NoiseRedraw::kPerAccess);
  NoisyPredictor again(o.view(t), 0.3, NoiseKind::kAdversarial, 1, 11, NoiseRedraw::kPerAccess);
  NoisyPredictor other_seed(o.view(t), 0.3, NoiseKind::kAdversarial, 1, 12,
                            NoiseRedraw::kPerAccess);
  size_t corrupted = 0, differ_by_seed = 0;
  for (size_t r = 0; r < t.size(); ++r) {
    NodeId n = 0;
    AccessInfo a = access_of(t, r, r > 0);
    exact.on_access(n, a);
    noisy.on_access(n, a);
    again.on_access(n, a);
    other_seed.on_access(n, a);
    Time e, x, y, z, x2;
    exact.predict(std::span<const NodeId>(&n, 1), std::span<Time>(&e, 1));
    noisy.predict(std::span<const NodeId>(&n, 1), std::span<Time>(&x, 1));
    noisy.predict(std::span<const NodeId>(&n, 1), std::span<Time>(&x2, 1));
    again.predict(std::span<const NodeId>(&n, 1), std::span<Time>(&y, 1));
    other_seed.predict(std::span<const NodeId>(&n, 1), std::span<Time>(&z, 1));
    EXPECT_EQ(x, x2);  // asking twice gives the same answer
    EXPECT_EQ(x, y);   // same seed, same answer
    ASSERT_TRUE(x == e || x == -e);
    corrupted += x != e;
    differ_by_seed += x != z;
  }
  // Binomial(4000, 0.3): mean 1200, sd 29; six sd either way.
  EXPECT_NEAR(double(corrupted), 1200, 175);
  EXPECT_GT(differ_by_seed, 500u);
}

TEST(NoisyPredictor, LogNormalNoiseDelaysByAboutSigmaInSeconds) {
  Trace t = long_flat(3000);
  Oracle o = compute_oracle(t);
  OraclePredictor exact(o.view(t));
  NoisyPredictor noisy(o.view(t), 1.0, NoiseKind::kLogNormal, 0.5, 3, NoiseRedraw::kPerAccess);
  double sum_log = 0, sum_sq = 0;
  size_t finite = 0;
  for (size_t r = 0; r < t.size(); ++r) {
    NodeId n = 0;
    exact.on_access(n, access_of(t, r, r > 0));
    noisy.on_access(n, access_of(t, r, r > 0));
    Time e, x;
    exact.predict(std::span<const NodeId>(&n, 1), std::span<Time>(&e, 1));
    noisy.predict(std::span<const NodeId>(&n, 1), std::span<Time>(&x, 1));
    if (e == kNever) {
      EXPECT_EQ(x, kNever);
      continue;
    }
    ASSERT_GT(x, e);
    double l = std::log(double(x - e) / 1e6);  // log of the added seconds ~ Normal(0, 0.5)
    sum_log += l;
    sum_sq += l * l;
    ++finite;
  }
  ASSERT_GT(finite, 2500u);
  double mean = sum_log / finite, sd = std::sqrt(sum_sq / finite - mean * mean);
  EXPECT_NEAR(mean, 0, 0.05);
  EXPECT_NEAR(sd, 0.5, 0.05);
}

// redraw=request: a draw is a function of (seed, the block's last access, the request), so the
// same seed answers the same in the same request, a new request draws afresh (about p of the
// blocks corrupted each time, independently), and another seed draws differently.
TEST(NoisyPredictor, RedrawPerRequestIsDeterministicPerSeed) {
  Trace t = long_flat(2000);
  Oracle o = compute_oracle(t);
  const double p = 0.3;
  NoisyPredictor noisy(o.view(t), p, NoiseKind::kAdversarial, 1, 11, NoiseRedraw::kPerRequest);
  NoisyPredictor again(o.view(t), p, NoiseKind::kAdversarial, 1, 11, NoiseRedraw::kPerRequest);
  NoisyPredictor other_seed(o.view(t), p, NoiseKind::kAdversarial, 1, 12, NoiseRedraw::kPerRequest);
  std::vector<NodeId> nodes(t.size());
  for (size_t r = 0; r < t.size(); ++r) {
    nodes[r] = NodeId(r);  // one block per access, so every draw has its own access
    for (NoisyPredictor* q : {&noisy, &again, &other_seed})
      q->on_access(nodes[r], access_of(t, r, false));
  }
  OraclePredictor exact(o.view(t));
  for (size_t r = 0; r < t.size(); ++r) exact.on_access(nodes[r], access_of(t, r, false));
  std::vector<Time> truth(nodes.size());
  exact.predict(nodes, truth);

  auto draw = [&](NoisyPredictor& q, RequestIndex req) {
    q.on_request_begin(request(req));
    std::vector<Time> out(nodes.size());
    q.predict(nodes, out);
    return out;
  };
  uint64_t v0 = noisy.version();
  std::vector<Time> r5 = draw(noisy, 5);
  EXPECT_NE(noisy.version(), v0);  // callers must re-predict
  uint64_t v5 = noisy.version();
  EXPECT_EQ(draw(noisy, 5), r5);  // the same request again: the same draw, the same version
  EXPECT_EQ(noisy.version(), v5);
  EXPECT_EQ(draw(again, 5), r5);  // the same seed: the same draw
  std::vector<Time> r6 = draw(noisy, 6);
  EXPECT_NE(noisy.version(), v5);
  std::vector<Time> seed12 = draw(other_seed, 5);

  size_t corrupted5 = 0, corrupted6 = 0, both = 0, by_seed = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (truth[i] == kNever) continue;  // -kNever and kNever both read "corrupted" below
    ASSERT_TRUE(r5[i] == truth[i] || r5[i] == -truth[i]);
    ASSERT_TRUE(r6[i] == truth[i] || r6[i] == -truth[i]);
    corrupted5 += r5[i] != truth[i];
    corrupted6 += r6[i] != truth[i];
    both += r5[i] != truth[i] && r6[i] != truth[i];
    by_seed += r5[i] != seed12[i];
  }
  size_t finite = 0;
  for (Time x : truth) finite += x != kNever;
  ASSERT_GT(finite, 1900u);
  // Binomial(n, 0.3) per request (sd about 20) and, independent across requests, Binomial(n,
  // 0.09) corrupted in both (a sticky draw would make that 0.3): six sd either way.
  EXPECT_NEAR(double(corrupted5), p * finite, 125);
  EXPECT_NEAR(double(corrupted6), p * finite, 125);
  EXPECT_NEAR(double(both), p * p * finite, 80);
  EXPECT_GT(by_seed, finite / 5);  // 2 p (1 - p) = 42 % expected
}

// With nothing to redraw (p = 0, or p = 1 with adversarial noise) and with redraw=access, the
// version never changes, so the policies never re-predict; redraw=access answers do not depend
// on the request: a corrupted prediction stays until the block's next access.
TEST(NoisyPredictor, PersistentAdversaryAndConstantDrawsKeepTheirVersion) {
  Trace t = long_flat(500);
  Oracle o = compute_oracle(t);
  NoisyPredictor sticky(o.view(t), 0.3, NoiseKind::kAdversarial, 1, 11, NoiseRedraw::kPerAccess);
  NoisyPredictor clean(o.view(t), 0, NoiseKind::kAdversarial, 1, 11, NoiseRedraw::kPerRequest);
  NoisyPredictor full(o.view(t), 1, NoiseKind::kAdversarial, 1, 11, NoiseRedraw::kPerRequest);
  NoisyPredictor lognormal(o.view(t), 1, NoiseKind::kLogNormal, 1, 11, NoiseRedraw::kPerRequest);
  std::vector<NodeId> nodes(t.size());
  for (size_t r = 0; r < t.size(); ++r) {
    nodes[r] = NodeId(r);
    for (NoisyPredictor* q : {&sticky, &clean, &full, &lognormal})
      q->on_access(nodes[r], access_of(t, r, false));
  }
  std::vector<Time> first(nodes.size()), later(nodes.size());
  sticky.on_request_begin(request(3));
  sticky.predict(nodes, first);
  for (RequestIndex r : {4u, 90u, 7u}) {
    for (NoisyPredictor* q : {&sticky, &clean, &full, &lognormal}) q->on_request_begin(request(r));
    sticky.predict(nodes, later);
    EXPECT_EQ(later, first);
  }
  EXPECT_EQ(sticky.version(), 0u);
  EXPECT_EQ(clean.version(), 0u);
  EXPECT_EQ(full.version(), 0u);
  EXPECT_GT(lognormal.version(), 0u);  // every draw's delay differs
}

TEST(FeatureTracker, GapsAndDecayedCountersFollowTheirDefinitions) {
  FeatureTracker f;
  float row[FeatureTracker::kFeatures], label = -1;
  // Accesses at 0 s, 100 s and 1124 s.
  EXPECT_FALSE(f.on_access(3, 0, 64, 2, true, row, &label));
  EXPECT_EQ(f.accesses(3), 1u);
  EXPECT_FALSE(f.on_access(3, 100 * kMicrosPerSecond, 64, 2, false, row, &label));
  // Third access: a sample with the features as of the second access, labelled log1p(1024).
  EXPECT_TRUE(f.on_access(3, 1124 * kMicrosPerSecond, 64, 2, false, row, &label));
  EXPECT_FLOAT_EQ(label, std::log1p(1024.0f));
  EXPECT_FLOAT_EQ(row[0], 100);
  EXPECT_FLOAT_EQ(row[1], FeatureTracker::kMissingGap);
  // EDC_i after the second access: 1 + 1 * 2^(-100 / 2^(9+i)).
  for (int i = 0; i < FeatureTracker::kEdcs; ++i)
    EXPECT_NEAR(row[FeatureTracker::kGaps + i], 1 + std::exp2(-100.0 / std::exp2(9 + i)), 1e-5);
  EXPECT_EQ(row[FeatureTracker::kGaps + FeatureTracker::kEdcs], 64);
  EXPECT_EQ(row[FeatureTracker::kGaps + FeatureTracker::kEdcs + 1], 2);
  // Now the stored features: gaps 1024, 100; EDC_0 = 1 + EDC_0' * 2^(-1024/512) = 1 + e0'/4.
  f.row(3, row);
  EXPECT_FLOAT_EQ(row[0], 1024);
  EXPECT_FLOAT_EQ(row[1], 100);
  EXPECT_NEAR(row[FeatureTracker::kGaps], 1 + (1 + std::exp2(-100.0 / 512)) / 4, 1e-5);
  // A fresh block under the same id forgets all of it.
  EXPECT_FALSE(f.on_access(3, 2000 * kMicrosPerSecond, 16, 0, true, row, &label));
  f.row(3, row);
  EXPECT_EQ(f.accesses(3), 1u);
  EXPECT_FLOAT_EQ(row[0], FeatureTracker::kMissingGap);
  EXPECT_FLOAT_EQ(row[FeatureTracker::kGaps], 1);
}

TEST(AuditedPredictor, ScoresThePerfectOracleAsPerfect) {
  Trace t = long_flat(2000);
  Oracle o = compute_oracle(t);
  AuditedPredictor p(std::make_unique<OraclePredictor>(o.view(t)), o.view(t), 1);
  for (size_t r = 0; r < t.size(); ++r) {
    NodeId n = NodeId(r % 37);
    p.on_access(n, access_of(t, r, r >= 37));
    Time out;
    p.predict(std::span<const NodeId>(&n, 1), std::span<Time>(&out, 1));
  }
  PolicyStats s = p.stats();
  auto get = [&](const std::string& k) {
    for (auto& [name, v] : s)
      if (name == k) return v;
    return -1.0;
  };
  EXPECT_NEAR(get("audit_mean_abs_log_error"), 0, 1e-6);
  EXPECT_GT(get("audit_pairs"), 1000);
  EXPECT_EQ(get("audit_ranking_accuracy"), 1.0);
  // The adversarial predictor ranks every pair backwards.
  AuditedPredictor q(std::make_unique<NoisyPredictor>(o.view(t), 1.0, NoiseKind::kAdversarial, 1, 1,
                                                      NoiseRedraw::kPerAccess),
                     o.view(t), 1);
  for (size_t r = 0; r < t.size(); ++r) {
    NodeId n = NodeId(r % 37);
    q.on_access(n, access_of(t, r, r >= 37));
    Time out;
    q.predict(std::span<const NodeId>(&n, 1), std::span<Time>(&out, 1));
  }
  s = q.stats();
  EXPECT_EQ(get("audit_ranking_accuracy"), 0.0);
}

TEST(MakePredictor, RejectsWhatItCannotBuild) {
  PredictorContext ctx;  // no trace, no oracle
  PredictorConfig c;
  EXPECT_THROW(make_predictor(c, ctx), ConfigError);  // the oracle needs the future
  c.kind = "tea-leaves";
  EXPECT_THROW(make_predictor(c, ctx), ConfigError);
  c.kind = "gbm";
  EXPECT_NE(make_predictor(c, ctx), nullptr);  // the GBM learns from accesses alone
  c.audit = true;
  EXPECT_THROW(make_predictor(c, ctx), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
