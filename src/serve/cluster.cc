// serve(): the event loop of the cluster (arrivals, routing, iterations, completions) and the
// metrics of a run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <string>

#include "assignment.h"
#include "disagg.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/percentile.h"
#include "kvpolicy/serve/serve.h"
#include "options.h"
#include "tiers.h"
#include "worker.h"
#include "worker_trace.h"
#include "workload.h"

namespace kvpolicy {
namespace {

using serve_detail::RequestState;
using serve_detail::Worker;
using serve_detail::Workload;

LatencyStats summarize(std::vector<double>& seconds) {
  LatencyStats s;
  if (seconds.empty()) return s;
  std::sort(seconds.begin(), seconds.end());
  double sum = 0;
  for (double x : seconds) sum += x;
  s.mean = sum / double(seconds.size()) * 1e3;
  s.p50 = percentile_nearest_rank(seconds, 50) * 1e3;
  s.p90 = percentile_nearest_rank(seconds, 90) * 1e3;
  s.p95 = percentile_nearest_rank(seconds, 95) * 1e3;
  s.p99 = percentile_nearest_rank(seconds, 99) * 1e3;
  s.max = seconds.back() * 1e3;
  auto at_rank = [&](size_t rank) {
    return rank == 0               ? 0.0
           : rank > seconds.size() ? std::numeric_limits<double>::infinity()
                                   : seconds[rank - 1] * 1e3;
  };
  const RankInterval median = percentile_rank_interval(seconds.size(), 50);
  const RankInterval tail = percentile_rank_interval(seconds.size(), 99);
  s.p50_low = at_rank(median.low);
  s.p50_high = at_rank(median.high);
  s.p99_low = at_rank(tail.low);
  s.p99_high = at_rank(tail.high);
  return s;
}

// A pool of workers [first, first + count) as its router sees it (P/D: the prefill or the
// decode pool; otherwise every worker).
class Cluster final : public ClusterView {
 public:
  Cluster(std::vector<std::unique_ptr<Worker>>& workers, uint32_t block_tokens, uint32_t first,
          uint32_t count)
      : workers_(workers), block_tokens_(block_tokens), first_(first), count_(count) {}
  uint32_t workers() const override { return count_; }
  const WorkerLoad& load(WorkerId w) const override { return workers_[first_ + w]->load(); }
  uint32_t cached_prefix_blocks(WorkerId w, const RequestView& r) const override {
    return workers_[first_ + w]->computed_prefix(r.blocks);
  }
  std::array<uint32_t, 2> lower_tier_prefix_blocks(WorkerId w,
                                                   const RequestView& r) const override {
    return workers_[first_ + w]->lower_tier_prefix(r.blocks);
  }
  Time now() const override { return static_cast<Time>(now_ * kMicrosPerSecond); }
  uint32_t block_tokens() const override { return block_tokens_; }
  void set_now(double t) { now_ = t; }

 private:
  std::vector<std::unique_ptr<Worker>>& workers_;
  uint32_t block_tokens_;
  uint32_t first_, count_;
  double now_ = 0;
};

// Events in (time, kind, request, worker) order: at equal times an iteration's completions come
// before arrivals, so a router sees the loads they leave.
struct Event {
  double time;
  uint8_t kind;  // 0 = an iteration ends, 1 = a request arrives, 2 = its KV reaches decode
  uint32_t request;
  uint32_t worker;
  // An iteration's end is stale when a cut stretch (Worker::cut_stretch) moved its worker's
  // next end: it is skipped (not an event). Not part of the order.
  uint64_t generation = 0;
  bool operator>(const Event& e) const {
    if (time != e.time) return time > e.time;
    if (kind != e.kind) return kind > e.kind;
    if (request != e.request) return request > e.request;
    return worker > e.worker;
  }
};

}  // namespace

ServeResult serve(const Trace& trace, const ServeOptions& o) { return serve(trace, o, o.timeline); }

ServeResult serve(const Trace& trace, const ServeOptions& o, RequestTimeline* timeline) {
  serve_detail::check_options(trace, o);
  const bool pd = serve_detail::check_disaggregation(o);
  const uint32_t nw = serve_detail::total_workers(o);
  const uint32_t prefill_pool = pd ? o.prefill_workers : nw;  // what `router` routes to
  auto wall_start = std::chrono::steady_clock::now();
  const size_t n = trace.size();
  const uint32_t B = trace.block_tokens;
  CostModel cost =
      o.cost_model ? o.cost_model->with_block_tokens(B) : CostModel().with_block_tokens(B);
  const bool closed = o.clients > 0;
  std::vector<double> arrival =
      closed ? std::vector<double>(n, 0.0) : serve_detail::arrival_times(trace, o);
  std::vector<Time> arrival_us(n);
  for (size_t r = 0; r < n; ++r)
    arrival_us[r] = closed ? trace.time[r] - trace.time[0]
                           : static_cast<Time>(std::llround(arrival[r] * kMicrosPerSecond));
  bool need_oracle = needs_future(o.policy);
  for (const TierSpec& t : o.tiers) need_oracle = need_oracle || needs_future(t.policy);
  Workload workload = serve_detail::make_workload(trace, arrival_us, o.cache_outputs, need_oracle);

  // An offline router (offline_bound) reads the trace's future: every request in arrival order,
  // which only an open loop knows in advance (a closed loop's arrivals follow completions).
  std::vector<FutureRequest> future;
  if (pd && router_needs_future(o.decode_router))
    throw ConfigError("serve: router " + o.decode_router.name +
                      " reads the trace's future (offline) and cannot be the decode router");
  const bool offline_router = !o.assignment && router_needs_future(o.router);
  if (offline_router) {
    if (closed)
      throw ConfigError("serve: router " + o.router.name +
                        " reads the trace's future (offline), which a closed loop (--clients) "
                        "does not know in advance; use an open loop");
    future = serve_detail::future_requests(workload, arrival_us);
  }
  RouterContext rctx;
  rctx.future = offline_router ? &future : nullptr;
  rctx.workers = prefill_pool;
  rctx.block_tokens = B;
  rctx.seed = o.seed;
  rctx.prefill_seconds_per_token = cost.linear_fit().slope_ms_per_token * 1e-3;
  rctx.worker_kv_tokens = uint64_t{o.capacity_blocks} * B;
  rctx.worker_max_running = o.max_running;
  std::unique_ptr<Router> router =
      o.assignment ? serve_detail::assigned_router(o) : make_router(o.router, rctx);
  std::unique_ptr<Router> decode_router;
  if (pd) {
    rctx.workers = o.decode_workers;
    rctx.future = nullptr;
    decode_router = make_router(o.decode_router, rctx);
  }

  // P/D's layer-wise transfer needs the model's layers (a linear cost model has none).
  const bool layerwise = pd && o.kv_transfer == "layerwise";
  const uint32_t layers = cost.model().layers;
  if (layerwise && layers == 0)
    throw ConfigError(
        "serve: --kv-transfer layerwise needs a cost model with a model's layers, not " +
        cost.label());
  std::vector<RequestState> requests(n);
  std::unique_ptr<TierStore> remote_pool;  // memory tiers: the cluster's shared pool
  std::vector<std::unique_ptr<Worker>> workers;
  Cluster cluster(workers, B, 0, prefill_pool);
  Cluster decode_pool(workers, B, prefill_pool, pd ? o.decode_workers : 0);
  serve_detail::KvLinks links(prefill_pool, o.kv_link_bytes_per_s, o.kv_link_latency_s);
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;

  // Closed loop: each client runs one session's turns in order, then takes the next session.
  std::vector<std::vector<uint32_t>> sessions;
  std::vector<uint32_t> session_of(n), turn_of(n);
  size_t next_session = 0;
  if (closed) {
    std::unordered_map<SessionId, uint32_t> index;
    for (uint32_t r = 0; r < n; ++r) {
      uint32_t s;
      if (trace.session[r] == kNoSession) {
        s = static_cast<uint32_t>(sessions.size());
        sessions.emplace_back();
      } else {
        auto [it, fresh] =
            index.try_emplace(trace.session[r], static_cast<uint32_t>(sessions.size()));
        if (fresh) sessions.emplace_back();
        s = it->second;
      }
      session_of[r] = s;
      turn_of[r] = static_cast<uint32_t>(sessions[s].size());
      sessions[s].push_back(r);
    }
    for (uint32_t c = 0; c < o.clients && next_session < sessions.size(); ++c)
      events.push({0.0, 1, sessions[next_session++].front(), 0});
  }

  ServeResult res = planned_result(trace, o);
  // The integral of requests in the system over time, summed where their number changes (the
  // same sum whether decode-only iterations are stepped or skipped).
  double area = 0, last_t = 0, sojourn = 0;
  uint64_t in_system = 0, left = 0;
  auto count_area = [&](double now) {
    area += double(in_system) * (now - last_t);
    last_t = now;
  };
  size_t progress_step = std::max<size_t>(1, n / 100);

  auto done = [&](uint32_t r, double now, bool rejected) {
    RequestState& s = requests[r];
    count_area(now);
    --in_system;
    ++left;
    sojourn += now - s.arrival;
    if (rejected) {
      ++res.rejected;
      s.finish = now;
    }
    Completion c;
    c.arrival = static_cast<Time>(s.arrival * kMicrosPerSecond);
    c.first_token = static_cast<Time>((s.first_token < 0 ? now : s.first_token) * 1e6);
    c.finish = static_cast<Time>(now * kMicrosPerSecond);
    c.cached_blocks = s.hit_blocks;
    if (s.worker >= prefill_pool) {  // P/D: it left the decode pool
      decode_router->on_complete(workload.view(r, now, false), s.worker - prefill_pool, c,
                                 decode_pool);
    } else {
      router->on_complete(workload.view(r, now, false), s.worker, c, cluster);
    }
    if (closed) {
      const auto& turns = sessions[session_of[r]];
      uint32_t next_turn = turn_of[r] + 1;
      if (next_turn < turns.size()) {
        events.push({now + o.think_time_s, 1, turns[next_turn], 0});
      } else if (next_session < sessions.size()) {
        events.push({now + o.think_time_s, 1, sessions[next_session++].front(), 0});
      }
    }
    if (o.progress && left % progress_step == 0) o.progress(double(left) / double(n));
  };

  PolicyContext pctx;
  pctx.block_tokens = B;
  pctx.cost_model = &cost;
  if (workload.has_oracle) pctx.future = workload.oracle.view(workload.sequences);
  if (workload.sequences.has_hints()) pctx.retention.emplace();  // retention hints
  Worker::Config wcfg{o.max_batch_tokens, o.max_running, o.check_victims};
  wcfg.chunked = o.allocation == "chunked";
  wcfg.overlap_transfers = o.overlap_transfers;
  wcfg.decode_cache = pd && o.decode_cache;
  for (uint32_t w = 0; w < nw; ++w) {
    pctx.seed = o.seed + w;  // workers draw apart
    if (pd)
      wcfg.role = w < prefill_pool ? Worker::Config::Role::kPrefill : Worker::Config::Role::kDecode;
    workers.push_back(std::make_unique<Worker>(w, o.capacity_blocks, o.policy, pctx, cost, wcfg,
                                               workload, requests, done));
  }
  serve_detail::attach_tiers(workers, o, pctx, remote_pool);

  std::vector<uint64_t> generation(nw, 0);  // of each worker's live iteration end
  // Per-worker trace: a worker is busy from the start of an iteration (or stretch) to its live
  // end event, so its busy time up to t is the closed spans plus the open one's part.
  std::vector<double> busy_closed(nw, 0.0), busy_since(nw, -1.0);
  auto kick = [&](uint32_t w, double now) {
    double seconds = workers[w]->start_iteration(now);
    if (seconds >= 0) {
      busy_since[w] = now;
      double end = o.stepped ? now + seconds : workers[w]->plan_stretch(now, seconds);
      events.push({end, 0, 0, w, ++generation[w]});
      ++res.iterations;
    }
  };
  // Work that a worker's next iteration may take up (a request, KV, freed memory): an idle worker
  // starts; a stretch ends with the iteration in progress.
  auto wake = [&](uint32_t w, double now) {
    if (!workers[w]->busy()) {
      kick(w, now);
    } else if (workers[w]->in_stretch()) {
      events.push({workers[w]->cut_stretch(now), 0, 0, w, ++generation[w]});
    }
  };
  auto arrive = [&](uint32_t r, double now) {
    requests[r].arrival = now;
    count_area(now);
    ++in_system;
    WorkerId w = router->route(workload.view(r, now, false), cluster);
    if (w >= prefill_pool)
      throw Error("router " + o.router.label() + " chose worker " + std::to_string(w) + " of " +
                  std::to_string(prefill_pool));
    workers[w]->enqueue(r);
    wake(w, now);
  };
  // P/D: a prefilled request leaves its prefill worker (its router hears it as done there), a
  // decode worker is chosen and the request's KV (its whole context) crosses the link to it.
  std::vector<uint32_t> sent_from(pd ? n : 0);  // P/D: each request's prefill worker
  auto hand_off = [&](uint32_t r, double now) {
    RequestState& s = requests[r];
    Completion c;
    c.arrival = static_cast<Time>(s.arrival * kMicrosPerSecond);
    c.first_token = c.finish = static_cast<Time>(now * kMicrosPerSecond);
    c.cached_blocks = s.hit_blocks;
    router->on_complete(workload.view(r, now, false), s.worker, c, cluster);
    WorkerId d = decode_router->route(workload.view(r, now, false), decode_pool);
    if (d >= o.decode_workers)
      throw Error("router " + o.decode_router.label() + " chose decode worker " +
                  std::to_string(d) + " of " + std::to_string(o.decode_workers));
    uint32_t blocks = serve_detail::sequence_blocks(workload.prompt_blocks[r], s.context, B);
    // The decode cache: what the decode worker holds is not sent (and stays until the KV arrives).
    uint32_t held = o.decode_cache ? workers[prefill_pool + d]->hold_prefix(r) : 0;
    held = std::min(held, blocks);
    res.decode_hit_blocks += held;
    res.kv_blocks_transferred += blocks - held;
    double bytes = double(blocks - held) * cost.kv_bytes_per_block();
    double at = layerwise ? links.send_layerwise(s.worker, bytes, now,
                                                 workers[s.worker]->compute_seconds(), layers)
                          : links.send(s.worker, bytes, now);
    sent_from[r] = s.worker;
    requests[r].worker = prefill_pool + d;
    workers[prefill_pool + d]->expect_kv();
    events.push({at, 2, r, prefill_pool + d});
  };
  if (pd)
    for (uint32_t w = 0; w < prefill_pool; ++w) workers[w]->set_handoff(hand_off);

  size_t next_arrival = 0;
  double first_arrival = closed ? 0.0 : (n ? arrival[0] : 0.0);
  last_t = first_arrival;
  std::optional<serve_detail::WorkerTraceSampler> sampler;
  if (o.worker_trace) {
    auto fill = [&](uint32_t w, WorkerSample& x) {
      const WorkerLoad& l = workers[w]->load();
      x.waiting = l.waiting;
      x.running = l.running;
      x.queued_prefill_tokens = l.queued_prefill_tokens;
      x.kv_blocks = l.active_blocks;
      if (w < prefill_pool) {
        router->worker_state(w, x.router_state);
      } else {
        decode_router->worker_state(w - prefill_pool, x.router_state);
      }
    };
    auto busy = [&](uint32_t w, double t) {
      return busy_closed[w] + (busy_since[w] >= 0 ? std::max(0.0, t - busy_since[w]) : 0.0);
    };
    sampler.emplace(*o.worker_trace, first_arrival, nw, fill, busy);
  }
  while (true) {
    while (next_arrival < n && serve_detail::skipped(o, next_arrival)) ++next_arrival;
    bool from_trace = !closed && next_arrival < n;
    if (!from_trace && events.empty()) break;
    Event e;
    if (from_trace &&
        (events.empty() ||
         events.top() > Event{arrival[next_arrival], 1, static_cast<uint32_t>(next_arrival), 0})) {
      e = {arrival[next_arrival], 1, static_cast<uint32_t>(next_arrival), 0};
      ++next_arrival;
    } else {
      e = events.top();
      events.pop();
      if (e.kind == 0 && e.generation != generation[e.worker]) continue;  // a cut stretch's
    }
    if (sampler) sampler->until(e.time);
    cluster.set_now(e.time);
    ++res.events;
    if (e.kind == 1) {
      arrive(e.request, e.time);
    } else if (e.kind == 2) {
      // The prefill worker frees the blocks it held for the transfer; the decode worker has KV.
      uint32_t from = sent_from[e.request];
      workers[from]->kv_sent(e.request, e.time);
      wake(from, e.time);
      workers[e.worker]->receive_kv(e.request);
      wake(e.worker, e.time);
    } else {
      busy_closed[e.worker] += e.time - busy_since[e.worker];
      busy_since[e.worker] = -1.0;
      workers[e.worker]->end_iteration(e.time);
      kick(e.worker, e.time);
    }
  }
  if (left + serve_detail::skipped_requests(o) != n)
    throw Error("serve: " + std::to_string(n - left) + " requests never completed (a bug)");
  // The iterations inside stretches were events of the stepped loop too.
  for (auto& w : workers) {
    res.iterations += w->skipped_iterations();
    res.events += w->skipped_iterations();
  }
  for (uint32_t w = 0; w < nw; ++w) {
    const WorkerLoad& l = workers[w]->load();
    if (l.in_flight != 0 || l.active_blocks != 0 || l.queued_prefill_tokens != 0)
      throw Error("serve: worker " + std::to_string(w) + " still holds load after the run (a bug)");
  }
  if (router->in_flight_state() > 1e-9)
    throw Error("serve: router " + o.router.label() + " still holds in-flight state (a bug)");
  if (decode_router && decode_router->in_flight_state() > 1e-9)
    throw Error("serve: decode router " + o.decode_router.label() +
                " still holds in-flight state (a bug)");

  // Metrics over completed requests.
  std::vector<double> wait, ttft, tpot, e2e;
  double last_finish = first_arrival;
  uint64_t slo_violations = 0;
  for (uint32_t r = 0; r < n; ++r) {
    const RequestState& s = requests[r];
    last_finish = std::max(last_finish, s.finish);
    if (s.completions == 0) continue;
    ++res.requests;
    wait.push_back(s.admitted - s.arrival);
    ttft.push_back(s.first_token - s.arrival);
    e2e.push_back(s.finish - s.arrival);
    if (s.generated > 1) tpot.push_back((s.finish - s.first_token) / double(s.generated - 1));
    if ((s.first_token - s.arrival) * 1e3 > o.slo_ms) ++slo_violations;
    res.output_tokens += s.generated;
    res.prompt_tokens += trace.prompt_tokens[r];
    res.token_hits += std::min<uint64_t>(uint64_t{s.counted_hits} * B, trace.prompt_tokens[r]);
  }
  if (sampler) sampler->finish(last_finish);
  res.queue_wait_ms = summarize(wait);
  res.ttft_ms = summarize(ttft);
  res.tpot_ms = summarize(tpot);
  res.e2e_ms = summarize(e2e);
  res.makespan_s = last_finish - first_arrival;
  if (res.makespan_s > 0) {
    res.throughput_rps = double(res.requests) / res.makespan_s;
    res.output_tokens_per_s = double(res.output_tokens) / res.makespan_s;
    res.mean_in_system = area / res.makespan_s;
  }
  res.slo_violation_rate = res.requests ? double(slo_violations) / double(res.requests) : 0;
  res.token_hit_rate = res.prompt_tokens ? double(res.token_hits) / double(res.prompt_tokens) : 0;
  for (auto& w : workers) {
    WorkerResult wr = w->result();
    wr.evictions = w->cache().evictions();
    res.block_accesses += wr.block_accesses;
    res.block_hits += wr.block_hits;
    res.preemptions += wr.preemptions;
    res.evictions += wr.evictions;
    res.per_worker.push_back(wr);
    for (const auto& stat : w->cache().policy().stats()) {
      auto it = std::find_if(res.policy_stats.begin(), res.policy_stats.end(),
                             [&](auto& kv) { return kv.first == stat.first; });
      if (it == res.policy_stats.end()) {
        res.policy_stats.push_back(stat);
      } else {
        it->second += stat.second;
      }
    }
  }
  res.block_hit_rate = res.block_accesses ? double(res.block_hits) / double(res.block_accesses) : 0;
  serve_detail::collect_tiers(workers, o, cost, res);
  res.router_stats = router->stats();
  if (pd) {  // P/D: the link's totals and each pool's mean utilisation
    res.kv_transfers = links.transfers;
    res.kv_bytes_transferred = links.bytes;
    res.kv_transfer_seconds = links.seconds;
    double busy_p = 0, busy_d = 0;
    for (uint32_t w = 0; w < nw; ++w)
      (w < prefill_pool ? busy_p : busy_d) += res.per_worker[w].busy_seconds;
    if (res.makespan_s > 0) {
      res.prefill_utilisation = busy_p / res.makespan_s / prefill_pool;
      res.decode_utilisation = busy_d / res.makespan_s / o.decode_workers;
    }
  }
  res.total_sojourn_s = sojourn;
  res.sim_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (timeline) {
    *timeline = {};
    for (const RequestState& s : requests) {
      timeline->arrival.push_back(s.arrival);
      timeline->admitted.push_back(s.admitted);
      timeline->first_token.push_back(s.first_token);
      timeline->finish.push_back(s.finish);
      timeline->worker.push_back(s.worker);
      timeline->completions.push_back(s.completions);
      timeline->hit_blocks.push_back(s.counted_hits);
    }
  }
  return res;
}

}  // namespace kvpolicy
