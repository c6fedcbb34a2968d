// The prefill-work model (docs/routers.md, offline_bound) by brute force: on small cases every
// assignment the cap allows is enumerated; the lower bound never exceeds the best, equals it with
// unlimited caches and no cap, and no online router's assignment costs less; regret is >= 0, 0 for
// the best assignment; gap closed is 0 for the baseline, 1 for the bound, NaN without a gap.
#include "kvpolicy/route/prefill_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kvpolicy/core/error.h"
#include "kvpolicy/serve/serve.h"
#include "support/fake_cluster.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::drive;
using testing::FakeCluster;
using testing::prompt;
using testing::random_workload;

// The trace's requests as serve mode's offline router gets them (answers appended).
ServeFuture future_of(const Trace& trace) {
  ServeOptions o;
  o.capacity_blocks = 1000;
  return serve_future(trace, o);
}

// A small case: prefix-sharing prompts and conversations (random_workload), n requests.
Trace small_case(uint64_t seed, uint32_t n) {
  return random_workload({.seed = seed,
                          .requests = n,
                          .system_prompts = 2,
                          .max_system_blocks = 3,
                          .sessions = 2,
                          .max_new_blocks = 2,
                          .max_session_blocks = 8});
}

// Calls f(assignment) for every assignment of n requests to `workers` the cap allows.
template <typename F>
void for_each_assignment(size_t n, uint32_t workers, const LoadCap& cap, F f) {
  std::vector<WorkerId> a(n, 0);
  while (true) {
    if (cap.allows(a, workers)) f(a);
    size_t k = 0;
    while (k < n && ++a[k] == workers) a[k++] = 0;
    if (k == n) return;
  }
}

uint64_t brute_force_best(const std::vector<FutureRequest>& reqs, uint32_t workers,
                          uint64_t capacity, const LoadCap& cap) {
  uint64_t best = UINT64_MAX;
  for_each_assignment(reqs.size(), workers, cap, [&](const std::vector<WorkerId>& a) {
    best = std::min(best, model_cost(reqs, a, workers, capacity));
  });
  return best;
}

TEST(ModelCache, HitsAPrefixAndEvictsLeavesFirst) {
  ModelCache c(3);
  auto ab = prompt({1, 2}), abc = prompt({1, 2, 3}), abd = prompt({1, 2, 4});
  c.serve(abc);
  EXPECT_EQ(c.prefix_hit(abd), 2u);
  EXPECT_EQ(c.prefix_hit(abc), 3u);
  c.serve(abd);  // 4 blocks for 3 slots: the old leaf (3) goes, not the shared root
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(c.prefix_hit(abc), 2u);
  EXPECT_EQ(c.prefix_hit(abd), 3u);
  EXPECT_EQ(c.prefix_hit(ab), 2u);
}

TEST(PrefillModel, LowerBoundByHand) {
  // Four prompts share blocks 1, 2; each has its own third block. With two per worker per
  // window of four, blocks 1 and 2 are computed on two workers at least: 2 x 2 + 4 = 8.
  std::vector<std::vector<BlockKey>> p = {prompt({1, 2, 3}), prompt({1, 2, 4}), prompt({1, 2, 5}),
                                          prompt({1, 2, 6})};
  std::vector<FutureRequest> reqs;
  for (uint32_t r = 0; r < 4; ++r) reqs.push_back({testing::request(p[r], r), p[r]});
  EXPECT_EQ(prefill_lower_bound(reqs, 2, LoadCap{}), 6u);
  EXPECT_EQ(prefill_lower_bound(reqs, 2, LoadCap{4, 2}), 8u);
  EXPECT_EQ(prefill_lower_bound(reqs, 4, LoadCap{4, 1}), 12u);
  EXPECT_EQ(brute_force_best(reqs, 2, 0, LoadCap{4, 2}), 8u);
  EXPECT_THROW(prefill_lower_bound(reqs, 2, LoadCap{4, 1}), ConfigError);  // cannot place 4
}

// The claim of docs/routers.md: prefill_lower_bound <= the model's best over every assignment the
// cap allows, for any cache capacity; equal with unlimited caches and no cap.
TEST(PrefillModel, LowerBoundNeverExceedsTheBruteForceBest) {
  int cases = 0, tight = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    for (uint32_t workers : {2u, 3u}) {
      uint32_t n = workers == 2 ? 8 : 6;
      Trace trace = small_case(seed, n);
      ServeFuture f = future_of(trace);
      ASSERT_EQ(f.requests.size(), n);
      for (uint64_t capacity : {0u, 3u, 6u}) {
        for (LoadCap cap : {LoadCap{}, LoadCap{4, 2}, LoadCap{n, (n + workers - 1) / workers}}) {
          SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(workers) +
                       " workers, capacity " + std::to_string(capacity) + ", cap " +
                       std::to_string(cap.window) + "/" + std::to_string(cap.per_worker));
          uint64_t best = brute_force_best(f.requests, workers, capacity, cap);
          uint64_t bound = prefill_lower_bound(f.requests, workers, cap);
          EXPECT_LE(bound, best);
          if (capacity == 0 && cap.window == 0) EXPECT_EQ(bound, best);
          ++cases, tight += bound == best;
        }
      }
    }
  }
  EXPECT_EQ(cases, 8 * 2 * 3 * 3);
  EXPECT_GT(tight, 0);
}

// No online router beats the bound: each one's decisions on a fake cluster, priced in the model,
// cost at least the brute-force best and so at least the lower bound (no cap: online routers
// keep none). The offline router plays its plan, which keeps its cap.
TEST(PrefillModel, NoRouterBeatsTheBound) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Trace trace = small_case(seed, 8);
    ServeFuture f = future_of(trace);
    for (uint64_t capacity : {0u, 4u}) {
      uint64_t best = brute_force_best(f.requests, 2, capacity, LoadCap{});
      uint64_t bound = prefill_lower_bound(f.requests, 2, LoadCap{});
      ASSERT_LE(bound, best);
      for (const RouterInfo& info : RouterRegistry::instance().all()) {
        SCOPED_TRACE(info.name + ", seed " + std::to_string(seed) + ", capacity " +
                     std::to_string(capacity));
        RouterContext ctx{.workers = 2, .block_tokens = trace.block_tokens, .seed = seed};
        if (info.needs_future) ctx.future = &f.requests;
        std::string params = info.needs_future ? "window=4,slack=1" : "";
        if (info.needs_future && capacity) params += ",capacity=" + std::to_string(capacity);
        auto router = make_router({info.name, params}, ctx);
        FakeCluster cluster(2, trace.block_tokens);
        std::vector<WorkerId> chosen = drive(*router, cluster, trace, seed);
        uint64_t cost = model_cost(f.requests, chosen, 2, capacity);
        EXPECT_GE(cost, best);
        EXPECT_GE(cost, bound);
        if (info.needs_future) {
          LoadCap cap{4, 2};
          EXPECT_TRUE(cap.allows(chosen, 2));
          EXPECT_GE(cost, brute_force_best(f.requests, 2, capacity, cap));
          EXPECT_GE(cost, prefill_lower_bound(f.requests, 2, cap));
        }
      }
    }
  }
}

TEST(PrefillModel, OfflineRouterPlaysItsPlanAndNeedsTheFuture) {
  Trace trace = random_workload({.seed = 4, .requests = 200});
  ServeFuture f = future_of(trace);
  RouterContext ctx{.workers = 3, .block_tokens = trace.block_tokens};
  EXPECT_THROW(make_router({"offline_bound", ""}, ctx), ConfigError);  // no future given
  ctx.future = &f.requests;
  auto router = make_router({"offline_bound", "window=30,slack=1.2,capacity=50"}, ctx);
  FakeCluster cluster(3, trace.block_tokens);
  std::vector<WorkerId> chosen = drive(*router, cluster, trace, 1);
  OfflinePlanOptions o{.workers = 3,
                       .capacity_blocks = 50,
                       .block_tokens = trace.block_tokens,
                       .prefill_seconds_per_token = ctx.prefill_seconds_per_token,
                       .cap = {30, 12}};
  EXPECT_EQ(chosen, offline_plan(f.requests, o));
  EXPECT_TRUE(o.cap.allows(chosen, 3));
  EXPECT_FALSE((LoadCap{30, 10}).allows(std::vector<WorkerId>(30, 0), 3));
}

TEST(PrefillModel, RegretByHand) {
  // Request 0 (blocks 1, 2) on worker 0; request 1 (1, 2, 3) sent to worker 1 computes 3 blocks
  // where worker 0 would compute 1: regret 2. Request 0's choice costs the same anywhere.
  auto p0 = prompt({1, 2}), p1 = prompt({1, 2, 3});
  std::vector<FutureRequest> reqs = {{testing::request(p0, 0), p0}, {testing::request(p1, 1), p1}};
  std::vector<size_t> both = {0, 1};
  EXPECT_EQ(model_regret(reqs, std::vector<WorkerId>{0, 1}, 2, 0, both, 1),
            (std::vector<double>{0, 2}));
  // Over a window of two, request 0's choice matters: moving it to worker 1 saves 2.
  EXPECT_EQ(model_regret(reqs, std::vector<WorkerId>{0, 1}, 2, 0, both, 2),
            (std::vector<double>{2, 2}));
  EXPECT_EQ(model_regret(reqs, std::vector<WorkerId>{1, 1}, 2, 0, both, 0),
            (std::vector<double>{0, 0}));
}

// Regret is >= 0 for any assignment, and 0 at every decision for the brute-force best (window to
// the end: moving one request is another assignment, never cheaper) and for the greedy choice of
// fewest prefill blocks (window of one: the decision's own cost).
TEST(PrefillModel, RegretIsZeroForTheBestChoiceAndNeverNegative) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    Trace trace = small_case(seed, 6);
    ServeFuture f = future_of(trace);
    const auto& reqs = f.requests;
    std::vector<size_t> all = sampled_decisions(reqs.size(), 100);
    ASSERT_EQ(all.size(), reqs.size());
    for (uint64_t capacity : {0u, 3u}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", capacity " + std::to_string(capacity));
      uint64_t best = UINT64_MAX;
      std::vector<WorkerId> best_a;
      size_t k = 0;
      for_each_assignment(reqs.size(), 3, LoadCap{}, [&](const std::vector<WorkerId>& a) {
        uint64_t c = model_cost(reqs, a, 3, capacity);
        if (c < best) best = c, best_a = a;
        if (k++ % 4 == 0)  // a quarter of them, to keep the test short
          for (double x : model_regret(reqs, a, 3, capacity, all, 3)) ASSERT_GE(x, 0);
      });
      for (double x : model_regret(reqs, best_a, 3, capacity, all, 0)) EXPECT_EQ(x, 0);
      std::vector<WorkerId> greedy;
      std::vector<ModelCache> caches(3, ModelCache(capacity));
      for (const FutureRequest& r : reqs) {
        WorkerId w = 0;
        for (WorkerId x = 1; x < 3; ++x)
          if (caches[x].prefix_hit(r.request.blocks) > caches[w].prefix_hit(r.request.blocks))
            w = x;
        caches[w].serve(r.sequence);
        greedy.push_back(w);
      }
      for (double x : model_regret(reqs, greedy, 3, capacity, all, 1)) EXPECT_EQ(x, 0);
    }
  }
}

TEST(PrefillModel, SampledDecisionsSpreadEvenly) {
  EXPECT_EQ(sampled_decisions(10, 4), (std::vector<size_t>{0, 2, 5, 7}));
  EXPECT_EQ(sampled_decisions(3, 5), (std::vector<size_t>{0, 1, 2}));
  EXPECT_TRUE(sampled_decisions(10, 0).empty());
}

TEST(GapClosed, ZeroForTheBaselineOneForTheBoundNanWithoutAGap) {
  EXPECT_DOUBLE_EQ(gap_closed(100, 100, 40), 0);  // TTFT: round_robin itself
  EXPECT_DOUBLE_EQ(gap_closed(40, 100, 40), 1);   // the bound itself
  EXPECT_DOUBLE_EQ(gap_closed(70, 100, 40), 0.5);
  EXPECT_DOUBLE_EQ(gap_closed(0.6, 0.2, 0.7), 0.8);   // hit rate: higher is better, same formula
  EXPECT_DOUBLE_EQ(gap_closed(130, 100, 40), -0.5);   // worse than round_robin: negative
  EXPECT_TRUE(std::isnan(gap_closed(50, 100, 100)));  // bound = baseline: nothing to close
  EXPECT_TRUE(std::isnan(gap_closed(100, 100, 100)));
}

}  // namespace
}  // namespace kvpolicy
