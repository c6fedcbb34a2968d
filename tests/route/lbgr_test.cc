// LBGR: its queue slots decay and are released, and its recursive least squares learns a bias
// planted per worker.
#include <gtest/gtest.h>

#include <cmath>
#include <queue>

#include "kvpolicy/route/router.h"
#include "kvpolicy/trace/generators.h"
#include "support/fake_cluster.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::FakeCluster;
using testing::prompt;
using testing::random_workload;
using testing::request;

double stat(const Router& router, const std::string& name) {
  for (auto& [key, value] : router.stats())
    if (key == name) return value;
  ADD_FAILURE() << "no stat " << name;
  return -1;
}

TEST(LbgrRouter, QueueSlotsDecayEveryIntervalAndAreReleasedOnCompletion) {
  auto router = make_router(parse_router_spec("lbgr:token_cost_ms=1"), RouterContext{.workers = 2});
  FakeCluster cluster(2);
  auto a = prompt({1, 2}), b = prompt({3, 4});  // 32 uncached tokens each: 0.032 s of service
  EXPECT_EQ(router->route(request(a, 0), cluster), 0u);
  EXPECT_DOUBLE_EQ(stat(*router, "queue_s_w0"), 0.032);
  cluster.set_now(45'000);  // two whole 20 ms intervals later
  // Worker 0 predicts 0.032 + 0.032 x (31/32)^2, worker 1 0.032.
  EXPECT_EQ(router->route(request(b, 1), cluster), 1u);
  EXPECT_DOUBLE_EQ(stat(*router, "queue_s_w0"), 0.032 * std::pow(31.0 / 32.0, 2));
  EXPECT_DOUBLE_EQ(stat(*router, "last_estimate_s"), 0.032);
  // Request 0 completes after 5 intervals: what is left of its share leaves worker 0's slot.
  cluster.set_now(100'000);
  router->on_complete(request(a, 0), 0, Completion{.arrival = 0, .finish = 100'000}, cluster);
  EXPECT_NEAR(stat(*router, "queue_s_w0"), 0.0, 1e-15);
  EXPECT_EQ(stat(*router, "open_records"), 1);
  // Its residual, 0.1 s observed - 0.032 s estimated, is worker 0's first bias (P0 = 1e6).
  EXPECT_NEAR(stat(*router, "bias_s_w0"), 0.068, 1e-6);
  // A prompt worker 1 was sent costs nothing there: 0 + 0.032 x (31/32)^k < 0.032 + 0.068.
  cluster.set_now(120'000);
  EXPECT_EQ(router->route(request(b, 2), cluster), 1u);
}

TEST(LbgrRouter, RecursiveLeastSquaresRecoversAPlantedBiasPerWorker) {
  const std::vector<double> planted = {0.05, 0.20, 0.01, 0.10};  // seconds
  const uint32_t workers = 4;
  // Service at 1 ms a token makes the queues, not the biases, spread the load: every worker
  // sees enough completions to learn from.
  auto router =
      make_router(parse_router_spec("lbgr:token_cost_ms=1"), RouterContext{.workers = workers});
  FakeCluster cluster(workers);
  Trace trace = random_workload({.seed = 3, .requests = 1500});
  Rng rng(17);
  struct Pending {
    Time finish;
    size_t r;
    WorkerId w;
    bool operator>(const Pending& o) const { return finish > o.finish; }
  };
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending;
  std::vector<int> completions(workers, 0);
  auto complete_until = [&](Time t) {
    while (!pending.empty() && pending.top().finish <= t) {
      Pending p = pending.top();
      pending.pop();
      cluster.set_now(p.finish);
      RequestView view = request_view(trace, p.r);
      view.time = Time(p.r) * 10'000;
      router->on_complete(view, p.w, Completion{.arrival = view.time, .finish = p.finish}, cluster);
      cluster.finish(p.w, view, false);
      ++completions[p.w];
    }
  };
  for (size_t r = 0; r < trace.size(); ++r) {
    Time now = Time(r) * 10'000;  // 100 requests a second
    complete_until(now);
    cluster.set_now(now);
    RequestView view = request_view(trace, r);
    view.time = now;
    WorkerId w = router->route(view, cluster);
    cluster.arrive(w, view);
    // Observed latency: the router's own estimate, the worker's bias, and +-5 ms of noise.
    double latency = stat(*router, "last_estimate_s") + planted[w] + 0.01 * (rng.uniform() - 0.5);
    pending.push({now + static_cast<Time>(latency * kMicrosPerSecond), r, w});
  }
  complete_until(kNever);
  for (WorkerId w = 0; w < workers; ++w) {
    SCOPED_TRACE("worker " + std::to_string(w));
    EXPECT_GE(completions[w], 200);
    EXPECT_NEAR(stat(*router, "bias_s_w" + std::to_string(w)), planted[w],
                0.03 * planted[w] + 0.001);
  }
  EXPECT_NEAR(router->in_flight_state(), 0.0, 1e-9);
}

}  // namespace
}  // namespace kvpolicy
