// dynamo's completed cost (credit and its decay, lower-tier credit, tracked prefill load that
// decays, softmax temperature), lmetric and dualmap, on hand-computed fake clusters.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <set>

#include "kvpolicy/route/router.h"
#include "support/fake_cluster.h"

namespace kvpolicy {
namespace {

using testing::FakeCluster;
using testing::make_test_router;
using testing::prompt;
using testing::request;
using testing::router_stat;

// Block size 16; the default prefill cost of 1e-4 s per token (0.1 ms).
// --- dynamo ---

TEST(DynamoCost, OverlapCreditAndItsDecayAsHandComputed) {
  FakeCluster cluster(2);
  auto p = prompt({1, 2, 3, 4, 5, 6, 7, 8});  // 8 blocks, 128 tokens
  cluster.cache(0, p);
  cluster.mutable_load(0).queued_prefill_tokens = 96;  // 6 blocks of prefill load
  // Credit 1, no decay: worker 0 costs 8 - 8 + 6 = 6, worker 1 costs 8.
  EXPECT_EQ(make_test_router("dynamo", 2)->route(request(p, 0), cluster), 0u);
  // Decay 1: worker 0's load is 6 blocks over the least (0), 6/8 of the prompt: the credit is
  // 8 / (1 + 6/8) = 4.57 blocks, so it costs 8 - 4.57 + 6 = 9.43 > 8.
  EXPECT_EQ(
      make_test_router("dynamo:overlap_score_credit_decay=1", 2)->route(request(p, 1), cluster),
      1u);
  // Decay 0.1: 8 / (1 + 0.075) = 7.44, 8 - 7.44 + 6 = 6.56 < 8.
  EXPECT_EQ(
      make_test_router("dynamo:overlap_score_credit_decay=0.1", 2)->route(request(p, 2), cluster),
      0u);
  // Credit 0.5: 8 - 4 + 6 = 10 > 8; credit 0.8: 8 - 6.4 + 6 = 7.6 < 8.
  EXPECT_EQ(make_test_router("dynamo:overlap_score_credit=0.5", 2)->route(request(p, 3), cluster),
            1u);
  EXPECT_EQ(make_test_router("dynamo:overlap_score_credit=0.8", 2)->route(request(p, 4), cluster),
            0u);
  // overlap_weight scales the whole prefill term: 0.5 x 6 + 0 = 3 against 0.5 x 8 = 4.
  EXPECT_EQ(make_test_router("dynamo:overlap_weight=0.5", 2)->route(request(p, 5), cluster), 0u);
}

TEST(DynamoCost, LowerTierBlocksEarnTheirWeights) {
  FakeCluster cluster(2);
  auto p = prompt({1, 2, 3, 4, 5, 6, 7, 8});
  std::vector<BlockKey> first2(p.begin(), p.begin() + 2), next4(p.begin() + 2, p.begin() + 6),
      last2(p.begin() + 6, p.end()), first4(p.begin(), p.begin() + 4);
  cluster.cache(0, first2);
  cluster.cache_lower(0, 0, next4);  // DRAM
  cluster.cache_lower(0, 1, last2);  // SSD
  cluster.cache(1, first4);
  // Worker 0: 8 - (2 + 0.75 x 4 + 0.25 x 2) = 2.5; worker 1: 8 - 4 = 4.
  auto router = make_test_router("dynamo", 2);
  EXPECT_EQ(router->route(request(p, 0), cluster), 0u);
  EXPECT_EQ(router_stat(*router, "tier_credited_decisions"), 1);
  // Without tier credit worker 0 costs 6.
  EXPECT_EQ(make_test_router("dynamo:host_cache_hit_weight=0,disk_cache_hit_weight=0", 2)
                ->route(request(p, 1), cluster),
            1u);
  // DRAM at 0.5, SSD at 0: 8 - 2 - 2 = 4, a tie, to the smaller cache (2 blocks against 4).
  EXPECT_EQ(make_test_router("dynamo:host_cache_hit_weight=0.5,disk_cache_hit_weight=0", 2)
                ->route(request(p, 2), cluster),
            0u);
  // A DRAM block behind a missing block does not count: only the unbroken run after HBM.
  FakeCluster gap(2);
  gap.cache(0, first2);
  gap.cache_lower(0, 0, last2);
  gap.cache(1, std::vector<BlockKey>(p.begin(), p.begin() + 3));
  EXPECT_EQ(make_test_router("dynamo", 2)->route(request(p, 3), gap), 1u);  // 6 against 5
}

// A router with prefill_load=tracked that routed a 160-token prompt A to worker 0 at time 0
// (modelled prefill: 160 x 0.1 ms = 16 ms), asked at time t about a one-block prompt cached on
// worker 0 only: worker 0 costs (tracked load) / 16 blocks, worker 1 costs 1 block, and a tie
// goes to worker 1 (the smaller cache). So worker 0 is chosen iff the load is under 16 tokens.
WorkerId probe_after_a(const std::string& spec, Time t, bool complete_a_at = false,
                       Time completed = 0) {
  FakeCluster cluster(2);
  auto router = make_test_router(spec, 2);
  auto a = prompt({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  EXPECT_EQ(router->route(request(a, 0), cluster), 0u);
  if (complete_a_at) {
    cluster.set_now(completed);
    router->on_complete(request(a, 0), 0, Completion{}, cluster);
  }
  auto x = prompt({500});
  cluster.cache(0, x);
  cluster.set_now(t);
  return router->route(request(x, 1), cluster);
}

TEST(DynamoCost, TrackedPrefillLoadDecaysLinearlyFromWhenRouted) {
  const std::string spec = "dynamo:prefill_load=tracked";
  // Load at t: ceil(160 x (1 - t / 16000 us)); under 16 from t = 14500 us (exactly 15 there).
  EXPECT_EQ(probe_after_a(spec, 0), 1u);      // 160 tokens: counts in full when routed
  EXPECT_EQ(probe_after_a(spec, 8000), 1u);   // 80
  EXPECT_EQ(probe_after_a(spec, 14499), 1u);  // ceil(15.001) = 16: a tie, to worker 1
  EXPECT_EQ(probe_after_a(spec, 14500), 0u);  // 15
  EXPECT_EQ(probe_after_a(spec, 20000), 0u);  // expired at 16000
  // Without decay it counts in full until its request completes.
  EXPECT_EQ(probe_after_a(spec + ",prefill_decay=none", 1000000), 1u);
  EXPECT_EQ(probe_after_a(spec + ",prefill_decay=none", 1000, true, 500), 0u);
  // Completion before the modelled end removes it at once.
  EXPECT_EQ(probe_after_a(spec, 1000, true, 500), 0u);
  // The cluster's own queued tokens are not read in tracked mode (and only they in the default).
  FakeCluster cluster(2);
  cluster.mutable_load(0).queued_prefill_tokens = 1000;
  auto x = prompt({500});
  cluster.cache(0, x);
  EXPECT_EQ(make_test_router(spec, 2)->route(request(x, 0), cluster), 0u);
  EXPECT_EQ(make_test_router("dynamo", 2)->route(request(x, 0), cluster), 1u);
}

TEST(DynamoCost, OnlyTheOldestTrackedPrefillDecays) {
  // A (160 uncached tokens, 16 ms) then B (80 uncached, 8 ms) both on worker 0 at time 0: B
  // counts in full until A's modelled end, then decays over its own 8 ms.
  auto probe = [](Time t) {
    FakeCluster cluster(2);
    auto router = make_test_router("dynamo:prefill_load=tracked", 2);
    auto a = prompt({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
    auto b = prompt({100, 101, 102, 103, 104, 105, 106, 107, 108, 109});
    EXPECT_EQ(router->route(request(a, 0), cluster), 0u);
    cluster.cache(0, std::vector<BlockKey>(b.begin(), b.begin() + 5));
    cluster.mutable_load(1).active_blocks = 100;  // B goes to worker 0: 5 + 10 < 10 + 100
    EXPECT_EQ(router->route(request(b, 1), cluster), 0u);
    cluster.mutable_load(1).active_blocks = 0;
    auto x = prompt({500});
    cluster.cache(0, x);
    cluster.set_now(t);
    WorkerId w = router->route(request(x, 2), cluster);
    return std::pair{w, router_stat(*router, "tracked_prefills_expired")};
  };
  EXPECT_EQ(probe(15999), std::pair(1u, 0.0));  // 80 + ceil(0.01) = 81
  EXPECT_EQ(probe(16000), std::pair(1u, 1.0));  // A expired; B in full: 80
  // B: ceil(80 x (1 - (t - 16000) / 8000)) < 16 from t = 22500 (exactly 15).
  EXPECT_EQ(probe(22499), std::pair(1u, 1.0));
  EXPECT_EQ(probe(22500), std::pair(0u, 1.0));
  EXPECT_EQ(probe(24000), std::pair(0u, 2.0));
}

TEST(DynamoCost, TemperatureZeroIsTheArgmin) {
  FakeCluster cluster(3);
  auto p = prompt({1, 2, 3, 4});
  for (auto [w, active] : {std::pair{0u, 7u}, {1u, 2u}, {2u, 5u}})
    cluster.mutable_load(w).active_blocks = active;
  for (const char* spec : {"dynamo", "dynamo:router_temperature=0"}) {
    auto router = make_test_router(spec, 3);
    for (RequestIndex i = 0; i < 20; ++i) EXPECT_EQ(router->route(request(p, i), cluster), 1u);
    EXPECT_EQ(router_stat(*router, "argmin_decisions"), 20);
    EXPECT_EQ(router_stat(*router, "softmax_decisions"), 0);
  }
}

TEST(DynamoCost, SeededTemperatureDrawsAsTheSoftmaxSays) {
  FakeCluster cluster(3);
  auto p = prompt({1, 2, 3, 4});
  // Costs 4, 9, 14: range 10; at temperature 0.5, p ~ exp(-(c - 4) / 5) = 1, e^-1, e^-2.
  for (auto [w, active] : {std::pair{0u, 0u}, {1u, 5u}, {2u, 10u}})
    cluster.mutable_load(w).active_blocks = active;
  const int draws = 30000;
  auto run = [&](uint64_t seed) {
    auto router = make_test_router("dynamo:router_temperature=0.5", 3, seed);
    std::vector<WorkerId> out;
    for (int i = 0; i < draws; ++i) out.push_back(router->route(request(p, i), cluster));
    EXPECT_EQ(router_stat(*router, "softmax_decisions"), draws);
    return out;
  };
  auto first = run(7);
  EXPECT_EQ(first, run(7));  // reproducible per seed
  EXPECT_NE(first, run(8));
  std::array<double, 3> want{1, std::exp(-1.0), std::exp(-2.0)};
  double sum = want[0] + want[1] + want[2];
  std::array<int, 3> seen{};
  for (WorkerId w : first) ++seen.at(w);
  double chi2 = 0;
  for (int w = 0; w < 3; ++w) {
    double expected = draws * want[w] / sum;
    chi2 += (seen[w] - expected) * (seen[w] - expected) / expected;
  }
  EXPECT_LT(chi2, 13.82) << seen[0] << " " << seen[1] << " " << seen[2];  // df 2, p = 0.001
  // Equal costs: uniform.
  FakeCluster flat(3);
  auto router = make_test_router("dynamo:router_temperature=0.5", 3, 3);
  std::array<int, 3> uniform{};
  for (int i = 0; i < 3000; ++i) ++uniform.at(router->route(request(p, i), flat));
  for (int c : uniform) EXPECT_NEAR(c, 1000, 120);
}

// --- lmetric ---

TEST(LMetricRouter, LeastProductOfNewPrefillTokensAndBatchSize) {
  FakeCluster cluster(3);
  auto p = prompt({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});                   // 160 tokens
  cluster.cache(0, std::vector<BlockKey>(p.begin(), p.begin() + 6));  // 64 new tokens
  cluster.cache(2, std::vector<BlockKey>(p.begin(), p.begin() + 8));  // 32 new tokens
  for (auto [w, running] : {std::pair{0u, 3u}, {1u, 1u}, {2u, 6u}})
    cluster.mutable_load(w).running = running;
  // 64 x 3 = 192, 160 x 1 = 160, 32 x 6 = 192.
  auto router = make_test_router("lmetric", 3);
  EXPECT_EQ(router->route(request(p, 0), cluster), 1u);
  EXPECT_EQ(router_stat(*router, "product_decisions"), 1);
  // 32 x 5 = 160 ties with worker 1: to the fewer new prefill tokens.
  cluster.mutable_load(2).running = 5;
  EXPECT_EQ(router->route(request(p, 1), cluster), 2u);
  EXPECT_EQ(router_stat(*router, "ties_to_fewer_prefill_tokens"), 1);
  // Idle workers score 0 whatever their cache: among them, the most cached.
  for (WorkerId w = 0; w < 3; ++w) cluster.mutable_load(w).running = 0;
  EXPECT_EQ(router->route(request(p, 2), cluster), 2u);
  EXPECT_EQ(router_stat(*router, "zero_score_decisions"), 1);
  // Equal tokens and scores: the fewer requests in flight, then the lower index.
  FakeCluster same(3);
  EXPECT_EQ(router->route(request(p, 3), same), 0u);
  EXPECT_EQ(router_stat(*router, "ties_to_lower_index"), 1);
  same.mutable_load(0).in_flight = 2;
  same.mutable_load(1).in_flight = same.mutable_load(2).in_flight = 1;
  EXPECT_EQ(router->route(request(p, 3), same), 1u);
  EXPECT_EQ(router_stat(*router, "ties_to_lower_index"), 2);
  same.mutable_load(1).in_flight = 3;
  EXPECT_EQ(router->route(request(p, 3), same), 2u);
  EXPECT_EQ(router_stat(*router, "ties_to_fewer_in_flight"), 1);
  // Waiting requests are not the batch, unless batch=in_flight: running gives 64 x 3 = 192,
  // 160 x 2 = 320, 32 x 7 = 224; in flight, 64 x 7 = 448 instead of 192.
  cluster.mutable_load(0).running = 3;
  cluster.mutable_load(0).in_flight = 7;
  cluster.mutable_load(1).running = cluster.mutable_load(1).in_flight = 2;
  cluster.mutable_load(2).running = cluster.mutable_load(2).in_flight = 7;
  EXPECT_EQ(make_test_router("lmetric", 3)->route(request(p, 4), cluster), 0u);
  EXPECT_EQ(make_test_router("lmetric:batch=in_flight", 3)->route(request(p, 5), cluster), 2u);
  // prefill=queued adds the worker's queued prefill tokens: (64 + 200) x 3 = 792 > 224.
  cluster.mutable_load(0).queued_prefill_tokens = 200;
  EXPECT_EQ(make_test_router("lmetric:prefill=queued", 3)->route(request(p, 6), cluster), 2u);
}

// --- dualmap ---

struct Pair {
  WorkerId first, second;
};

// The two candidates of prompt `p` on an 8-worker cluster: the first is taken when all is idle
// (equal caches and predictions); overloading it yields the second.
Pair candidates_of(const std::vector<BlockKey>& p) {
  FakeCluster cluster(8);
  auto router = make_test_router("dualmap", 8);
  Pair c;
  c.first = router->route(request(p, 0), cluster);
  cluster.mutable_load(c.first).queued_prefill_tokens = 1000000;
  c.second = router->route(request(p, 1), cluster);
  // Both meet the SLO with equal caches: each time the sooner predicted first token.
  EXPECT_EQ(router_stat(*router, "affinity_decisions"), 2);
  return c;
}

TEST(DualMapRouter, TwoCandidatesFixedByTheLeadingBlocks) {
  auto base = candidates_of(prompt({1, 2, 3, 4, 5}));
  EXPECT_NE(base.first, base.second);
  // The same first four blocks (prefix_blocks = 4): the same two workers, whatever follows.
  for (uint64_t tail : {6u, 7u, 99u}) {
    auto c = candidates_of(prompt({1, 2, 3, 4, tail, tail + 1}));
    EXPECT_EQ(c.first, base.first);
    EXPECT_EQ(c.second, base.second);
  }
  // Different prefixes spread over the workers (first candidates of 800 prefixes).
  std::array<int, 8> count{};
  FakeCluster idle(8);
  auto router = make_test_router("dualmap", 8);
  for (uint64_t k = 0; k < 800; ++k)
    ++count.at(router->route(request(prompt({k, k + 1000}), k), idle));
  for (int c : count) EXPECT_NEAR(c, 100, 40);
}

TEST(DualMapRouter, PrefersTheCacheWithinTheSloThenTheLessLoaded) {
  auto p = prompt({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});  // 160 tokens: 16 ms to prefill
  auto c = candidates_of(p);
  FakeCluster cluster(8);
  // The second candidate holds half the prompt: taken while its prediction meets 200 ms, even
  // though it is the more loaded.
  cluster.cache(c.second, std::vector<BlockKey>(p.begin(), p.begin() + 5));
  cluster.mutable_load(c.second).queued_prefill_tokens = 1900;  // (1900 + 80) x 0.1 ms = 198 ms
  auto router = make_test_router("dualmap", 8);
  EXPECT_EQ(router->route(request(p, 0), cluster), c.second);
  // 1930 queued: 201 ms > 200: the other candidate (16 ms) instead.
  cluster.mutable_load(c.second).queued_prefill_tokens = 1930;
  EXPECT_EQ(router->route(request(p, 1), cluster), c.first);
  // No cache anywhere: the less loaded of the two.
  FakeCluster plain(8);
  plain.mutable_load(c.first).queued_prefill_tokens = 500;
  plain.mutable_load(c.second).queued_prefill_tokens = 100;
  EXPECT_EQ(router->route(request(p, 2), plain), c.second);
  EXPECT_EQ(router_stat(*router, "affinity_decisions"), 2);
  EXPECT_EQ(router_stat(*router, "balanced_decisions"), 1);
}

TEST(DualMapRouter, BothCandidatesMissingTheSloFallBack) {
  auto p = prompt({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  auto c = candidates_of(p);
  FakeCluster cluster(8);
  for (WorkerId w = 0; w < 8; ++w) cluster.mutable_load(w).queued_prefill_tokens = 5000 + 10 * w;
  cluster.mutable_load(c.first).queued_prefill_tokens = 3000;   // 316 ms
  cluster.mutable_load(c.second).queued_prefill_tokens = 2500;  // 266 ms
  WorkerId other = 7;
  while (other == c.first || other == c.second) --other;
  cluster.mutable_load(other).queued_prefill_tokens = 1000;  // 116 ms: not a candidate
  auto global = make_test_router("dualmap", 8);
  EXPECT_EQ(global->route(request(p, 0), cluster), other);
  EXPECT_EQ(router_stat(*global, "slo_fallback_decisions"), 1);
  EXPECT_EQ(make_test_router("dualmap:fallback=pair", 8)->route(request(p, 1), cluster), c.second);
  // At the SLO exactly (2000 - 160 queued + 160: 200 ms) the candidate still meets it.
  cluster.mutable_load(c.second).queued_prefill_tokens = 1840;
  EXPECT_EQ(make_test_router("dualmap", 8)->route(request(p, 2), cluster), c.second);
}

}  // namespace
}  // namespace kvpolicy
