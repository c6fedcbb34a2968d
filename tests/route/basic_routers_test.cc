// random, round_robin, least_loaded and session_affinity on hand-set loads.
#include <gtest/gtest.h>

#include <cmath>

#include "kvpolicy/route/router.h"
#include "support/fake_cluster.h"

namespace kvpolicy {
namespace {

using testing::FakeCluster;
using testing::make_test_router;
using testing::prompt;
using testing::request;

TEST(RoundRobinRouter, CyclesThroughTheWorkers) {
  auto router = make_test_router("round_robin", 3);
  FakeCluster cluster(3);
  cluster.mutable_load(0).in_flight = 9;  // load does not matter
  auto blocks = prompt({1});
  std::vector<WorkerId> got;
  for (RequestIndex i = 0; i < 7; ++i) got.push_back(router->route(request(blocks, i), cluster));
  EXPECT_EQ(got, (std::vector<WorkerId>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(LeastLoadedRouter, PicksTheFewestInFlightTiesToTheLowerIndex) {
  auto router = make_test_router("least_loaded", 4);
  FakeCluster cluster(4);
  auto blocks = prompt({1});
  for (auto [loads, want] : std::vector<std::pair<std::vector<uint32_t>, WorkerId>>{
           {{3, 1, 1, 2}, 1}, {{3, 5, 2, 0}, 3}, {{0, 0, 0, 0}, 0}, {{4, 4, 4, 3}, 3}}) {
    for (WorkerId w = 0; w < 4; ++w) cluster.mutable_load(w).in_flight = loads[w];
    EXPECT_EQ(router->route(request(blocks, 0), cluster), want);
  }
}

TEST(RandomRouter, SpreadsEvenly) {
  auto router = make_test_router("random", 4, 5);
  FakeCluster cluster(4);
  auto blocks = prompt({1});
  std::vector<int> count(4, 0);
  for (RequestIndex i = 0; i < 4000; ++i) ++count.at(router->route(request(blocks, i), cluster));
  for (int c : count) EXPECT_NEAR(c, 1000, 120);
}

TEST(SessionAffinityRouter, KeepsASessionOnOneWorkerAndSpreadsSessions) {
  auto router = make_test_router("session_affinity", 5);
  FakeCluster cluster(5);
  std::vector<std::vector<BlockKey>> prompts;
  for (uint64_t i = 0; i < 200; ++i) prompts.push_back(prompt({i}));
  std::vector<int> sessions_of(5, 0);
  for (SessionId s = 0; s < 200; ++s) {
    // Loads stay at zero: never over the bound.
    WorkerId first = router->route(request(prompts[s], 0, s), cluster);
    for (RequestIndex turn = 1; turn < 4; ++turn)
      EXPECT_EQ(router->route(request(prompts[(s + turn) % 200], turn, s), cluster), first);
    ++sessions_of[first];
  }
  for (int n : sessions_of) EXPECT_GT(n, 20) << "100 virtual nodes per worker spread 200 sessions";
  // Without a session, the first block decides.
  auto a = prompt({42, 1}), b = prompt({42, 2});
  EXPECT_EQ(router->route(request(a, 0), cluster), router->route(request(b, 1), cluster));
}

TEST(SessionAffinityRouter, PassesAWorkerThatHoldsItsShare) {
  auto router = make_test_router("session_affinity", 4);
  FakeCluster cluster(4);
  auto blocks = prompt({1});
  const SessionId s = 17;
  WorkerId home = router->route(request(blocks, 0, s), cluster);
  // Two in flight at home: the bound is ceil(1.25 x 3 / 4) = 1, so home is full.
  cluster.mutable_load(home).in_flight = 2;
  WorkerId next = router->route(request(blocks, 1, s), cluster);
  EXPECT_NE(next, home);
  // One session's stream stays within ceil(1.25 x average) everywhere.
  cluster.mutable_load(home).in_flight = 0;
  uint64_t total = 0;
  for (RequestIndex i = 0; i < 100; ++i) {
    WorkerId w = router->route(request(blocks, i, s), cluster);
    cluster.arrive(w, request(blocks, i, s));
    ++total;
    auto bound = static_cast<uint32_t>(std::ceil(1.25 * double(total) / 4));
    EXPECT_LE(cluster.load(w).in_flight, bound) << "request " << i;
  }
  // ... and the session's home worker holds the most.
  for (WorkerId w = 0; w < 4; ++w)
    EXPECT_GE(cluster.load(home).in_flight, cluster.load(w).in_flight);
}

}  // namespace
}  // namespace kvpolicy
