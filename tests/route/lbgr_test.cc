// LBGR: its queue slots decay and are released, and its recursive least squares learns a bias
// planted per worker.
#include <gtest/gtest.h>

#include <cmath>
#include <queue>
#include <tuple>

#include "../../src/route/approx_tree.h"
#include "kvpolicy/route/router.h"
#include "kvpolicy/trace/generators.h"
#include "support/fake_cluster.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::drive;
using testing::FakeCluster;
using testing::prompt;
using testing::random_workload;
using testing::request;
using testing::router_stat;

// LBGR as it was before issue 38 (commit 96c89ff, src/route/lbgr.cc), frozen as the reference
// the paper variant must reproduce decision for decision.
class PaperLbgr final : public Router {
 public:
  PaperLbgr(const RouterContext& ctx, const Params& p)
      : seconds_per_token_(p.get_double("token_cost_ms") < 0 ? ctx.prefill_seconds_per_token
                                                             : p.get_double("token_cost_ms") / 1e3),
        decay_(p.get_double("decay")),
        interval_(std::max<Time>(1, static_cast<Time>(p.get_double("decay_interval_ms") * 1e3))),
        forgetting_(p.get_double("forgetting")),
        tree_(ctx.workers, ctx.block_tokens, static_cast<uint64_t>(p.get_int("max_tree_tokens"))),
        workers_(ctx.workers) {
    for (Worker& w : workers_) w.p = p.get_double("p0");
  }

  WorkerId route(const RequestView& r, const ClusterView& cluster) override {
    const int64_t tick = cluster.now() / interval_;
    tree_.match(r.blocks, cluster.now(), matched_);
    WorkerId best = 0;
    double best_latency = 0, best_service = 0;
    for (WorkerId w = 0; w < cluster.workers(); ++w) {
      decay_to(w, tick);
      double latency =
          service(r, matched_[w], cluster.block_tokens()) + workers_[w].queue + workers_[w].bias;
      if (w == 0 || latency < best_latency) {
        best = w;
        best_latency = latency;
        best_service = service(r, matched_[w], cluster.block_tokens());
      }
    }
    // The estimate the bias corrects: service and queue, without the bias itself.
    last_estimate_ = best_service + workers_[best].queue;
    // Open records by request index: a vector, not a hash map (one allocation per request was
    // a visible share of serve mode's time, docs/results/bench.md).
    if (r.index >= records_.size())
      records_.resize(std::max<size_t>(r.index + 1, records_.size() * 2));
    if (!records_[r.index].open) ++open_records_;
    records_[r.index] = {best, best_service, tick, last_estimate_, true};
    workers_[best].queue += best_service;
    tree_.insert(best, r.blocks, cluster.now());
    return best;
  }

  void on_complete(const RequestView& r, WorkerId, const Completion& done,
                   const ClusterView& cluster) override {
    if (r.index >= records_.size() || !records_[r.index].open) return;
    const Record rec = records_[r.index];
    records_[r.index].open = false;
    --open_records_;
    Worker& w = workers_[rec.worker];
    const int64_t tick = cluster.now() / interval_;
    decay_to(rec.worker, tick);
    // What is left of this request's share of the slot, decayed as the slot was.
    double left = rec.service * std::pow(decay_, double(std::max<int64_t>(0, tick - rec.tick)));
    w.queue = std::max(0.0, w.queue - left);
    // Scalar RLS with feature 1: the bias tracks latency - estimate, forgetting old errors.
    double residual = double(done.finish - done.arrival) / double(kMicrosPerSecond) - rec.estimate;
    double gain = w.p / (forgetting_ + w.p);
    w.bias += gain * (residual - w.bias);
    w.p = (1.0 - gain) * w.p / forgetting_;
    ++completions_;
  }

  PolicyStats stats() const override {
    PolicyStats out = {{"completions", double(completions_)},
                       {"open_records", double(open_records_)},
                       {"last_estimate_s", last_estimate_}};
    for (WorkerId w = 0; w < workers_.size(); ++w) {
      out.emplace_back("bias_s_w" + std::to_string(w), workers_[w].bias);
      out.emplace_back("queue_s_w" + std::to_string(w), workers_[w].queue);
    }
    return out;
  }

  double in_flight_state() const override {
    double queued = 0;
    for (const Worker& w : workers_) queued += w.queue;
    return queued + double(open_records_);
  }

 private:
  struct Worker {
    double queue = 0;        // seconds of service routed to it, decayed, not yet released
    int64_t tick = 0;        // decay interval the queue was last decayed to
    double bias = 0, p = 0;  // the RLS estimate and its variance
  };
  struct Record {
    WorkerId worker;
    double service;  // its addition to the worker's queue
    int64_t tick;    // when it was added
    double estimate;
    bool open = false;  // routed, not yet completed
  };

  double service(const RequestView& r, uint32_t matched_blocks, uint32_t block_tokens) const {
    uint64_t cached = std::min<uint64_t>(uint64_t{matched_blocks} * block_tokens, r.prompt_tokens);
    return double(r.prompt_tokens - cached) * seconds_per_token_;
  }

  // The slot decays once per interval; applied lazily, from the intervals since the last time.
  void decay_to(WorkerId w, int64_t tick) {
    Worker& x = workers_[w];
    if (tick > x.tick) x.queue *= std::pow(decay_, double(tick - x.tick));
    x.tick = std::max(x.tick, tick);
  }

  double seconds_per_token_, decay_;
  Time interval_;
  double forgetting_;
  ApproxTree tree_;
  std::vector<Worker> workers_;
  std::vector<uint32_t> matched_;
  std::vector<Record> records_;  // by request index
  size_t open_records_ = 0;
  double last_estimate_ = 0;
  uint64_t completions_ = 0;
};

TEST(LbgrRouter, QueueSlotsDecayEveryIntervalAndAreReleasedOnCompletion) {
  auto router = make_router(parse_router_spec("lbgr:token_cost_ms=1,variant=paper"),
                            RouterContext{.workers = 2});
  FakeCluster cluster(2);
  auto a = prompt({1, 2}), b = prompt({3, 4});  // 32 uncached tokens each: 0.032 s of service
  EXPECT_EQ(router->route(request(a, 0), cluster), 0u);
  EXPECT_DOUBLE_EQ(router_stat(*router, "queue_s_w0"), 0.032);
  cluster.set_now(45'000);  // two whole 20 ms intervals later
  // Worker 0 predicts 0.032 + 0.032 x (31/32)^2, worker 1 0.032.
  EXPECT_EQ(router->route(request(b, 1), cluster), 1u);
  EXPECT_DOUBLE_EQ(router_stat(*router, "queue_s_w0"), 0.032 * std::pow(31.0 / 32.0, 2));
  EXPECT_DOUBLE_EQ(router_stat(*router, "last_estimate_s"), 0.032);
  // Request 0 completes after 5 intervals: what is left of its share leaves worker 0's slot.
  cluster.set_now(100'000);
  router->on_complete(request(a, 0), 0, Completion{.arrival = 0, .finish = 100'000}, cluster);
  EXPECT_NEAR(router_stat(*router, "queue_s_w0"), 0.0, 1e-15);
  EXPECT_EQ(router_stat(*router, "open_records"), 1);
  // Its residual, 0.1 s observed - 0.032 s estimated, is worker 0's first bias (P0 = 1e6).
  EXPECT_NEAR(router_stat(*router, "bias_s_w0"), 0.068, 1e-6);
  // A prompt worker 1 was sent costs nothing there: 0 + 0.032 x (31/32)^k < 0.032 + 0.068.
  cluster.set_now(120'000);
  EXPECT_EQ(router->route(request(b, 2), cluster), 1u);
}

TEST(LbgrRouter, RecursiveLeastSquaresRecoversAPlantedBiasPerWorker) {
  const std::vector<double> planted = {0.05, 0.20, 0.01, 0.10};  // seconds
  const uint32_t workers = 4;
  // Service at 1 ms a token makes the queues, not the biases, spread the load: every worker
  // sees enough completions to learn from.
  auto router = make_router(parse_router_spec("lbgr:token_cost_ms=1,variant=paper"),
                            RouterContext{.workers = workers});
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
    double latency =
        router_stat(*router, "last_estimate_s") + planted[w] + 0.01 * (rng.uniform() - 0.5);
    pending.push({now + static_cast<Time>(latency * kMicrosPerSecond), r, w});
  }
  complete_until(kNever);
  for (WorkerId w = 0; w < workers; ++w) {
    SCOPED_TRACE("worker " + std::to_string(w));
    EXPECT_GE(completions[w], 200);
    EXPECT_NEAR(router_stat(*router, "bias_s_w" + std::to_string(w)), planted[w],
                0.03 * planted[w] + 0.001);
  }
  EXPECT_NEAR(router->in_flight_state(), 0.0, 1e-9);
}

TEST(LbgrRouter, PaperVariantMakesTheFrozenReferencesDecisions) {
  for (const std::string params :
       {"", "token_cost_ms=-1", "token_cost_ms=1,decay=0.9", "max_tree_tokens=64,forgetting=0.9"}) {
    SCOPED_TRACE(params);
    for (uint64_t seed : {1, 2, 3}) {
      const uint32_t workers = 3 + uint32_t(seed);
      RouterContext ctx{.workers = workers, .prefill_seconds_per_token = 2e-4};
      RouterSpec spec =
          parse_router_spec("lbgr:variant=paper" + (params.empty() ? "" : "," + params));
      auto paper = make_router(spec, ctx);
      PaperLbgr reference(
          ctx, Params::parse(params, RouterRegistry::instance().get("lbgr").params, "router lbgr"));
      Trace trace = random_workload({.seed = seed, .requests = 2000});
      FakeCluster a(workers), b(workers);
      // Gaps up to 60 ms cross the 20 ms decay intervals; completions come at random.
      EXPECT_EQ(drive(*paper, a, trace, seed, 0, 60'000),
                drive(reference, b, trace, seed, 0, 60'000));
      auto ours = paper->stats(), theirs = reference.stats();
      ours.erase(std::remove_if(ours.begin(), ours.end(),
                                [](auto& kv) { return kv.first == "guard_fired"; }),
                 ours.end());
      EXPECT_EQ(ours, theirs);
    }
  }
}

// Drives `router` on a cluster whose in-flight counts are set by hand: a prompt it has cached
// on worker 0 goes there unless the guard fires.
WorkerId route_cached_prompt(const std::string& spec, std::vector<uint32_t> in_flight,
                             std::vector<uint64_t> queued_tokens, double* fired) {
  const uint32_t workers = static_cast<uint32_t>(in_flight.size());
  auto router = make_router(parse_router_spec(spec), RouterContext{.workers = workers});
  FakeCluster cluster(workers);
  auto a = prompt({1, 2, 3, 4});
  EXPECT_EQ(router->route(request(a, 0), cluster), 0u);
  // It completes exactly as estimated: the slot is released and the bias stays 0.
  cluster.set_now(64'000);
  router->on_complete(request(a, 0), 0, Completion{.arrival = 0, .finish = 64'000}, cluster);
  for (WorkerId w = 0; w < workers; ++w) {
    cluster.mutable_load(w).in_flight = in_flight[w];
    cluster.mutable_load(w).queued_prefill_tokens = queued_tokens[w];
  }
  WorkerId chosen = router->route(request(a, 1), cluster);
  *fired = router_stat(*router, "guard_fired");
  return chosen;
}

TEST(LbgrRouter, LoadGuardFiresAboveTheStatedSpreadAndNotAtIt) {
  double fired = -1;
  const std::string base = "lbgr:token_cost_ms=1,backlog_weight=0,";
  // In-flight spread 3 (5 - 2) at a bound of 3: LBGR's own choice, the cached worker 0.
  EXPECT_EQ(route_cached_prompt(base + "guard_inflight=3", {5, 2, 3}, {0, 0, 0}, &fired), 0u);
  EXPECT_EQ(fired, 0);
  // Spread 4: the fewest in flight, worker 1.
  EXPECT_EQ(route_cached_prompt(base + "guard_inflight=3", {6, 2, 3}, {0, 0, 0}, &fired), 1u);
  EXPECT_EQ(fired, 1);
  // Ties of the fewest go to the lower index.
  EXPECT_EQ(route_cached_prompt(base + "guard_inflight=3", {6, 2, 2}, {0, 0, 0}, &fired), 1u);
  // The token guard: spread 1000 at a bound of 1000 holds, 1001 fires to the fewest tokens.
  EXPECT_EQ(
      route_cached_prompt(base + "guard_prefill_tokens=1000", {1, 1, 1}, {1000, 500, 0}, &fired),
      0u);
  EXPECT_EQ(fired, 0);
  EXPECT_EQ(
      route_cached_prompt(base + "guard_prefill_tokens=1000", {1, 1, 1}, {1001, 500, 0}, &fired),
      2u);
  EXPECT_EQ(fired, 1);
  // Off (0), and under variant=paper, nothing fires whatever the spread.
  EXPECT_EQ(route_cached_prompt(base + "guard_inflight=0", {60, 0, 0}, {0, 0, 0}, &fired), 0u);
  EXPECT_EQ(
      route_cached_prompt(base + "variant=paper,guard_inflight=1", {60, 0, 0}, {0, 0, 0}, &fired),
      0u);
  EXPECT_EQ(fired, 0);
}

// backlog_weight: the queue term is max(slot, weight x queued prefill tokens x token cost). The
// cached prompt saves 0.064 s on worker 0, so a backlog worth more than that sends it away.
TEST(LbgrRouter, ReportedBacklogOutweighsACachedPrefixOnlyAboveItsSaving) {
  double fired = -1;
  const std::string base = "lbgr:token_cost_ms=1,backlog_of=cluster,service_load=0,";
  EXPECT_EQ(route_cached_prompt(base + "backlog_weight=1", {1, 1, 1}, {64, 0, 0}, &fired), 0u);
  EXPECT_EQ(route_cached_prompt(base + "backlog_weight=1", {1, 1, 1}, {65, 0, 0}, &fired), 1u);
  EXPECT_EQ(route_cached_prompt(base + "backlog_weight=0.5", {1, 1, 1}, {128, 0, 0}, &fired), 0u);
  EXPECT_EQ(route_cached_prompt(base + "backlog_weight=0.5", {1, 1, 1}, {129, 0, 0}, &fired), 1u);
  EXPECT_EQ(fired, 0);  // not the load guard
  EXPECT_EQ(route_cached_prompt(base + "backlog_weight=0", {1, 1, 1}, {1 << 20, 0, 0}, &fired), 0u);
  EXPECT_EQ(route_cached_prompt(base + "variant=paper,backlog_weight=1", {1, 1, 1}, {1 << 20, 0, 0},
                                &fired),
            0u);
}

// service_load prices a prefill at its marginal cost, service x (1 + service_load x requests
// in flight there): the cached prompt's 0.064 s on worker 1 becomes 0.096 s with one request in
// flight there (under worker 0's backlog of 0.100 s: it moves) and 0.128 s with two (it stays).
// The cached worker's service is 0 however loaded it is.
TEST(LbgrRouter, ServiceLoadPricesAPrefillByTheRequestsItDelays) {
  double fired = -1;
  const std::string base = "lbgr:token_cost_ms=1,backlog_of=cluster,backlog_weight=1,";
  EXPECT_EQ(route_cached_prompt(base + "service_load=0", {0, 2}, {100, 0}, &fired), 1u);
  EXPECT_EQ(route_cached_prompt(base + "service_load=0.5", {0, 1}, {100, 0}, &fired), 1u);
  EXPECT_EQ(route_cached_prompt(base + "service_load=0.5", {0, 2}, {100, 0}, &fired), 0u);
  EXPECT_EQ(route_cached_prompt(base + "service_load=0.5", {50, 2}, {100, 0}, &fired), 0u);
}

// admission: with worker 0's running sequences at the cap (2), a request there waits for
// (waiting 1 + 1 - free slots 0) = 2 completions, each EWMA(end-to-end) / cap = 0.5 s apart:
// 1 s, in token-cost seconds (token cost = the real prefill cost here, so x 1), times the
// weight. The cached prompt saves 0.064 s on worker 0, so a weight of 0.07 sends it away and
// 0.06 does not; one free slot halves the wait; off (0) or with the cap unknown, it stays.
TEST(LbgrRouter, AdmissionPricesTheWaitForARunningSlot) {
  auto route = [](const std::string& spec, uint32_t cap, uint32_t running, int cost_ms = 1) {
    auto router = make_router(
        parse_router_spec("lbgr:backlog_weight=0,service_load=0,token_cost_ms=" +
                          std::to_string(cost_ms) + "," + spec),
        RouterContext{.workers = 2, .prefill_seconds_per_token = 1e-3, .worker_max_running = cap});
    FakeCluster cluster(2);
    auto a = prompt({1, 2, 3, 4});
    EXPECT_EQ(router->route(request(a, 0), cluster), 0u);
    cluster.set_now(1'000'000);  // end-to-end 1 s, first token at once (the bias cap stays 0)
    router->on_complete(request(a, 0), 0,
                        Completion{.arrival = 0, .first_token = 0, .finish = 1'000'000}, cluster);
    cluster.mutable_load(0).running = running;
    cluster.mutable_load(0).waiting = 1;
    return router->route(request(a, 1), cluster);
  };
  EXPECT_EQ(route("admission=0.06", 2, 2), 0u);
  EXPECT_EQ(route("admission=0.07", 2, 2), 1u);
  EXPECT_EQ(route("admission=0.12", 2, 1), 0u);  // one free slot: 0.5 s x 0.12
  EXPECT_EQ(route("admission=0.14", 2, 1), 1u);
  // At twice the token cost the saving doubles and so does the wait in token-cost seconds.
  EXPECT_EQ(route("admission=0.06", 2, 2, 2), 0u);
  EXPECT_EQ(route("admission=0.07", 2, 2, 2), 1u);
  EXPECT_EQ(route("admission=0", 2, 2), 0u);
  EXPECT_EQ(route("admission=1", 0, 2), 0u);  // the cluster does not say its cap
}

// The larger of the two, not their sum: worker 0's slot (0.032 s) hides its smaller backlog
// (0.020 s), so it beats worker 1's backlog of 0.040 s (a sum, 0.052 s, would not).
TEST(LbgrRouter, BacklogTermIsTheLargerOfSlotAndBacklog) {
  auto router =
      make_router(parse_router_spec("lbgr:token_cost_ms=1,backlog_weight=1,backlog_of=cluster"),
                  RouterContext{.workers = 2});
  FakeCluster cluster(2);
  EXPECT_EQ(router->route(request(prompt({1, 2}), 0), cluster), 0u);  // a tie: slot 0.032 s
  cluster.mutable_load(0).queued_prefill_tokens = 20;
  cluster.mutable_load(1).queued_prefill_tokens = 40;
  EXPECT_EQ(router->route(request(prompt({3, 4}), 1), cluster), 0u);
}

// backlog_of=tracked counts what the router sent, uncached, until it completes, not what the
// worker reports: a cached prompt stays on worker 0 whatever backlog worker 0 reports, where
// the reported backlog (cluster) sends it away.
TEST(LbgrRouter, TrackedBacklogIgnoresTheReportedOne) {
  for (const auto& [of, expected] :
       std::vector<std::pair<std::string, WorkerId>>{{"tracked", 0u}, {"cluster", 1u}}) {
    SCOPED_TRACE(of);
    double fired = -1;
    EXPECT_EQ(route_cached_prompt("lbgr:token_cost_ms=1,backlog_weight=1,backlog_of=" + of, {1, 1},
                                  {10'000, 0}, &fired),
              expected);
  }
}

// backlog_of=uncached: the reported backlog less what the router's tree matched for the newest
// `waiting` requests it routed there. Request 1 (A again, all 64 tokens matched on worker 0)
// waits there; of the 100 tokens worker 0 reports, 36 are left, under A's 64-token saving.
TEST(LbgrRouter, UncachedBacklogDiscountsWhatTheWaitingRequestsHaveCached) {
  for (const auto& [of, waiting, expected] :
       std::vector<std::tuple<std::string, uint32_t, WorkerId>>{
           {"uncached", 1, 0u}, {"uncached", 0, 1u}, {"cluster", 1, 1u}}) {
    SCOPED_TRACE(of + " waiting " + std::to_string(waiting));
    auto router =
        make_router(parse_router_spec("lbgr:token_cost_ms=1,backlog_weight=1,backlog_of=" + of),
                    RouterContext{.workers = 2});
    FakeCluster cluster(2);
    auto a = prompt({1, 2, 3, 4});
    EXPECT_EQ(router->route(request(a, 0), cluster), 0u);
    cluster.set_now(64'000);  // completes as estimated: slot released, bias 0
    router->on_complete(request(a, 0), 0, Completion{.arrival = 0, .finish = 64'000}, cluster);
    EXPECT_EQ(router->route(request(a, 1), cluster), 0u);  // cached there: no service
    cluster.mutable_load(0).waiting = waiting;
    cluster.mutable_load(0).queued_prefill_tokens = 100;
    EXPECT_EQ(router->route(request(a, 2), cluster), expected);
  }
}

// max_tree_tokens=-1 (the default) sizes the tree by the worker's KV memory: with room for one
// 64-token prompt, routing a second one to worker 0 evicts the first from its tree. Then the
// first again: robust sees it uncached on worker 0 behind b's slot (0.064 + 0.064 s) and takes
// worker 1 (0.064 s); the paper variant keeps SGLang's 2^24 tokens, sees it cached, and ties
// (0 + 0.064 against 0.064): worker 0.
TEST(LbgrRouter, TreeSizedByTheWorkersMemory) {
  for (const auto& [variant, expected] :
       std::vector<std::pair<std::string, WorkerId>>{{"robust", 1u}, {"paper", 0u}}) {
    SCOPED_TRACE(variant);
    auto router =
        make_router(parse_router_spec("lbgr:token_cost_ms=1,backlog_weight=0,variant=" + variant),
                    RouterContext{.workers = 2, .worker_kv_tokens = 64});
    FakeCluster cluster(2);
    auto a = prompt({1, 2, 3, 4}), b = prompt({5, 6, 7, 8});
    EXPECT_EQ(router->route(request(a, 0), cluster), 0u);
    cluster.set_now(64'000);
    router->on_complete(request(a, 0), 0, Completion{.arrival = 0, .finish = 64'000}, cluster);
    EXPECT_EQ(router->route(request(b, 1), cluster), 0u);  // a tie: worker 0
    EXPECT_EQ(router->route(request(a, 2), cluster), expected);
  }
}

TEST(LbgrRouter, BiasShrinkAndCapActOnDeviationsFromTheMean) {
  auto router = make_router(
      parse_router_spec("lbgr:token_cost_ms=1,bias_shrink=0.5,bias_cap_s=0.01,bias_cap_ttft=-1"),
      RouterContext{.workers = 2});
  FakeCluster cluster(2);
  auto a = prompt({1, 2}), b = prompt({3, 4});
  EXPECT_EQ(router->route(request(a, 0), cluster), 0u);
  cluster.set_now(100'000);  // 0.1 s observed - 0.032 s estimated: worker 0 learns 0.068 s
  router->on_complete(request(a, 0), 0, Completion{.arrival = 0, .finish = 100'000}, cluster);
  std::vector<std::pair<std::string, double>> state;
  router->worker_state(0, state);
  router->worker_state(1, state);
  ASSERT_EQ(state.size(), 6u);
  EXPECT_NEAR(state[1].second, 0.068, 1e-6);  // learned
  // Mean 0.034; deviation 0.034 shrunk to 0.017, capped at 0.01.
  EXPECT_NEAR(state[2].second, 0.044, 1e-6);
  EXPECT_NEAR(state[5].second, 0.024, 1e-6);
  // A fresh prompt: 0.032 + 0.044 on worker 0 against 0.032 + 0.024 on worker 1.
  EXPECT_EQ(router->route(request(b, 1), cluster), 1u);
}

// queue_tau_of picks the latency whose EWMA sets the slot's time constant: with queue_tau 0.5
// and one completion (TTFT 10 ms, end to end 1 s), two 20 ms intervals multiply a slot by
// exp(-0.04 / (0.5 x 0.01)) on ttft and by exp(-0.04 / (0.5 x 1)) on e2e.
TEST(LbgrRouter, QueueTauFollowsTheChosenLatency) {
  for (const std::string of : {"ttft", "e2e"}) {
    SCOPED_TRACE(of);
    auto router = make_router(
        parse_router_spec("lbgr:token_cost_ms=1,queue_tau=0.5,bias_shrink=0,queue_tau_of=" + of),
        RouterContext{.workers = 2});
    FakeCluster cluster(2);
    auto a = prompt({1, 2}), b = prompt({3, 4});  // 0.032 s of service each
    EXPECT_EQ(router->route(request(a, 0), cluster), 0u);
    cluster.set_now(1'000'000);
    router->on_complete(request(a, 0), 0,
                        Completion{.arrival = 0, .first_token = 10'000, .finish = 1'000'000},
                        cluster);
    EXPECT_EQ(router->route(request(b, 1), cluster), 0u);  // a tie (no bias routed): worker 0
    EXPECT_DOUBLE_EQ(router_stat(*router, "queue_s_w0"), 0.032);
    cluster.set_now(1'045'000);  // two interval boundaries later; b is cached on worker 0
    EXPECT_EQ(router->route(request(b, 2), cluster), 0u);
    const double clock = of == "ttft" ? 0.01 : 1.0;
    EXPECT_NEAR(router_stat(*router, "queue_s_w0"), 0.032 * std::exp(-0.04 / (0.5 * clock)), 1e-12);
  }
}

// queue_tau_of=min: the time constant is min(queue_tau x EWMA(e2e), queue_tau_ttft x
// EWMA(TTFT)); after one completion (TTFT 10 ms, end to end 1 s) with queue_tau 0.5 that is
// min(0.5, 1.25 x 0.01) = 0.0125 s (TTFT shorter), or 0.5 s when queue_tau_ttft is 100.
TEST(LbgrRouter, MinClockIsTheShorterOfTheScaledLatencies) {
  for (const auto& [ttft_mult, tau] :
       std::vector<std::pair<std::string, double>>{{"1.25", 0.0125}, {"100", 0.5}}) {
    SCOPED_TRACE(ttft_mult);
    auto router = make_router(parse_router_spec("lbgr:token_cost_ms=1,queue_tau=0.5,bias_shrink="
                                                "0,queue_tau_of=min,queue_tau_ttft=" +
                                                ttft_mult),
                              RouterContext{.workers = 2});
    FakeCluster cluster(2);
    auto a = prompt({1, 2}), b = prompt({3, 4});
    EXPECT_EQ(router->route(request(a, 0), cluster), 0u);
    cluster.set_now(1'000'000);
    router->on_complete(request(a, 0), 0,
                        Completion{.arrival = 0, .first_token = 10'000, .finish = 1'000'000},
                        cluster);
    EXPECT_NEAR(router_stat(*router, "queue_tau_s"), tau, 1e-12);
    EXPECT_EQ(router->route(request(b, 1), cluster), 0u);
    EXPECT_DOUBLE_EQ(router_stat(*router, "queue_s_w0"), 0.032);
    cluster.set_now(1'045'000);  // two interval boundaries later
    EXPECT_EQ(router->route(request(b, 2), cluster), 0u);
    EXPECT_NEAR(router_stat(*router, "queue_s_w0"), 0.032 * std::exp(-0.04 / tau), 1e-12);
  }
}

// bias_cap_ttft caps a worker's routed bias deviation at a multiple of the EWMA of TTFT; not
// before the first completion, and variant=paper ignores it.
TEST(LbgrRouter, BiasCapInTtftUnits) {
  for (const auto& [spec, dev] : std::vector<std::pair<std::string, double>>{
           {"bias_cap_ttft=2", 0.02}, {"bias_cap_ttft=-1", 0.034}, {"bias_cap_ttft=10", 0.034}}) {
    SCOPED_TRACE(spec);
    auto router = make_router(parse_router_spec("lbgr:token_cost_ms=1,bias_shrink=1," + spec),
                              RouterContext{.workers = 2});
    FakeCluster cluster(2);
    EXPECT_EQ(router->route(request(prompt({1, 2}), 0), cluster), 0u);
    cluster.set_now(100'000);  // learns 0.1 - 0.032 = 0.068 s; the mean is 0.034 s; TTFT 10 ms
    router->on_complete(request(prompt({1, 2}), 0), 0,
                        Completion{.arrival = 0, .first_token = 10'000, .finish = 100'000},
                        cluster);
    std::vector<std::pair<std::string, double>> state;
    router->worker_state(0, state);
    router->worker_state(1, state);
    ASSERT_EQ(state.size(), 6u);
    EXPECT_NEAR(state[2].second, 0.034 + dev, 1e-6);
    EXPECT_NEAR(state[5].second, 0.034 - dev, 1e-6);
  }
}

// residual_floor_ms: a request done sooner than estimated teaches the bias the floor, not the
// negative residual (the authors' code floors at 1 ms); variant=paper ignores it.
TEST(LbgrRouter, ResidualFloorBoundsWhatTheBiasLearns) {
  for (const auto& [spec, bias] :
       std::vector<std::pair<std::string, double>>{{"residual_floor_ms=1", 0.001},
                                                   {"residual_floor_ms=-1", -0.022},
                                                   {"variant=paper,residual_floor_ms=1", -0.022}}) {
    SCOPED_TRACE(spec);
    auto router =
        make_router(parse_router_spec("lbgr:token_cost_ms=1," + spec), RouterContext{.workers = 2});
    FakeCluster cluster(2);
    EXPECT_EQ(router->route(request(prompt({1, 2}), 0), cluster), 0u);  // estimate 0.032 s
    cluster.set_now(10'000);
    router->on_complete(request(prompt({1, 2}), 0), 0,
                        Completion{.arrival = 0, .first_token = 5'000, .finish = 10'000}, cluster);
    EXPECT_NEAR(router_stat(*router, "bias_s_w0"), bias, 1e-6);
  }
}

// bias_learns=ttft: the residual is the time to first token in the estimate's token-cost
// seconds, not the end-to-end latency. Token cost 1 ms against a real prefill cost of 0.25 ms
// per token (x 4): first token at 0.02 s is 0.08 token-cost seconds, 0.048 above the estimate
// of 0.032 s; end-to-end (0.5 s) teaches 0.468; variant=paper learns on end-to-end as published.
TEST(LbgrRouter, BiasLearnsOnTheChosenLatency) {
  for (const auto& [spec, bias] :
       std::vector<std::pair<std::string, double>>{{"bias_learns=ttft", 0.048},
                                                   {"bias_learns=e2e", 0.468},
                                                   {"variant=paper,bias_learns=ttft", 0.468}}) {
    SCOPED_TRACE(spec);
    auto router = make_router(parse_router_spec("lbgr:token_cost_ms=1," + spec),
                              RouterContext{.workers = 2, .prefill_seconds_per_token = 0.25e-3});
    FakeCluster cluster(2);
    EXPECT_EQ(router->route(request(prompt({1, 2}), 0), cluster), 0u);  // estimate 0.032 s
    cluster.set_now(500'000);
    router->on_complete(request(prompt({1, 2}), 0), 0,
                        Completion{.arrival = 0, .first_token = 20'000, .finish = 500'000},
                        cluster);
    EXPECT_NEAR(router_stat(*router, "bias_s_w0"), bias, 1e-6);
  }
}

}  // namespace
}  // namespace kvpolicy
