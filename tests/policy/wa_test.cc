// WA (src/policy/wa.cc): the O(W) victim against a brute-force scan of every evictable leaf,
// the reuse fit on a worked example, and the reduction to LRU.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kvpolicy/cache.h"
#include "kvpolicy/error.h"
#include "kvpolicy/policy.h"
#include "kvpolicy/trace.h"
#include "support/random_workload.h"

namespace kvpolicy {
// Test support defined in src/policy/wa.cc.
namespace wa_testing {
bool node_state(const Policy& p, NodeId n, Time* last, uint32_t* seq, uint32_t* group);
bool fit(const Policy& p, uint32_t group, double* pi, double* lambda, double* life_s);
uint32_t group_of(const Policy& p, CategoryId type, uint32_t turn);
}  // namespace wa_testing

namespace {

using testing::random_workload;
using testing::RandomWorkloadOptions;
using testing::request_view;

// The paper's Algorithm 24 over every evictable block of `tier`: the smallest
// (log ReuseProb, last-access order, -offset). Returns kNoNode if none is evictable.
NodeId brute_force_victim(const Policy& wa, const PrefixTree& tree, Tier tier, Time now,
                          uint64_t* fitted_candidates = nullptr) {
  NodeId best = kNoNode;
  double best_score = 0;
  uint32_t best_seq = 0;
  for (NodeId n = 0; n < tree.id_limit(); ++n) {
    if (!tree.contains(n) || tree.tier(n) != tier || !tree.is_evictable(n)) continue;
    Time last;
    uint32_t seq, group;
    if (!wa_testing::node_state(wa, n, &last, &seq, &group)) {
      ADD_FAILURE() << "evictable node " << n << " is not tracked by wa";
      return kNoNode;
    }
    double pi, lambda, life, score = 0;
    if (wa_testing::fit(wa, group, &pi, &lambda, &life)) {
      double log_const = pi == 0 ? -INFINITY : std::log(pi) + std::log1p(-std::exp(-lambda * life));
      score = log_const - lambda * (double(now - last) / kMicrosPerSecond);
      if (fitted_candidates) ++*fitted_candidates;
    }
    bool better = best == kNoNode || score < best_score ||
                  (score == best_score &&
                   (seq < best_seq || (seq == best_seq && tree.depth(n) > tree.depth(best))));
    if (better) {
      best = n;
      best_score = score;
      best_seq = seq;
    }
  }
  return best;
}

// Forwards to an inner policy and records its victims (as keys), checking each against the
// brute force when `check` is set.
class Recorder final : public Policy {
 public:
  Recorder(std::unique_ptr<Policy> inner, const PrefixTree& tree, bool check)
      : inner_(std::move(inner)), tree_(tree), check_(check) {}
  void on_access(NodeId n, const AccessInfo& i) override { inner_->on_access(n, i); }
  void on_evictable(NodeId n) override { inner_->on_evictable(n); }
  void on_unevictable(NodeId n) override { inner_->on_unevictable(n); }
  void on_removed(NodeId n) override { inner_->on_removed(n); }
  void on_request_begin(const RequestView& r) override { inner_->on_request_begin(r); }
  void on_request_end(const RequestView& r, std::span<const NodeId> p) override {
    inner_->on_request_end(r, p);
  }
  NodeId victim(Time now) override {
    NodeId v = inner_->victim(now);
    if (check_) {
      NodeId want = brute_force_victim(*inner_, tree_, Tier::kHbm, now, &fitted_candidates);
      EXPECT_EQ(v, want) << "at time " << now << " after " << victims.size() << " victims";
      if (v != want) mismatches++;
    }
    if (v != kNoNode) victims.push_back(tree_.key(v));
    return v;
  }
  std::vector<BlockKey> victims;
  uint64_t fitted_candidates = 0;
  int mismatches = 0;
  Policy& inner() { return *inner_; }

 private:
  std::unique_ptr<Policy> inner_;
  const PrefixTree& tree_;
  bool check_;
};

struct WaRun {
  std::unique_ptr<PrefixCache> cache;
  Recorder* recorder;
};

WaRun make_run(const std::string& name, const std::string& params, size_t capacity, bool check) {
  auto tree = std::make_unique<PrefixTree>(64);
  PolicyContext ctx;
  ctx.tree = tree.get();
  ctx.capacity_blocks = capacity;
  auto recorder =
      std::make_unique<Recorder>(make_policy(PolicySpec{name, params}, ctx), *tree, check);
  Recorder* raw = recorder.get();
  auto cache = std::make_unique<PrefixCache>(capacity, std::move(recorder), std::move(tree));
  cache->set_checking(true);
  return {std::move(cache), raw};
}

// A random prefix workload with request types 0..2 and timestamps that often tie (rounded to
// 2 ms), so that ties between requests and categories are exercised.
Trace typed_workload(uint64_t seed, uint32_t requests) {
  RandomWorkloadOptions o;
  o.seed = seed;
  o.requests = requests;
  Trace t = random_workload(o);
  for (size_t r = 0; r < t.size(); ++r) {
    t.category[r] = static_cast<CategoryId>(mix64(seed * 131 + r) % 3);
    t.time[r] = t.time[r] / 2000 * 2000;
  }
  return t;
}

TEST(Wa, VictimEqualsBruteForceScan) {
  // Windows and refits at the workload's millisecond scale, so the fits change often.
  const std::vector<std::string> variants = {
      "window_s=0.05,refit_s=0.005,min_samples=3",
      "window_s=0.05,refit_s=0.005,min_samples=3,life=none",
      "window_s=0.02,refit_s=0.003,min_samples=1,life=0.002",
      "window_s=0.05,refit_s=0.005,turn_buckets=2,life=p90_all",
      "window_s=0.05,refit_s=0.005,categories=single",
  };
  uint64_t fitted = 0, victims = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Trace trace = typed_workload(seed, 400);
    size_t unique = count_unique_blocks(trace);
    for (const auto& params : variants) {
      for (size_t cap : {unique / 12, unique / 4}) {
        SCOPED_TRACE("seed " + std::to_string(seed) + " wa:" + params + " capacity " +
                     std::to_string(cap));
        WaRun run = make_run("wa", params, cap, true);
        for (size_t r = 0; r < trace.size() && run.recorder->mismatches == 0; ++r)
          run.cache->access(request_view(trace, r));
        ASSERT_EQ(run.recorder->mismatches, 0);
        fitted += run.recorder->fitted_candidates;
        victims += run.recorder->victims.size();
      }
    }
  }
  // The comparison must have covered fitted models, not only the cold start.
  EXPECT_GT(victims, 2000u);
  EXPECT_GT(fitted, victims);
}

TEST(Wa, SingleCategoryWithoutLifeIsLru) {
  for (uint64_t seed = 4; seed <= 6; ++seed) {
    Trace trace = typed_workload(seed, 500);
    size_t unique = count_unique_blocks(trace);
    for (size_t cap : {unique / 15, unique / 5}) {
      WaRun wa =
          make_run("wa", "categories=single,life=none,window_s=0.05,refit_s=0.005", cap, false);
      WaRun lru = make_run("lru", "", cap, false);
      for (size_t r = 0; r < trace.size(); ++r) {
        AccessResult a = wa.cache->access(request_view(trace, r));
        AccessResult b = lru.cache->access(request_view(trace, r));
        ASSERT_EQ(a.hit_blocks, b.hit_blocks) << "request " << r;
      }
      double pi, lambda, life;
      ASSERT_TRUE(wa_testing::fit(wa.recorder->inner(), 0, &pi, &lambda, &life));
      EXPECT_GT(pi, 0);
      EXPECT_FALSE(wa.recorder->victims.empty());
      EXPECT_EQ(wa.recorder->victims, lru.recorder->victims);
    }
  }
}

TEST(Wa, ColdStartIsLru) {
  // No refit within the trace: typed categories and the Life term never come into play.
  Trace trace = typed_workload(9, 400);
  size_t cap = count_unique_blocks(trace) / 8;
  WaRun wa = make_run("wa", "refit_s=1000", cap, false);
  WaRun lru = make_run("lru", "", cap, false);
  for (size_t r = 0; r < trace.size(); ++r) {
    wa.cache->access(request_view(trace, r));
    lru.cache->access(request_view(trace, r));
  }
  double pi, lambda, life;
  EXPECT_FALSE(wa_testing::fit(wa.recorder->inner(), 0, &pi, &lambda, &life));
  EXPECT_EQ(wa.recorder->victims, lru.recorder->victims);
}

// Builds a trace by hand: times in seconds, raw block ids chained by add_request.
void add(Trace& t, double seconds, std::vector<uint64_t> ids, uint32_t turn, CategoryId type = 0) {
  t.add_request(static_cast<Time>(seconds * kMicrosPerSecond), ids,
                static_cast<uint32_t>(ids.size() * t.block_tokens), 1, kNoSession, turn, type);
}

TEST(Wa, FitsTheWindowAsWorkedOut) {
  Trace t;
  add(t, 0, {1}, 1);        // A
  add(t, 2, {1, 2}, 1);     // A reused after 2 s, B new
  add(t, 5, {1, 2, 3}, 2);  // A and B reused after 3 s (turn-1 instances), C new
  add(t, 11, {9}, 1);       // the first refit (due at 10 s) runs before this request
  auto tree = std::make_unique<PrefixTree>(16);
  PolicyContext ctx;
  ctx.tree = tree.get();
  ctx.capacity_blocks = 100;
  auto policy = make_policy({"wa", "window_s=100,refit_s=10,turn_buckets=2,min_samples=1"}, ctx);
  const Policy& wa = *policy;
  PrefixCache cache(100, std::move(policy), std::move(tree));
  for (size_t r = 0; r < t.size(); ++r) cache.access(request_view(t, r));

  // Turn 1 made 3 block accesses (A at 0 s, A and B at 2 s), all reused: after 2, 3, 3 s.
  uint32_t g1 = wa_testing::group_of(wa, 0, 1), g2 = wa_testing::group_of(wa, 0, 2);
  ASSERT_NE(g1, g2);
  EXPECT_EQ(wa_testing::group_of(wa, 0, 7), g2);  // 2+ bucket
  double pi, lambda, life;
  ASSERT_TRUE(wa_testing::fit(wa, g1, &pi, &lambda, &life));
  EXPECT_DOUBLE_EQ(pi, 1.0);
  EXPECT_DOUBLE_EQ(lambda, 3.0 / 8.0);  // mean reuse time 8/3 s
  EXPECT_DOUBLE_EQ(life, 3.0);          // nearest-rank p90 of {2, 3, 3}
  // Turn 2 made 3 block accesses (A, B, C at 5 s), none reused by 11 s.
  ASSERT_TRUE(wa_testing::fit(wa, g2, &pi, &lambda, &life));
  EXPECT_EQ(pi, 0.0);
}

TEST(Wa, WindowDropsOldAccessesAndSmallCategoriesUseThePooledFit) {
  Trace t;
  add(t, 0, {1}, 1);
  add(t, 2, {1, 2}, 1);
  add(t, 5, {1, 2, 3}, 2);
  add(t, 6, {1, 2, 3, 4}, 2);  // A, B, C reused after 1 s
  add(t, 11, {9}, 1);
  auto tree = std::make_unique<PrefixTree>(16);
  PolicyContext ctx;
  ctx.tree = tree.get();
  // Window 8 s at the refit (11 s): only accesses after 3 s count, i.e. the turn-2 ones:
  // 7 accesses, 3 reused (after 1 s each). Turn 1 has none left, so it takes the pooled fit.
  auto policy =
      make_policy({"wa", "window_s=8,refit_s=10,turn_buckets=2,min_samples=2,life=none"}, ctx);
  const Policy& wa = *policy;
  PrefixCache cache(100, std::move(policy), std::move(tree));
  for (size_t r = 0; r < t.size(); ++r) cache.access(request_view(t, r));
  double pi, lambda, life;
  for (uint32_t turn : {1u, 2u}) {
    ASSERT_TRUE(wa_testing::fit(wa, wa_testing::group_of(wa, 0, turn), &pi, &lambda, &life));
    EXPECT_DOUBLE_EQ(pi, 3.0 / 7.0);
    EXPECT_DOUBLE_EQ(lambda, 1.0);
    EXPECT_TRUE(std::isinf(life));
  }
}

TEST(Wa, LifeIsPerCategoryPooledOrFixed) {
  // Turn 1: block A at 0, 1, 2 s (reused after 1 s twice, then not). Turn 2: block X at 3 and
  // 13 s (reused after 10 s once). The refit (due at 20 s) runs before the request at 30 s.
  Trace t;
  add(t, 0, {1}, 1);
  add(t, 1, {1}, 1);
  add(t, 2, {1}, 1);
  add(t, 3, {5}, 2);
  add(t, 13, {5}, 2);
  add(t, 30, {9}, 1);
  struct Want {
    const char* life;
    double life1, life2;
  };
  // Per category p90: {1, 1} -> 1 s and {10} -> 10 s; pooled p90 of {1, 1, 10} (3rd) -> 10 s.
  for (Want w : {Want{"p90", 1, 10}, Want{"p90_all", 10, 10}, Want{"45", 45, 45}}) {
    auto tree = std::make_unique<PrefixTree>(16);
    PolicyContext ctx;
    ctx.tree = tree.get();
    auto policy = make_policy(
        {"wa", std::string("window_s=100,refit_s=20,min_samples=1,life=") + w.life}, ctx);
    const Policy& wa = *policy;
    PrefixCache cache(100, std::move(policy), std::move(tree));
    for (size_t r = 0; r < t.size(); ++r) cache.access(request_view(t, r));
    double pi, lambda, life;
    ASSERT_TRUE(wa_testing::fit(wa, wa_testing::group_of(wa, 0, 1), &pi, &lambda, &life));
    EXPECT_DOUBLE_EQ(pi, 2.0 / 3.0) << w.life;
    EXPECT_DOUBLE_EQ(lambda, 1.0) << w.life;
    EXPECT_DOUBLE_EQ(life, w.life1) << w.life;
    ASSERT_TRUE(wa_testing::fit(wa, wa_testing::group_of(wa, 0, 2), &pi, &lambda, &life));
    EXPECT_DOUBLE_EQ(pi, 0.5) << w.life;
    EXPECT_DOUBLE_EQ(lambda, 0.1) << w.life;
    EXPECT_DOUBLE_EQ(life, w.life2) << w.life;
  }
}

TEST(Wa, EvictsTheCategoryLeastLikelyToBeReused) {
  // Type 1 blocks are reused, type 0 blocks never: once fitted, an older type 1 block
  // survives a younger type 0 one, which LRU would not do.
  Trace t;
  uint64_t id = 100;
  for (int i = 0; i < 10; ++i) {
    add(t, i, {uint64_t(i % 2 + 1)}, 1, 1);  // two type-1 prompts, reused all the time
    add(t, i + 0.5, {id++}, 1, 0);           // one-off type-0 prompts
  }
  add(t, 20, {7}, 1, 1);     // old type-1 block (after the refit at 10 s)
  add(t, 21, {8}, 1, 0);     // younger type-0 block
  add(t, 22, {id++}, 1, 0);  // needs room: capacity 4 holds {1, 2, 7, 8} after r 21
  auto run = make_run("wa", "window_s=100,refit_s=10,min_samples=1", 4, true);
  for (size_t r = 0; r < t.size(); ++r) run.cache->access(request_view(t, r));
  const PrefixTree& tree = run.cache->tree();
  EXPECT_EQ(run.recorder->mismatches, 0);
  EXPECT_NE(tree.find(t.prompt(t.size() - 3)[0]), kNoNode);  // block 7 kept
  EXPECT_EQ(tree.find(t.prompt(t.size() - 2)[0]), kNoNode);  // block 8 evicted
}

TEST(Wa, TwoTiersKeepBothInstancesExact) {
  // WA in HBM and in DRAM: after every request each instance's victim is the brute-force one
  // over its own tier (DRAM receives demoted blocks out of order and must place them by age).
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    Trace trace = typed_workload(seed + 20, 400);
    size_t unique = count_unique_blocks(trace);
    PolicySpec spec{"wa", "window_s=0.05,refit_s=0.005,min_samples=2"};
    PrefixCache cache(unique / 12, spec, PolicyContext{}, unique / 6, spec);
    cache.set_checking(true);
    uint64_t demotions = 0, checked = 0;
    for (size_t r = 0; r < trace.size(); ++r) {
      RequestView v = request_view(trace, r);
      demotions += cache.access(v).demotions;
      for (Tier tier : {Tier::kHbm, Tier::kDram}) {
        Policy& p = tier == Tier::kHbm ? cache.policy() : *cache.dram_policy();
        NodeId want = brute_force_victim(p, cache.tree(), tier, v.time);
        ASSERT_EQ(p.victim(v.time), want) << "request " << r << " tier " << int(tier);
        checked += want != kNoNode;
      }
    }
    EXPECT_GT(demotions, 100u);
    EXPECT_GT(checked, 400u);
  }
}

TEST(Wa, RejectsBadParameters) {
  PrefixTree tree(4);
  PolicyContext ctx;
  ctx.tree = &tree;
  for (const char* bad : {"life=p50", "life=-3", "categories=typed2", "turn_buckets=0",
                          "window_s=0", "refit_s=-1", "min_samples=0", "sample=0", "sample=1.5"})
    EXPECT_THROW(make_policy({"wa", bad}, ctx), ConfigError) << bad;
  EXPECT_NO_THROW(make_policy({"wa", "life=120,categories=single,turn_buckets=3"}, ctx));
}

}  // namespace
}  // namespace kvpolicy
