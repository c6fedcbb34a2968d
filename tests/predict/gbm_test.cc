// The online GBM next-access predictor (XGBoost): it learns a learnable pattern, is
// deterministic in sync mode, and its async mode publishes the same models without blocking.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <queue>

#include "kvpolicy/predict/predictor.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy {
namespace {

// A stream where block i is accessed every period(i) seconds (3, 10, 30 or 100 s by i % 4,
// with 5 % jitter): its next gap is its last gap, which the model can learn from the features.
struct Event {
  Time t;
  NodeId n;
  bool operator>(const Event& o) const { return t > o.t || (t == o.t && n > o.n); }
};

class PeriodicStream {
 public:
  explicit PeriodicStream(NodeId blocks, uint64_t seed) : rng_(seed) {
    for (NodeId n = 0; n < blocks; ++n) q_.push({Time(rng_.uniform() * period(n) * 1e6), n});
    next_.assign(blocks, 0);
  }
  static double period(NodeId n) {
    static const double p[] = {3, 10, 30, 100};
    return p[n % 4];
  }
  // The next access; *next_time is when this block will be accessed after it.
  Event pop(Time* next_time) {
    Event e = q_.top();
    q_.pop();
    Time gap = Time(period(e.n) * (0.95 + 0.1 * rng_.uniform()) * 1e6);
    q_.push({e.t + gap, e.n});
    *next_time = e.t + gap;
    return e;
  }

 private:
  Rng rng_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q_;
  std::vector<Time> next_;
};

AccessInfo info_at(Time t, bool hit, uint32_t position = 3) {
  AccessInfo a;
  a.now = t;
  a.kind = hit ? AccessKind::kReused : AccessKind::kInserted;
  a.position = position;
  return a;
}

GbmConfig small_config(bool async) {
  GbmConfig c;
  c.window = 3000;
  c.retrain_every = 3000;
  c.max_rounds = 60;
  c.max_depth = 4;
  c.eta = 0.3;
  c.async = async;
  return c;
}

TEST(GbmPredictor, FarFutureBeforeTwoAccessesAndBeforeAnyModel) {
  GbmPredictor p(small_config(false), 16);
  NodeId n = 5;
  Time out;
  p.on_access(n, info_at(0, false));
  p.on_access(n, info_at(kMicrosPerSecond, true));
  p.predict(std::span<const NodeId>(&n, 1), std::span<Time>(&out, 1));
  EXPECT_EQ(out, kNever);  // no model yet
  EXPECT_EQ(p.version(), 0u);
}

TEST(GbmPredictor, LearnsAPeriodicPatternBetterThanAConstant) {
  GbmPredictor p(small_config(false), 16);
  PeriodicStream s(80, 42);
  std::vector<bool> seen(80, false);
  std::vector<double> truths;
  double err_model = 0;
  for (int i = 0; i < 15000; ++i) {
    Time next;
    Event e = s.pop(&next);
    p.on_access(e.n, info_at(e.t, seen[e.n]));
    seen[e.n] = true;
    if (p.version() == 0) continue;
    Time pred;
    p.predict(std::span<const NodeId>(&e.n, 1), std::span<Time>(&pred, 1));
    if (pred == kNever) continue;
    double truth = std::log1p(double(next - e.t) * 1e-6);
    err_model += std::fabs(std::log1p(double(pred - e.t) * 1e-6) - truth);
    truths.push_back(truth);
  }
  ASSERT_GT(truths.size(), 5000u);
  EXPECT_GE(p.retrains(), 3u);
  // The best constant in hindsight for absolute error: the median of the true values.
  std::vector<double> sorted = truths;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  double median = sorted[sorted.size() / 2], err_const = 0;
  for (double t : truths) err_const += std::fabs(t - median);
  double mae_model = err_model / truths.size(), mae_const = err_const / truths.size();
  // Periods 3..100 s span 3.5 in log1p; the best constant is off by about 1 on average.
  EXPECT_LT(mae_model, 0.25 * mae_const) << mae_model << " vs " << mae_const;
  EXPECT_LT(mae_model, 0.2);
}

std::vector<Time> run_stream(const GbmConfig& c, int events) {
  GbmPredictor p(c, 16);
  PeriodicStream s(40, 9);
  std::vector<bool> seen(40, false);
  std::vector<Time> preds;
  for (int i = 0; i < events; ++i) {
    Time next, pred;
    Event e = s.pop(&next);
    p.on_access(e.n, info_at(e.t, seen[e.n]));
    seen[e.n] = true;
    p.predict(std::span<const NodeId>(&e.n, 1), std::span<Time>(&pred, 1));
    preds.push_back(pred);
  }
  return preds;
}

TEST(GbmPredictor, SyncModeIsDeterministic) {
  GbmConfig c = small_config(false);
  c.retrain_every = 1500;
  std::vector<Time> a = run_stream(c, 6000), b = run_stream(c, 6000);
  EXPECT_EQ(a, b);
  size_t modelled = 0;
  for (Time t : a) modelled += t != kNever;
  EXPECT_GT(modelled, 2000u);
}

TEST(GbmPredictor, AsyncPublishesTheModelSyncWouldTrain) {
  // Same samples, same trigger point: once the background retrain finishes, the async model
  // answers exactly as the inline one (XGBoost with one thread is deterministic).
  GbmPredictor sync(small_config(false), 16), async(small_config(true), 16);
  PeriodicStream s(40, 5);
  std::vector<bool> seen(40, false);
  while (sync.version() == 0) {
    Time next;
    Event e = s.pop(&next);
    sync.on_access(e.n, info_at(e.t, seen[e.n]));
    async.on_access(e.n, info_at(e.t, seen[e.n]));
    seen[e.n] = true;
  }
  async.wait_idle();
  EXPECT_EQ(async.version(), 1u);
  std::vector<float> rows(40 * FeatureTracker::kFeatures);
  for (NodeId n = 0; n < 40; ++n)
    sync.features().row(n, rows.data() + n * FeatureTracker::kFeatures);
  std::vector<float> a(40), b(40);
  sync.predict_rows(rows.data(), 40, a.data());
  async.predict_rows(rows.data(), 40, b.data());
  EXPECT_EQ(a, b);
  EXPECT_FALSE(std::isnan(a[0]));
}

TEST(GbmPredictor, AsyncShutdownDoesNotWaitForALongTraining) {
  GbmConfig c = small_config(true);
  c.max_rounds = 100000;  // would take minutes
  c.patience = 100000;
  auto start = std::chrono::steady_clock::now();
  {
    GbmPredictor p(c, 16);
    PeriodicStream s(40, 5);
    std::vector<bool> seen(40, false);
    for (int i = 0; i < 4000; ++i) {
      Time next;
      Event e = s.pop(&next);
      p.on_access(e.n, info_at(e.t, seen[e.n]));
      seen[e.n] = true;
    }
    EXPECT_TRUE(p.training());   // a retrain was handed to the worker...
    EXPECT_EQ(p.version(), 0u);  // ...and is far from done
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(secs, 20.0);
}

TEST(GbmPredictor, AsyncHitRateMatchesSyncOnAFixedTrace) {
  ConversationParams cp;
  cp.sessions = 400;
  cp.session_rate = 2.0;
  cp.think_mean_s = 30;
  Trace trace = generate_conversation(cp, 3);
  Oracle oracle = compute_oracle(trace);
  size_t cap = count_unique_blocks(trace) / 10;
  std::string params = "predictor=gbm,window=5000,retrain=5000,trees=20,depth=4";
  auto models = [](const ReplayResult& r) {
    for (auto& [k, v] : r.policy_stats)
      if (k == "retrains") return v;
    return 0.0;
  };
  for (const char* policy : {"laru", "hf"}) {
    ReplayResult sync = replay(trace, &oracle, {policy, params + ",mode=sync"}, cap);
    ReplayResult bounded = replay(trace, &oracle, {policy, params + ",mode=async,max_lag=1"}, cap);
    ReplayResult free = replay(trace, &oracle, {policy, params + ",mode=async"}, cap);
    // With max_lag=1 the replay waits for a training still under way when the next is due, so
    // it installs every model but possibly the last, whatever the CPU gives the worker, and
    // differs from sync only in when each model arrives (measured: laru 45.18 vs 45.21 %, hf
    // 44.53 vs 43.83 %, 13 models vs 13-14).
    EXPECT_GE(models(sync), 5) << policy;
    EXPECT_GE(models(bounded), models(sync) - 1) << policy;
    EXPECT_NEAR(bounded.block_hit_rate, sync.block_hit_rate, 0.01) << policy;
    // Never waiting, the replay can outrun training entirely on a busy machine (measured: 0 to
    // 7 models). LARU and HF consult predictions only among LRU candidates, so even no model
    // lands near sync here (44.86 %, 0.35 and 1.03 points away): this bounds the damage of a
    // starved worker rather than showing learning. FPB follows whatever model it has and is
    // not stable across modes (31 % sync, 33-34 % async), so it is not compared.
    EXPECT_NEAR(free.block_hit_rate, sync.block_hit_rate, 0.02)
        << policy << ": " << models(free) << " models async, " << models(sync) << " sync";
  }
}

}  // namespace
}  // namespace kvpolicy
