// Serve mode's per-worker trace (docs/serve.md, "Per-worker trace"): its busy shares integrate to
// each worker's busy time of the result, every interval has one complete row per worker, the
// router's state comes with it, and a bad interval is refused.
#include <gtest/gtest.h>

#include <cmath>

#include "kvpolicy/core/error.h"
#include "kvpolicy/serve/serve.h"
#include "support/linear_model.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::linear_model;

ServeOptions options(const std::string& router, uint32_t workers, const CostModel& cost) {
  ServeOptions o;
  o.workers = workers;
  o.router = parse_router_spec(router);
  o.capacity_blocks = 256;
  o.rate = 40;
  o.cost_model = &cost;
  return o;
}

void expect_complete(const WorkerTrace& t, const ServeResult& r, uint32_t workers) {
  ASSERT_FALSE(t.samples.empty());
  ASSERT_EQ(t.samples.size() % workers, 0u);
  const size_t intervals = t.samples.size() / workers;
  // Whole intervals up to the last completion, then one shorter one ending there.
  EXPECT_EQ(intervals, size_t(std::ceil(r.makespan_s / t.interval_s - 1e-9)));
  std::vector<double> busy(workers, 0.0);
  for (size_t i = 0; i < intervals; ++i)
    for (uint32_t w = 0; w < workers; ++w) {
      const WorkerSample& x = t.samples[i * workers + w];
      SCOPED_TRACE("interval " + std::to_string(i) + ", worker " + std::to_string(w));
      EXPECT_EQ(x.worker, w);
      EXPECT_GE(x.busy_share, -1e-9);
      EXPECT_LE(x.busy_share, 1 + 1e-9);
      if (i + 1 < intervals) {
        EXPECT_DOUBLE_EQ(x.interval_s, t.interval_s);
        EXPECT_NEAR(x.time_s, double(i + 1) * t.interval_s, 1e-9);
      } else {
        EXPECT_LE(x.interval_s, t.interval_s + 1e-9);
        EXPECT_NEAR(x.time_s, r.makespan_s, 1e-9);
      }
      EXPECT_EQ(x.router_state.size(), t.samples.front().router_state.size());
      busy[w] += x.busy_share * x.interval_s;
    }
  // The busy shares integrate to the result's per-worker busy time (its utilisation x makespan).
  for (uint32_t w = 0; w < workers; ++w)
    EXPECT_NEAR(busy[w], r.per_worker[w].busy_seconds, 1e-6 * r.per_worker[w].busy_seconds + 1e-9)
        << "worker " << w;
}

TEST(ServeWorkerTrace, BusySharesIntegrateToEachWorkersUtilisation) {
  CostModel cost = linear_model(0.5, 5);
  Trace trace = testing::random_workload({.seed = 5, .requests = 300});
  for (bool stepped : {false, true})
    for (double interval : {0.05, 0.37}) {
      SCOPED_TRACE(std::string(stepped ? "stepped" : "stretches") + ", interval " +
                   std::to_string(interval));
      ServeOptions o = options("lbgr", 3, cost);
      o.stepped = stepped;
      WorkerTrace t;
      t.interval_s = interval;
      o.worker_trace = &t;
      ServeResult r = serve(trace, o);
      expect_complete(t, r, 3);
      ASSERT_EQ(t.samples.front().router_state.size(), 3u);  // LBGR's queue, bias, bias used
      EXPECT_EQ(t.samples.front().router_state[0].first, "lbgr_queue_s");
      // Some load was seen (not all rows are empty).
      uint64_t requests = 0, tokens = 0;
      for (const WorkerSample& x : t.samples) {
        requests += x.waiting + x.running;
        tokens += x.queued_prefill_tokens;
      }
      EXPECT_GT(requests, 0u);
      EXPECT_GT(tokens, 0u);
      // The trace does not change the run.
      ServeOptions plain = options("lbgr", 3, cost);
      plain.stepped = stepped;
      ServeResult p = serve(trace, plain);
      EXPECT_EQ(p.block_hits, r.block_hits);
      EXPECT_EQ(p.ttft_ms.p99, r.ttft_ms.p99);
      EXPECT_EQ(p.makespan_s, r.makespan_s);
    }
}

TEST(ServeWorkerTrace, RoutersWithoutStateGiveLoadsOnly) {
  CostModel cost = linear_model(0.5, 5);
  Trace trace = testing::random_workload({.seed = 6, .requests = 120});
  ServeOptions o = options("round_robin", 2, cost);
  WorkerTrace t;
  t.interval_s = 0.1;
  o.worker_trace = &t;
  ServeResult r = serve(trace, o);
  expect_complete(t, r, 2);
  EXPECT_TRUE(t.samples.front().router_state.empty());
}

TEST(ServeWorkerTrace, RejectsABadInterval) {
  CostModel cost = linear_model(0.5, 5);
  Trace trace = testing::random_workload({.seed = 6, .requests = 20});
  for (double bad : {0.0, -1.0, std::nan(""), double(INFINITY)}) {
    ServeOptions o = options("lbgr", 2, cost);
    WorkerTrace t;
    t.interval_s = bad;
    o.worker_trace = &t;
    EXPECT_THROW(serve(trace, o), ConfigError) << bad;
  }
}

}  // namespace
}  // namespace kvpolicy
