// LPC (src/policy/lpc.cc): the decay against hand-computed values, the bucketed victim against
// a brute-force minimum of p' over every evictable block, the oracle variant against a slow
// reference written from the paper's rules, the reduction to LRU when every p is equal, the
// shared-block maximum on a worked example, and the error on a trace without scores.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/predict/continuation_source.h"
#include "kvpolicy/trace/trace.h"
#include "support/random_workload.h"

namespace kvpolicy {
// Test support defined in src/policy/lpc.cc.
namespace lpc_testing {
bool node_state(const Policy& p, NodeId n, double* score, Time* set_time, uint32_t* seq);
}  // namespace lpc_testing

namespace {

using testing::random_workload;
using testing::RandomWorkloadOptions;
using testing::request_view;

double decayed(double p, Time age_us, double scale_s) {
  return decayed_continuation(p, double(age_us) / kMicrosPerSecond, scale_s);
}

TEST(LpcDecay, MatchesHandComputedValues) {
  const double e = std::exp(1.0);
  // One mean gap (age x scale = 1): p' = p / (p + (1 - p) e).
  EXPECT_NEAR(decayed_continuation(0.5, 100, 0.01), 1 / (1 + e), 1e-15);  // 0.268941...
  EXPECT_NEAR(decayed_continuation(0.9, 100, 0.01), 9 / (9 + e), 1e-15);  // 0.768031...
  EXPECT_NEAR(decayed_continuation(0.8, 50, 0.02), 4 / (4 + e), 1e-15);   // 0.595390...
  EXPECT_NEAR(decayed_continuation(0.3, 10, 0.01), 0.27942856863040344, 1e-15);
  EXPECT_NEAR(decayed_continuation(0.99, 300, 0.01), 0.8313352112931788, 1e-15);
  EXPECT_EQ(decayed_continuation(0.2, 0, 0.01), 0.2);  // no time, no decay
  EXPECT_EQ(decayed_continuation(1, 1e6, 0.01), 1);    // certainty never decays
  EXPECT_EQ(decayed_continuation(0, 1, 0.01), 0);
  // The logit falls linearly with age: what makes the eviction order static.
  for (double p : {0.05, 0.3, 0.7, 0.97}) {
    double q = decayed_continuation(p, 37, 0.02);
    EXPECT_NEAR(std::log(q / (1 - q)), std::log(p / (1 - p)) - 0.74, 1e-12);
  }
}

// ---- the brute force ---------------------------------------------------------------------

// The smallest p'(now) over every evictable HBM block, from each block's stored score; ties go
// to the older set (request order), then the deeper block.
NodeId brute_force_victim(const Policy& lpc, const PrefixTree& tree, Time now, double scale_s) {
  NodeId best = kNoNode;
  double best_p = 0;
  uint32_t best_seq = 0;
  for (NodeId n = 0; n < tree.id_limit(); ++n) {
    if (!tree.contains(n) || tree.tier(n) != Tier::kHbm || !tree.is_evictable(n)) continue;
    double p;
    Time set;
    uint32_t seq;
    if (!lpc_testing::node_state(lpc, n, &p, &set, &seq)) {
      ADD_FAILURE() << "evictable node " << n << " has no score";
      return kNoNode;
    }
    double q = decayed(p, now - set, scale_s);
    bool better =
        best == kNoNode || q < best_p ||
        (q == best_p && (seq < best_seq || (seq == best_seq && tree.depth(n) > tree.depth(best))));
    if (better) {
      best = n;
      best_p = q;
      best_seq = seq;
    }
  }
  return best;
}

// Forwards to an inner policy and records its victims (as keys), checking each against the
// brute force when scale_s > 0.
class Recorder final : public ForwardingPolicy {
 public:
  Recorder(std::unique_ptr<Policy> inner, const PrefixTree& tree, double check_scale_s)
      : ForwardingPolicy(std::move(inner)), tree_(tree), scale_s_(check_scale_s) {}
  NodeId victim(Time now) override {
    NodeId v = inner().victim(now);
    if (scale_s_ > 0) {
      NodeId want = brute_force_victim(inner(), tree_, now, scale_s_);
      EXPECT_EQ(v, want) << "at time " << now << " after " << victims.size() << " victims";
      if (v != want) ++mismatches;
    }
    return v;
  }
  void on_removed(NodeId n, Removal why) override {
    if (why != Removal::kPromoted) victims.push_back(tree_.key(n));
    inner().on_removed(n, why);
  }
  std::vector<BlockKey> victims;
  int mismatches = 0;

 private:
  const PrefixTree& tree_;
  double scale_s_;
};

struct LpcRun {
  std::unique_ptr<PrefixCache> cache;
  Recorder* recorder;
  uint64_t hits = 0;
};

// Builds `policy` (an already-made one, or from name and params) with the trace's future.
LpcRun make_run(const Trace& trace, const Oracle& oracle, const std::string& name,
                const std::string& params, size_t capacity, double check_scale_s = 0,
                std::unique_ptr<Policy> (*make)(const PolicyContext&, const Oracle&,
                                                const Trace&) = nullptr) {
  auto tree = std::make_unique<PrefixTree>(64);
  PolicyContext ctx;
  ctx.tree = tree.get();
  ctx.capacity_blocks = capacity;
  ctx.future = oracle.view(trace);
  std::unique_ptr<Policy> policy =
      make ? make(ctx, oracle, trace) : make_policy(PolicySpec{name, params}, ctx);
  auto recorder = std::make_unique<Recorder>(std::move(policy), *tree, check_scale_s);
  Recorder* raw = recorder.get();
  auto cache = std::make_unique<PrefixCache>(capacity, std::move(recorder), std::move(tree));
  cache->set_checking(true);
  return {std::move(cache), raw};
}

void replay_all(const Trace& trace, LpcRun& run) {
  for (size_t r = 0; r < trace.size() && run.recorder->mismatches == 0; ++r)
    run.hits += run.cache->access(request_view(trace, r)).hit_blocks;
}

// A random workload whose timestamps tie (rounded to `round_us`) when asked, so that ties
// between requests are exercised.
Trace workload(uint64_t seed, uint32_t requests, Time round_us = 0) {
  RandomWorkloadOptions o;
  o.seed = seed;
  o.requests = requests;
  Trace t = random_workload(o);
  if (round_us > 0)
    for (Time& time : t.time) time = time / round_us * round_us;
  return t;
}

TEST(Lpc, VictimEqualsBruteForceMinimum) {
  // The workloads span ~0.1 s: scales of hundreds per second make the decay matter there.
  const std::vector<std::pair<std::string, double>> variants = {
      {"scale_s=2000", 2000},
      {"scale_s=500,buckets=8", 500},
      {"scale_s=5000,buckets=1", 5000},
      {"scale_s=300,buckets=1000", 300},
      {"predictor=oracle,scale_s=800", 800},
      {"predictor=noisy,p=0.3,scale_s=1500,buckets=16", 1500},
  };
  size_t victims = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    for (Time round : {Time{0}, Time{2000}}) {
      Trace trace = workload(seed, 400, round);
      Oracle oracle = compute_oracle(trace);
      size_t unique = count_unique_blocks(trace);
      for (const auto& [params, scale] : variants) {
        for (size_t cap : {unique / 12, unique / 4}) {
          SCOPED_TRACE("seed " + std::to_string(seed) + " round " + std::to_string(round) +
                       " lpc:" + params + " capacity " + std::to_string(cap));
          LpcRun run = make_run(trace, oracle, "lpc", params, cap, scale);
          replay_all(trace, run);
          ASSERT_EQ(run.recorder->mismatches, 0);
          victims += run.recorder->victims.size();
        }
      }
    }
  }
  EXPECT_GT(victims, 5000u);
}

// ---- the slow reference ------------------------------------------------------------------

// LPC as the paper states it, with O(n) scans: each block keeps (p, t_last); at the end of a
// request every path block takes p := max(p'(now), p_request) and t_last := now (a new block:
// p_request); the victim is the evictable block with the smallest p'(now). p_request is the
// oracle's 0 or 1, quantized to its bucket's midpoint as LPC does. One tier only.
class SlowLpc final : public Policy {
 public:
  SlowLpc(const PolicyContext& ctx, const OracleView& future, uint32_t buckets, double scale_s)
      : tree_(*ctx.tree), future_(future), buckets_(buckets), scale_s_(scale_s) {}
  void reserve_ids(size_t ids) override {
    if (ids > state_.size()) state_.resize(ids);
  }
  void on_request_begin(const RequestView& r) override {
    now_ = r.time;
    ++seq_;
    double p = future_.next_in_session[r.index] != OracleView::kNoNext ? 1 : 0;
    uint32_t b = std::min(uint32_t(p * buckets_), buckets_ - 1);
    p_ = (b + 0.5) / buckets_;
  }
  void on_access(NodeId n, const AccessInfo& info) override {
    if (info.kind != AccessKind::kReused) state_[n] = {p_, now_, seq_};
  }
  void on_request_end(const RequestView&, std::span<const NodeId> path) override {
    for (NodeId n : path) {
      State& s = state_[n];
      if (s.seq == seq_) continue;  // new in this request: already p_request
      double cur = decayed(s.p, now_ - s.t_last, scale_s_);
      // As LPC does at equal scores: the newer setting (the request's order) wins.
      if (p_ >= cur) {
        s = {p_, now_, seq_};
      } else {
        s = {cur, now_, s.seq};  // the kept score decays on from now; set order unchanged
      }
    }
  }
  void on_evictable(NodeId) override {}
  void on_unevictable(NodeId) override {}
  NodeId victim(Time now) override {
    NodeId best = kNoNode;
    double best_p = 0;
    for (NodeId n = 0; n < tree_.id_limit(); ++n) {
      if (!tree_.contains(n) || !tree_.is_evictable(n)) continue;
      double q = decayed(state_[n].p, now - state_[n].t_last, scale_s_);
      if (best == kNoNode || q < best_p ||
          (q == best_p &&
           (state_[n].seq < state_[best].seq ||
            (state_[n].seq == state_[best].seq && tree_.depth(n) > tree_.depth(best))))) {
        best = n;
        best_p = q;
      }
    }
    return best;
  }
  void on_removed(NodeId, Removal) override {}

 private:
  struct State {
    double p = 0;
    Time t_last = 0;
    uint32_t seq = 0;
  };
  const PrefixTree& tree_;
  OracleView future_;
  uint32_t buckets_;
  double scale_s_;
  std::vector<State> state_;
  Time now_ = 0;
  uint32_t seq_ = 0;
  double p_ = 0;
};

TEST(Lpc, OracleVariantEqualsSlowReference) {
  size_t victims = 0;
  for (uint64_t seed = 4; seed <= 7; ++seed) {
    Trace trace = workload(seed, 500);
    Oracle oracle = compute_oracle(trace);
    size_t unique = count_unique_blocks(trace);
    for (double scale : {200.0, 1000.0}) {
      for (uint32_t buckets : {64u, 4u}) {
        for (size_t cap : {unique / 15, unique / 5}) {
          // drift=false: the paper's rule, which the reference follows (no trust, no shrink).
          std::string params =
              "predictor=oracle,drift=false,scale_s=" + std::to_string(int(scale)) +
              ",buckets=" + std::to_string(buckets);
          SCOPED_TRACE("seed " + std::to_string(seed) + " lpc:" + params + " capacity " +
                       std::to_string(cap));
          LpcRun fast = make_run(trace, oracle, "lpc", params, cap);
          static double s_scale;
          static uint32_t s_buckets;
          s_scale = scale;
          s_buckets = buckets;
          LpcRun slow = make_run(
              trace, oracle, "", "", cap, 0,
              [](const PolicyContext& ctx, const Oracle& o, const Trace& t) {
                return std::unique_ptr<Policy>(new SlowLpc(ctx, o.view(t), s_buckets, s_scale));
              });
          replay_all(trace, fast);
          replay_all(trace, slow);
          EXPECT_EQ(fast.hits, slow.hits);
          ASSERT_EQ(fast.recorder->victims, slow.recorder->victims);
          victims += fast.recorder->victims.size();
        }
      }
    }
  }
  EXPECT_GT(victims, 5000u);
}

// ---- reductions and worked examples ------------------------------------------------------

TEST(Lpc, EqualScoresAreLru) {
  // One bucket for everyone: p' orders by age alone, ties as LRU (request order, then deeper).
  for (uint64_t seed = 8; seed <= 10; ++seed) {
    for (Time round : {Time{0}, Time{3000}}) {
      Trace trace = workload(seed, 500, round);
      Trace same = trace;
      for (float& c : same.continuation) c = 0.7f;
      Oracle oracle = compute_oracle(trace);
      size_t unique = count_unique_blocks(trace);
      for (size_t cap : {unique / 15, unique / 5}) {
        SCOPED_TRACE("seed " + std::to_string(seed) + " capacity " + std::to_string(cap));
        LpcRun lru = make_run(trace, oracle, "lru", "", cap);
        // drift=false: the drift rule moves an equal score to 1/2 once it finds it ranks nothing,
        // which is LRU again only from then on.
        LpcRun constant =
            make_run(trace, oracle, "lpc", "predictor=constant,value=0.3,drift=false", cap);
        LpcRun equal = make_run(same, oracle, "lpc", "drift=false", cap);
        replay_all(trace, lru);
        replay_all(trace, constant);
        replay_all(same, equal);
        EXPECT_FALSE(lru.recorder->victims.empty());
        EXPECT_EQ(constant.hits, lru.hits);
        EXPECT_EQ(equal.hits, lru.hits);
        EXPECT_EQ(constant.recorder->victims, lru.recorder->victims);
        EXPECT_EQ(equal.recorder->victims, lru.recorder->victims);
      }
    }
  }
}

// The drift rule (docs/policies.md, lpc): scores that match the conversations keep LPC's trust;
// scores that are always wrong, or a coin toss, lose it.
TEST(Lpc, DriftTrustFallsOnlyWhenScoresMissTheTruth) {
  Trace trace = workload(21, 4000);
  Oracle oracle = compute_oracle(trace);
  const size_t cap = count_unique_blocks(trace) / 10;
  // A timeout of a fiftieth of the trace: most turns are resolved within it.
  const std::string timeout =
      ",drift_timeout_s=" + std::to_string(double(trace.time.back()) / kMicrosPerSecond / 50);
  auto stat = [&](const std::string& params, const std::string& name) {
    LpcRun run = make_run(trace, oracle, "lpc", params + timeout, cap);
    replay_all(trace, run);
    for (auto& [k, v] : run.recorder->stats())
      if (k == name) return v;
    ADD_FAILURE() << "no " << name << " in lpc:" << params;
    return -1.0;
  };
  EXPECT_GT(stat("predictor=oracle", "drift_resolved"), 1000);
  EXPECT_GT(stat("predictor=oracle", "drift_min_trust"), 0.9);
  EXPECT_EQ(stat("predictor=noisy,p=1", "drift_trust"), 0.0);
  // A coin toss: a correlation near 0 (sampling noise keeps it off exactly 0).
  EXPECT_LT(stat("predictor=noisy,p=0.5", "drift_trust"), 0.5);
}

// Builds a trace by hand: times in seconds, raw block ids chained by add_request, and a score.
void add(Trace& t, double seconds, std::vector<uint64_t> ids, float p) {
  t.add_request(static_cast<Time>(seconds * kMicrosPerSecond), ids,
                static_cast<uint32_t>(ids.size() * t.block_tokens), 1);
  t.continuation.push_back(p);
}

TEST(Lpc, SharedBlockKeepsTheMaximum) {
  Trace t;
  add(t, 0, {1, 2}, 0.9f);     // block 1 (shared) and 2: p 0.9
  add(t, 10, {1, 3}, 0.1f);    // block 1 keeps 0.9 decayed (0.87 > 0.1); block 3 gets 0.1
  add(t, 500, {1, 4}, 0.15f);  // 0.9 decayed 500 s is 0.053 < 0.15: block 1 takes 0.15 now
  Oracle oracle = compute_oracle(t);
  LpcRun run = make_run(t, oracle, "lpc", "", 100);
  auto state = [&](size_t r, size_t i, double* p, Time* set) {
    uint32_t seq;
    NodeId n = run.cache->tree().find(t.prompt(r)[i]);
    ASSERT_NE(n, kNoNode);
    ASSERT_TRUE(lpc_testing::node_state(run.recorder->inner(), n, p, set, &seq));
  };
  double p;
  Time set;
  const double w = 1.0 / 64;  // bucket width: a score is its bucket's midpoint
  run.cache->access(request_view(t, 0));
  run.cache->access(request_view(t, 1));
  state(0, 0, &p, &set);
  EXPECT_EQ(p, 57.5 * w);  // 0.9 is in bucket 57
  EXPECT_EQ(set, 0);
  state(1, 1, &p, &set);
  EXPECT_EQ(p, 6.5 * w);
  EXPECT_EQ(set, 10 * kMicrosPerSecond);
  EXPECT_GT(decayed(57.5 * w, 10 * kMicrosPerSecond, 0.01), 0.85);
  run.cache->access(request_view(t, 2));
  EXPECT_LT(decayed(57.5 * w, 500 * kMicrosPerSecond, 0.01), 0.06);
  state(2, 0, &p, &set);
  EXPECT_EQ(p, 9.5 * w);
  EXPECT_EQ(set, 500 * kMicrosPerSecond);
}

TEST(Lpc, EvictsTheLeastLikelyToContinueFirst) {
  // Capacity 4: two finished conversations hold 4 blocks; a third request needs 2 of them. The
  // unlikely one goes, though it is newer; then at 600 s the likely one has decayed below it.
  Trace t;
  add(t, 0, {10, 11}, 0.95f);
  add(t, 1, {20, 21}, 0.05f);
  add(t, 2, {30, 31}, 0.5f);
  add(t, 600, {40, 41}, 0.5f);
  Oracle oracle = compute_oracle(t);
  LpcRun run = make_run(t, oracle, "lpc", "", 4);
  for (size_t r = 0; r < t.size(); ++r) run.cache->access(request_view(t, r));
  ASSERT_EQ(run.recorder->victims.size(), 4u);
  // Deeper first within a conversation: 21 before 20.
  EXPECT_EQ(run.recorder->victims[0], t.prompt(1)[1]);
  EXPECT_EQ(run.recorder->victims[1], t.prompt(1)[0]);
  // At 600 s: 0.95 (bucket midpoint 0.945) set at 0 s has p' 0.041, 0.5 (0.508) set at 2 s
  // has p' 0.0026: the latter goes.
  EXPECT_EQ(run.recorder->victims[2], t.prompt(2)[1]);
  EXPECT_EQ(run.recorder->victims[3], t.prompt(2)[0]);
}

TEST(Lpc, TraceWithoutScoresIsAClearError) {
  RandomWorkloadOptions o;
  o.continuation = false;
  Trace trace = random_workload(o);
  Oracle oracle = compute_oracle(trace);
  LpcRun run = make_run(trace, oracle, "lpc", "", 50);
  try {
    run.cache->access(request_view(trace, 0));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("this trace carries no continuation scores"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("lpc:predictor=oracle"), std::string::npos);
  }
  // The oracle needs no column.
  LpcRun oracle_run = make_run(trace, oracle, "lpc", "predictor=oracle", 50);
  EXPECT_NO_THROW(replay_all(trace, oracle_run));
}

TEST(LpcSource, NoisyFlipsTheOracle) {
  Trace trace = workload(12, 300);
  Oracle oracle = compute_oracle(trace);
  ContinuationContext ctx;
  ctx.future = oracle.view(trace);
  auto truth = make_continuation_source({.kind = "oracle"}, ctx);
  auto never = make_continuation_source({.kind = "noisy", .p = 0}, ctx);
  auto always = make_continuation_source({.kind = "noisy", .p = 1}, ctx);
  auto half = make_continuation_source({.kind = "noisy", .p = 0.5}, ctx);
  auto half_again = make_continuation_source({.kind = "noisy", .p = 0.5}, ctx);
  int flipped = 0, continued = 0;
  for (size_t r = 0; r < trace.size(); ++r) {
    RequestView v = request_view(trace, r);
    double p = truth->p(v);
    continued += p == 1;
    EXPECT_EQ(p, oracle.view(trace).next_in_session[r] != OracleView::kNoNext ? 1 : 0);
    EXPECT_EQ(never->p(v), p);
    EXPECT_EQ(always->p(v), 1 - p);
    double h = half->p(v);
    flipped += h != p;
    EXPECT_EQ(half_again->p(v), h);  // seeded per request
  }
  EXPECT_GT(continued, 50);
  EXPECT_GT(flipped, 100);
  EXPECT_LT(flipped, 200);
  EXPECT_THROW(make_continuation_source({.kind = "oracle"}, ContinuationContext{}), ConfigError);
  EXPECT_THROW(make_continuation_source({.kind = "nope"}, ctx), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
