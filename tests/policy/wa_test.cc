// WA (src/policy/wa.cc): the O(W) victim against a brute-force scan of every evictable leaf,
// the reuse fit on a worked example, and the reduction to LRU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/trace/trace.h"
#include "support/random_workload.h"

namespace kvpolicy {
// Test support defined in src/policy/wa.cc.
namespace wa_testing {
bool node_state(const Policy& p, NodeId n, Time* last, uint32_t* seq, uint32_t* group);
bool fit(const Policy& p, uint32_t group, double* pi, double* lambda, double* life_s);
// The category's score, log ReuseProb blended towards recency by the signal's weight.
bool score_fit(const Policy& p, uint32_t group, double* log_const, double* lambda);
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
    double log_const, lambda, score = 0;
    if (wa_testing::score_fit(wa, group, &log_const, &lambda)) {
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
class Recorder final : public ForwardingPolicy {
 public:
  Recorder(std::unique_ptr<Policy> inner, const PrefixTree& tree, bool check)
      : ForwardingPolicy(std::move(inner)), tree_(tree), check_(check) {}
  NodeId victim(Time now) override {
    NodeId v = inner().victim(now);
    if (check_) {
      NodeId want = brute_force_victim(inner(), tree_, Tier::kHbm, now, &fitted_candidates);
      EXPECT_EQ(v, want) << "at time " << now << " after " << victims.size() << " victims";
      if (v != want) mismatches++;
    }
    return v;
  }
  void on_removed(NodeId n, Removal why) override {
    if (why != Removal::kPromoted) victims.push_back(tree_.key(n));
    inner().on_removed(n, why);
  }
  std::vector<BlockKey> victims;
  uint64_t fitted_candidates = 0;
  int mismatches = 0;

 private:
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
// 2 ms), so that ties between requests and categories are exercised; or kept to the microsecond.
Trace typed_workload(uint64_t seed, uint32_t requests, bool round_times = true) {
  RandomWorkloadOptions o;
  o.seed = seed;
  o.requests = requests;
  Trace t = random_workload(o);
  for (size_t r = 0; r < t.size(); ++r) {
    t.category[r] = static_cast<CategoryId>(mix64(seed * 131 + r) % 3);
    if (round_times) t.time[r] = t.time[r] / 2000 * 2000;
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
      // The fallback towards recency with partial weights (few samples make the spread noisy).
      "window_s=0.05,refit_s=0.005,min_samples=3,signal=0.2,signal_samples=3",
      "window_s=0.05,refit_s=0.005,life=none,signal=1,signal_samples=2",
  };
  uint64_t fitted = 0, victims = 0, partial = 0;
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
        for (const auto& [name, value] : run.recorder->inner().stats())
          if (name == "signal_weight_mean" && value > 0 && value < 1) ++partial;
      }
    }
  }
  // The comparison must have covered fitted models, not only the cold start, and blends.
  EXPECT_GT(victims, 2000u);
  EXPECT_GT(fitted, victims);
  EXPECT_GT(partial, 0);
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
  auto run = make_run("wa", "window_s=100,refit_s=10,min_samples=1,signal=0", 4, true);
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

// The fits of section 4 computed from the whole access history, the obvious way: at a refit at
// the start of request r, every block access of an earlier request within window_s of r's time
// is an instance of its category, reused if a later request (before r) accessed the key again.
struct FitSetup {
  double window_s = 0.05;
  std::string life = "p90";  // p90, p90_all, none, or seconds
  uint64_t min_samples = 3;
  double sample = 1;
  std::string params() const {
    return "refit_s=" + std::to_string(window_s / 10) + ",window_s=" + std::to_string(window_s) +
           ",life=" + life + ",min_samples=" + std::to_string(min_samples) +
           ",sample=" + std::to_string(sample);
  }
};

struct RefFit {
  bool valid = false;
  double pi = 0, lambda = 0, life = 0;
};

double nearest_rank_p90_s(std::vector<Time> v) {
  if (v.empty()) return 0;
  size_t k = static_cast<size_t>(std::ceil(0.9 * double(v.size()))) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return double(v[k]) / kMicrosPerSecond;
}

std::vector<RefFit> reference_fits(const Trace& t, const Policy& wa, size_t r, const FitSetup& s,
                                   size_t groups) {
  struct Acc {
    uint64_t n = 0, reused = 0;
    int64_t sum = 0;
    std::vector<Time> times;
  };
  // The policy's clock never runs backwards.
  std::vector<Time> now(r + 1);
  for (size_t q = 0; q <= r; ++q) now[q] = std::max(q ? now[q - 1] : 0, t.time[q]);
  const Time cutoff = now[r] - static_cast<Time>(std::llround(s.window_s * kMicrosPerSecond));
  const uint64_t threshold = s.sample >= 1 ? UINT64_MAX : static_cast<uint64_t>(s.sample * 0x1p64);
  std::vector<Acc> acc(groups);
  Acc all;
  std::unordered_map<BlockKey, size_t> next;  // key -> its first access after the scan point
  for (size_t q = r; q-- > 0;) {
    uint32_t g = wa_testing::group_of(wa, t.category[q], t.turn[q]);
    for (BlockKey k : t.prompt(q)) {
      if (threshold != UINT64_MAX && mix64(k ^ 0x5a17) >= threshold) continue;
      auto it = next.find(k);
      if (now[q] > cutoff) {
        for (Acc* a : {&acc[g], &all}) {
          ++a->n;
          if (it != next.end()) {
            Time reuse = now[it->second] - now[q];
            ++a->reused;
            a->sum += reuse;
            a->times.push_back(reuse);
          }
        }
      }
      next[k] = q;
    }
  }
  auto fit = [&](const Acc& a) {
    RefFit f;
    if (a.n == 0) return f;
    f.valid = true;
    f.pi = double(a.reused) / double(a.n);
    if (a.reused == 0) return f;
    f.lambda = 1.0 / (std::max<double>(double(a.sum) / double(a.reused), 1.0) / kMicrosPerSecond);
    if (s.life == "none") {
      f.life = INFINITY;
    } else if (s.life == "p90") {
      f.life = nearest_rank_p90_s(a.times);
    } else if (s.life == "p90_all") {
      f.life = nearest_rank_p90_s(all.times);
    } else {
      f.life = std::stod(s.life);
    }
    return f;
  };
  size_t with_data = 0, last = 0;
  for (size_t g = 0; g < groups; ++g)
    if (acc[g].n > 0) ++with_data, last = g;
  RefFit pooled = with_data == 1 && acc[last].n >= s.min_samples ? fit(acc[last]) : fit(all);
  std::vector<RefFit> out(groups);
  for (size_t g = 0; g < groups; ++g) out[g] = acc[g].n >= s.min_samples ? fit(acc[g]) : pooled;
  return out;
}

double policy_stat(const Policy& p, const std::string& name) {
  for (const auto& [k, v] : p.stats())
    if (k == name) return v;
  ADD_FAILURE() << "no stat " << name;
  return 0;
}

// Replays `trace` and after every refit compares each category's fit with the reference; returns
// the number of refits checked.
int check_fits_against_history(const Trace& trace, PrefixCache& cache,
                               std::vector<const Policy*> instances, const FitSetup& s) {
  int checked = 0;
  double refits = 0;
  uint32_t groups = 0;
  for (size_t r = 0; r < trace.size(); ++r) {
    cache.access(request_view(trace, r));
    groups =
        std::max(groups, wa_testing::group_of(*instances[0], trace.category[r], trace.turn[r]) + 1);
    double now_refits = policy_stat(*instances[0], "refits");
    if (now_refits == refits) continue;
    refits = now_refits;
    std::vector<RefFit> want = reference_fits(trace, *instances[0], r, s, groups);
    for (const Policy* p : instances) {
      for (uint32_t g = 0; g < groups; ++g) {
        RefFit got;
        got.valid = wa_testing::fit(*p, g, &got.pi, &got.lambda, &got.life);
        SCOPED_TRACE("request " + std::to_string(r) + " group " + std::to_string(g));
        EXPECT_EQ(got.valid, want[g].valid);
        if (!got.valid || !want[g].valid) continue;
        EXPECT_EQ(got.pi, want[g].pi);
        EXPECT_EQ(got.lambda, want[g].lambda);
        EXPECT_EQ(got.life, want[g].life);
        if (::testing::Test::HasFailure()) return checked;
      }
    }
    ++checked;
  }
  return checked;
}

TEST(Wa, FitsEqualTheWholeHistoryRecomputed) {
  // The fits are kept incrementally (per-block stamps, a map of evicted keys, reuse-time
  // histograms); they must equal the definition recomputed from scratch, at every refit, with
  // blocks evicted and re-inserted, prompts longer than the cache, and two tiers.
  std::vector<FitSetup> setups(5);
  setups[1].life = "p90_all";
  setups[2].life = "none";
  setups[3].life = "0.002";
  setups[4].sample = 0.5;
  int checked = 0;
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    Trace trace = typed_workload(seed + 40, 300, /*round_times=*/seed == 1);
    size_t unique = count_unique_blocks(trace);
    for (const FitSetup& s : setups) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " wa:" + s.params());
      for (size_t cap : {size_t{6}, unique / 10}) {
        WaRun run = make_run("wa", s.params(), cap, false);
        checked += check_fits_against_history(trace, *run.cache, {&run.recorder->inner()}, s);
      }
      PolicySpec spec{"wa", s.params()};
      PrefixCache two(unique / 12, spec, PolicyContext{}, unique / 8, spec);
      checked += check_fits_against_history(trace, two, {&two.policy(), two.dram_policy()}, s);
    }
  }
  EXPECT_GT(checked, 200);
}

TEST(Wa, FitsStayExactForReuseTimesOfDays) {
  // Reuse times from minutes to days (above 2^32 us, where the histograms keep part of a value
  // in its bin): the percentiles stay exact.
  Trace trace = typed_workload(77, 300, /*round_times=*/false);
  for (Time& t : trace.time) t = (t << 21) + t;  // the workload's ~0.2 s become ~5 days
  FitSetup s;
  s.window_s = 2e5;
  WaRun run = make_run("wa", s.params(), count_unique_blocks(trace) / 10, false);
  EXPECT_GT(check_fits_against_history(trace, *run.cache, {&run.recorder->inner()}, s), 10);
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

namespace kvpolicy {
namespace {

// Times as late as a reader lets through: the refit and window arithmetic stays in range (the
// sanitizer build checks it; a native trace's time near 2^63 once overflowed here).
TEST(Wa, TimesUpToTheReadersLimit) {
  Trace trace = typed_workload(9, 200);
  for (size_t r = 0; r < trace.size(); ++r) trace.time[r] += kMaxTime - 1 - trace.time.back();
  size_t cap = count_unique_blocks(trace) / 8;
  WaRun wa = make_run("wa", "refit_s=1e9,window_s=1e9", cap, false);
  for (size_t r = 0; r < trace.size(); ++r) wa.cache->access(request_view(trace, r));
  EXPECT_FALSE(wa.recorder->victims.empty());
  EXPECT_THROW(make_run("wa", "refit_s=1e300", cap, false), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
