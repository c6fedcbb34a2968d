// cache_aware, dynamo and llm_d: prefix affinity against load, on hand-set clusters.
#include <gtest/gtest.h>

#include "kvpolicy/route/router.h"
#include "support/fake_cluster.h"

namespace kvpolicy {
namespace {

using testing::FakeCluster;
using testing::make_test_router;
using testing::prompt;
using testing::request;
using testing::router_stat;

TEST(CacheAwareRouter, SendsARepeatedPrefixToTheSameWorkerUnlessImbalanced) {
  auto router = make_test_router("cache_aware", 4);
  FakeCluster cluster(4);
  std::vector<std::vector<BlockKey>> first;
  for (uint64_t g = 0; g < 4; ++g) first.push_back(prompt({g * 100, g * 100 + 1, g * 100 + 2, 1}));
  // Nothing matches: each goes to the smallest tree, so the four groups spread.
  for (RequestIndex i = 0; i < 4; ++i) {
    EXPECT_EQ(router->route(request(first[i], i), cluster), i);
    cluster.arrive(i, request(first[i], i));
  }
  // Three of four blocks match: the group's worker.
  for (uint64_t g = 0; g < 4; ++g) {
    auto again = prompt({g * 100, g * 100 + 1, g * 100 + 2, 2});
    EXPECT_EQ(router->route(request(again, 10 + g), cluster), g);
  }
  auto again = prompt({0, 1, 2, 3});
  // max - min = 37 > 32 and 40 > 1.0001 x 3: the least-loaded worker, whatever the tree says.
  for (auto [w, load] : {std::pair{0u, 40u}, {1u, 5u}, {2u, 3u}, {3u, 10u}})
    cluster.mutable_load(w).in_flight = load;
  EXPECT_EQ(router->route(request(again, 20), cluster), 2u);
  EXPECT_EQ(router_stat(*router, "imbalanced_decisions"), 1);
  // Balanced again: the longest match, now worker 2's (the imbalanced choice was recorded).
  cluster.mutable_load(0).in_flight = 3;
  EXPECT_EQ(router->route(request(again, 21), cluster), 2u);
  EXPECT_EQ(router_stat(*router, "imbalanced_decisions"), 1);
}

TEST(CacheAwareRouter, BelowTheThresholdTakesTheSmallestTree) {
  auto a = prompt({1, 2, 3, 4}), b = prompt({9, 10, 11, 12, 13, 14}), x = prompt({9, 7, 8, 6});
  for (auto [spec, want] :
       {std::pair{"cache_aware", 0u}, {"cache_aware:cache_threshold=0.2", 1u}}) {
    SCOPED_TRACE(spec);
    auto router = make_test_router(spec, 2);
    FakeCluster cluster(2);
    EXPECT_EQ(router->route(request(a, 0), cluster), 0u);
    EXPECT_EQ(router->route(request(b, 1), cluster), 1u);
    // x matches one of four blocks on worker 1 (0.25); worker 0's tree is the smaller.
    EXPECT_EQ(router->route(request(x, 2), cluster), want);
  }
}

TEST(DynamoRouter, PicksTheCachedPrefixWhenLoadsAreEqual) {
  auto router = make_test_router("dynamo", 3);
  FakeCluster cluster(3);
  auto p = prompt({1, 2, 3, 4});
  cluster.cache(1, p);
  EXPECT_EQ(router->route(request(p, 0), cluster), 1u);
  // Half of it on worker 2 and the whole on 1: still 1.
  cluster.cache(2, prompt({1, 2}));
  EXPECT_EQ(router->route(request(p, 1), cluster), 1u);
}

TEST(DynamoRouter, PrefersALightlyLoadedWorkerWhenTheCachedPrefixIsSmall) {
  auto router = make_test_router("dynamo", 2);
  FakeCluster cluster(2);
  auto p = prompt({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  cluster.cache(0, prompt({1}));
  cluster.mutable_load(0).active_blocks = 20;
  // Worker 0: 9 uncached + 20 decode = 29; worker 1: 10 + 0.
  EXPECT_EQ(router->route(request(p, 0), cluster), 1u);
  // The whole prompt cached on 0 with 5 decode blocks: 0 + 5 < 10.
  cluster.cache(0, p);
  cluster.mutable_load(0).active_blocks = 5;
  EXPECT_EQ(router->route(request(p, 1), cluster), 0u);
  // Queued prefill counts: 16 x 6 tokens queued on 0 makes it 11 > 10.
  cluster.mutable_load(0).queued_prefill_tokens = 96;
  EXPECT_EQ(router->route(request(p, 2), cluster), 1u);
}

TEST(DynamoRouter, BreaksTiesByTheSmallerCacheThenTheLowerIndex) {
  auto router = make_test_router("dynamo", 3);
  FakeCluster cluster(3);
  auto p = prompt({1, 2});
  EXPECT_EQ(router->route(request(p, 0), cluster), 0u);
  cluster.cache(0, prompt({7}));
  cluster.cache(1, prompt({8}));
  EXPECT_EQ(router->route(request(p, 1), cluster), 2u);
}

TEST(DynamoRouter, ApproxEventsRememberWhatWasRoutedForTheTtl) {
  auto router = make_test_router("dynamo:events=approx,ttl_s=1", 3);
  FakeCluster cluster(3);
  auto p = prompt({1, 2, 3, 4});
  cluster.cache(2, p);  // the exact view, which the approximate mode does not see
  EXPECT_EQ(router->route(request(p, 0), cluster), 0u);
  cluster.mutable_load(0).active_blocks = 3;  // 0 + 3 < 4 + 0: the remembered prefix wins
  cluster.set_now(kMicrosPerSecond);
  EXPECT_EQ(router->route(request(p, 1), cluster), 0u);
  cluster.set_now(2 * kMicrosPerSecond + 1);  // the last touch is over a second old
  EXPECT_EQ(router->route(request(p, 2), cluster), 1u);
}

TEST(LlmDRouter, ScoresAsTheHandComputedCase) {
  FakeCluster cluster(3);
  auto p = prompt({1, 2, 3, 4});
  // Worker 0: half cached, half its KV in use, the longest queue (4).
  cluster.cache(0, prompt({1, 2}));
  cluster.mutable_load(0).active_blocks = 2048;
  cluster.mutable_load(0).waiting = 4;
  // Worker 1: nothing cached, a tenth in use, no queue.
  cluster.mutable_load(1).active_blocks = 4096 / 10;
  // Worker 2: all cached, nine tenths in use, 2 waiting.
  cluster.cache(2, p);
  cluster.mutable_load(2).active_blocks = 4096 * 9 / 10;
  cluster.mutable_load(2).waiting = 2;
  // Scores 2 x .5 + .5 + 0 = 1.5; 0 + .9 + 1 = 1.9; 2 x 1 + .1 + .5 = 2.6.
  EXPECT_EQ(make_test_router("llm_d", 3)->route(request(p, 0), cluster), 2u);
  // Without the prefix scorer: .5, 1.9, .6.
  EXPECT_EQ(make_test_router("llm_d:prefix_weight=0", 3)->route(request(p, 0), cluster), 1u);
  // Prefix alone with weight 0.7 against the rest: 0.35 + .5 = .85; 1.9; .7 + .6 = 1.3.
  EXPECT_EQ(make_test_router("llm_d:prefix_weight=0.7", 3)->route(request(p, 0), cluster), 1u);
  // Nobody waiting: the queue scorer gives everyone 1 (not 0 / 0): 1.85, 1.9, 1.8.
  for (WorkerId w = 0; w < 3; ++w) cluster.mutable_load(w).waiting = 0;
  EXPECT_EQ(make_test_router("llm_d:prefix_weight=0.7", 3)->route(request(p, 0), cluster), 1u);
}

}  // namespace
}  // namespace kvpolicy
