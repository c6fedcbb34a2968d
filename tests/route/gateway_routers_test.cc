// power_of_two, prefix_hash, load_aware and aibrix_prefix (the gateways' routers of 2026) on
// hand-set clusters: each branch, tie rule and bound against a hand-computed case.
#include <gtest/gtest.h>

#include <map>

#include "kvpolicy/route/router.h"
#include "support/fake_cluster.h"

namespace kvpolicy {
namespace {

using testing::FakeCluster;
using testing::make_test_router;
using testing::prompt;
using testing::request;
using testing::router_stat;

void set_loads(FakeCluster& cluster, const std::vector<uint32_t>& loads) {
  for (WorkerId w = 0; w < loads.size(); ++w) cluster.mutable_load(w).in_flight = loads[w];
}

// ---- power_of_two

TEST(PowerOfTwoRouter, WithTwoWorkersAlwaysPicksTheIdleOne) {
  auto router = make_test_router("power_of_two", 2);
  FakeCluster cluster(2);
  auto p = prompt({1});
  for (WorkerId loaded : {0u, 1u}) {
    set_loads(cluster, {0, 0});
    cluster.mutable_load(loaded).in_flight = 1;
    for (RequestIndex i = 0; i < 500; ++i)
      EXPECT_EQ(router->route(request(p, i), cluster), 1 - loaded);
  }
  EXPECT_EQ(router_stat(*router, "equal_load_decisions"), 0);
}

TEST(PowerOfTwoRouter, ChoosesAsTheLessLoadedOfAUniformPair) {
  // Distinct loads: the worker of rank k (0 = least loaded) wins the pairs with the n - 1 - k
  // more loaded ones, so with 4 workers it is chosen with probability 3/6, 2/6, 1/6, 0.
  auto router = make_test_router("power_of_two", 4, 7);
  FakeCluster cluster(4);
  set_loads(cluster, {2, 0, 3, 1});  // ranks: worker 1, 3, 0, 2
  auto p = prompt({1});
  std::vector<int> count(4, 0);
  const int n = 12000;
  for (RequestIndex i = 0; i < n; ++i) ++count.at(router->route(request(p, i), cluster));
  EXPECT_EQ(count[2], 0) << "the most loaded never wins a pair";
  EXPECT_NEAR(count[1], n / 2, 300);
  EXPECT_NEAR(count[3], n / 3, 300);
  EXPECT_NEAR(count[0], n / 6, 300);
  // Equal loads: the first drawn, so each worker equally often.
  set_loads(cluster, {4, 4, 4, 4});
  std::fill(count.begin(), count.end(), 0);
  for (RequestIndex i = 0; i < n; ++i) ++count.at(router->route(request(p, i), cluster));
  for (int c : count) EXPECT_NEAR(c, n / 4, 300);
  EXPECT_EQ(router_stat(*router, "equal_load_decisions"), n);
}

TEST(PowerOfTwoRouter, ComparesTokensOrPolledLoadsWhenAsked) {
  FakeCluster cluster(2);
  auto p = prompt({1});
  // Worker 0: nothing in flight but 100 blocks held; worker 1: 3 in flight, 64 tokens queued.
  cluster.mutable_load(0).active_blocks = 100;
  cluster.mutable_load(1).in_flight = 3;
  cluster.mutable_load(1).queued_prefill_tokens = 64;
  EXPECT_EQ(make_test_router("power_of_two", 2)->route(request(p, 0), cluster), 0u);
  EXPECT_EQ(make_test_router("power_of_two:load=tokens", 2)->route(request(p, 0), cluster), 1u);

  // Polled every second: loads seen at t = 0 hold until t = 1 s.
  auto polled = make_test_router("power_of_two:poll_ms=1000", 2);
  FakeCluster c2(2);
  set_loads(c2, {0, 5});
  EXPECT_EQ(polled->route(request(p, 0), c2), 0u);
  set_loads(c2, {5, 0});
  c2.set_now(kMicrosPerSecond / 2);
  EXPECT_EQ(polled->route(request(p, 1), c2), 0u) << "still the loads polled at 0";
  c2.set_now(kMicrosPerSecond);
  EXPECT_EQ(polled->route(request(p, 2), c2), 1u);
  EXPECT_EQ(router_stat(*polled, "load_polls"), 2);
}

// ---- prefix_hash

TEST(PrefixHashRouter, HashesTheFirst256TokensOnly) {
  auto router = make_test_router("prefix_hash", 4);
  FakeCluster cluster(4);
  std::vector<int> heads_of(4, 0);
  for (uint64_t h = 0; h < 200; ++h) {
    // 16 blocks of 16 tokens = 256: the same head with different tails.
    std::vector<BlockKey> a, b;
    BlockKey key = kRootKey;
    for (uint64_t j = 0; j < 20; ++j) {
      key = chain_key(key, h * 100 + j);
      a.push_back(key);
      b.push_back(j < 16 ? key : chain_key(b.back(), 999));
    }
    WorkerId w = router->route(request(a, 2 * h), cluster);
    EXPECT_EQ(router->route(request(b, 2 * h + 1), cluster), w) << "head " << h;
    ++heads_of[w];
  }
  for (int n : heads_of) EXPECT_GT(n, 25) << "150 virtual nodes per worker spread 200 heads";
  EXPECT_EQ(router_stat(*router, "ring_hit_decisions"), 400);
}

TEST(PrefixHashRouter, ShorterPrefixAndShorterPrompts) {
  auto router = make_test_router("prefix_hash:prefix_tokens=32", 8);
  FakeCluster cluster(8);
  // 32 tokens = 2 blocks: the third block does not matter.
  for (uint64_t h = 0; h < 50; ++h) {
    auto a = prompt({h, h + 1000, 1}), b = prompt({h, h + 1000, 2});
    EXPECT_EQ(router->route(request(a, 0), cluster), router->route(request(b, 1), cluster));
  }
  // A prompt without blocks: nothing to hash, the least loaded.
  set_loads(cluster, {3, 2, 2, 5, 1, 4, 1, 9});
  std::vector<BlockKey> none;
  EXPECT_EQ(router->route(request(none, 0), cluster), 4u);
  EXPECT_EQ(router_stat(*router, "no_tokens_decisions"), 1);
}

TEST(PrefixHashRouter, AnOverloadedHomeGivesWayToTheLeastLoadedWithinTheBound) {
  auto router = make_test_router("prefix_hash", 4);
  FakeCluster cluster(4);
  auto p = prompt({42, 43});
  const WorkerId home = router->route(request(p, 0), cluster);  // nothing in flight: home
  auto others = std::vector<WorkerId>{};
  for (WorkerId w = 0; w < 4; ++w)
    if (w != home) others.push_back(w);
  // 15 in flight: the bound is 1.25 x 16 / 4 = 5, inclusive. Home at 5 keeps it.
  set_loads(cluster, {0, 0, 0, 0});
  cluster.mutable_load(home).in_flight = 5;
  cluster.mutable_load(others[0]).in_flight = 4;
  cluster.mutable_load(others[1]).in_flight = 3;
  cluster.mutable_load(others[2]).in_flight = 3;
  EXPECT_EQ(router->route(request(p, 1), cluster), home);
  // Home at 6 of 15 (bound 5): the least loaded within it; 3 and 3 tie to the lower index.
  cluster.mutable_load(home).in_flight = 6;
  cluster.mutable_load(others[0]).in_flight = 3;
  EXPECT_EQ(router->route(request(p, 2), cluster), others[0]);
  EXPECT_EQ(router_stat(*router, "ring_hit_decisions"), 2);
  EXPECT_EQ(router_stat(*router, "load_balance_decisions"), 1);
}

// ---- load_aware

TEST(LoadAwareRouter, ScoresAsTheHandComputedCase) {
  FakeCluster cluster(3);
  auto p = prompt({1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                   17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32});  // 512 tokens
  // Worker 0: 20 blocks (320 tokens, one 256-token chunk) cached, 6 in flight; worker 1: all
  // cached, 9 in flight; worker 2: nothing, idle. Mean 5.
  cluster.cache(0, std::vector<BlockKey>(p.begin(), p.begin() + 20));
  cluster.cache(1, p);
  set_loads(cluster, {6, 9, 0});
  // 0.5 - (6 - 5) / 5 = 0.3; 1 - 4 / 5 = 0.2; 0 + 5 / 5 = 1: the idle worker.
  auto router = make_test_router("load_aware", 3);
  EXPECT_EQ(router->route(request(p, 0), cluster), 2u);
  EXPECT_EQ(router_stat(*router, "load_over_match_decisions"), 1);
  // beta 0.2: 0.46, 0.84, 0.2: the whole match.
  auto mild = make_test_router("load_aware:beta=0.2", 3);
  EXPECT_EQ(mild->route(request(p, 0), cluster), 1u);
  EXPECT_EQ(router_stat(*mild, "longest_match_decisions"), 1);
}

TEST(LoadAwareRouter, CountsWholeChunksAndBreaksTiesToTheLowerIndex) {
  FakeCluster cluster(2);
  auto p = prompt({1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                   17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32});
  cluster.cache(0, std::vector<BlockKey>(p.begin(), p.begin() + 20));
  set_loads(cluster, {2, 0});  // mean 1
  // Chunks of 256: 0.5 - 0.3 = 0.2 against 0.3; every token: 0.625 - 0.3 = 0.325 against 0.3.
  EXPECT_EQ(make_test_router("load_aware:beta=0.3", 2)->route(request(p, 0), cluster), 1u);
  EXPECT_EQ(
      make_test_router("load_aware:beta=0.3,chunk_tokens=1", 2)->route(request(p, 0), cluster), 0u);
  // Nothing cached, loads 1, 0, 0: mean 1/3 scaled by 1; workers 1 and 2 tie: the lower.
  FakeCluster three(3);
  set_loads(three, {1, 0, 0});
  auto router = make_test_router("load_aware", 3);
  EXPECT_EQ(router->route(request(p, 0), three), 1u);
  EXPECT_EQ(router_stat(*router, "no_match_decisions"), 1);
}

// ---- aibrix_prefix

TEST(AibrixPrefixRouter, WalksTheMatchesByPercentThenLoadWithinTheStddevBound) {
  auto router = make_test_router("aibrix_prefix", 3);
  FakeCluster cluster(3);
  auto y = prompt({1, 2, 9, 9}), x = prompt({1, 2, 3, 4});
  // Nothing matches y: the least loaded, worker 0.
  set_loads(cluster, {0, 1, 1});
  EXPECT_EQ(router->route(request(y, 0), cluster), 0u);
  EXPECT_EQ(router_stat(*router, "least_request_decisions"), 1);
  // x matches 50 % on worker 0, at 5 in flight: mean 2, sample sd sqrt(7) = 2.65, bound 4.65.
  // Over it: the least loaded, worker 2.
  set_loads(cluster, {5, 1, 0});
  EXPECT_EQ(router->route(request(x, 1), cluster), 2u);
  EXPECT_EQ(router_stat(*router, "prefix_skipped_decisions"), 1);
  // Now worker 2 holds all of x (100 %) and worker 0 half. Loads 0, 0, 2: mean 2/3, sd 1.15,
  // bound 1.82: worker 2 is over it, the next in order (worker 0, 50 %) is within.
  set_loads(cluster, {0, 0, 2});
  EXPECT_EQ(router->route(request(x, 2), cluster), 0u);
  // Workers 0 and 2 now both hold all of x: equal percents go to the fewer in flight. Loads
  // 2, 1, 1: bound 1.33 + 0.58; worker 2 (1) before worker 0 (2).
  set_loads(cluster, {2, 1, 1});
  EXPECT_EQ(router->route(request(x, 3), cluster), 2u);
  EXPECT_EQ(router_stat(*router, "prefix_decisions"), 2);
  // A wider bound (2 sd): 0, 0, 2 keeps worker 2 (2 <= 0.67 + 2.31).
  auto wide = make_test_router("aibrix_prefix:std_factor=2", 3);
  set_loads(cluster, {1, 1, 0});
  wide->route(request(x, 0), cluster);  // worker 2
  set_loads(cluster, {0, 0, 2});
  EXPECT_EQ(wide->route(request(x, 1), cluster), 2u);
}

TEST(AibrixPrefixRouter, AnImbalancedClusterOffersOnlyItsLeastLoaded) {
  auto b = prompt({7, 8, 9});
  for (auto [spec, want] :
       {std::pair{"aibrix_prefix", 0u}, {"aibrix_prefix:imbalance_abs=16", 1u}}) {
    SCOPED_TRACE(spec);
    auto router = make_test_router(spec, 2);
    FakeCluster cluster(2);
    set_loads(cluster, {1, 0});
    EXPECT_EQ(router->route(request(b, 0), cluster), 1u);  // no match: the least loaded
    // 9 - 0 > 8: only worker 0 is offered, and it holds nothing: the least loaded, 0. Without
    // the imbalance check, worker 1's match is within 4.5 + 6.36.
    set_loads(cluster, {0, 9});
    EXPECT_EQ(router->route(request(b, 1), cluster), want);
    EXPECT_EQ(router_stat(*router, "imbalanced_decisions"), want == 0 ? 1 : 0);
  }
}

TEST(AibrixPrefixRouter, ForgetsAfterTheTtlAndBreaksLoadTiesAtRandom) {
  auto router = make_test_router("aibrix_prefix:ttl_s=1", 2);
  FakeCluster cluster(2);
  auto p = prompt({5, 6});
  set_loads(cluster, {1, 0});
  EXPECT_EQ(router->route(request(p, 0), cluster), 1u);
  // Loads 1, 1: sd 0, the bound is 1, inclusive: worker 1's match.
  set_loads(cluster, {1, 1});
  cluster.set_now(kMicrosPerSecond);
  EXPECT_EQ(router->route(request(p, 1), cluster), 1u);
  // Loads 0, 1 (bound 0.5 + 0.71) would keep the match, but it was last routed over a second
  // ago: forgotten, the least loaded.
  set_loads(cluster, {0, 1});
  cluster.set_now(2 * kMicrosPerSecond + 1);
  EXPECT_EQ(router->route(request(p, 2), cluster), 0u);

  // Distinct prompts on an idle cluster of 4: each goes to a random least-loaded worker.
  auto spread = make_test_router("aibrix_prefix", 4, 3);
  FakeCluster idle(4);
  std::vector<int> count(4, 0);
  std::vector<std::vector<BlockKey>> prompts;
  for (uint64_t i = 0; i < 400; ++i) prompts.push_back(prompt({1000 + i}));
  for (RequestIndex i = 0; i < 400; ++i) ++count.at(spread->route(request(prompts[i], i), idle));
  for (int c : count) EXPECT_NEAR(c, 100, 40);
}

}  // namespace
}  // namespace kvpolicy
