// lbgr: the worker of least predicted latency = service (uncached tokens x a per-token cost,
// from its approximate tree) + queue (a slot that grows by each routed request's service,
// decays by a factor every interval, and is released on completion) + a learned bias (scalar
// recursive least squares per worker on observed latency - estimate); ties to the lower index.
// Source: "Randomization Boosts KV Caching, Learning Balances Query Load" (LBGR, Algorithm 2;
// code fzwark/KVRouting). Cost: O(prompt blocks + workers) per request, O(1) per completion.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "approx_tree.h"
#include "route_common.h"

namespace kvpolicy {
namespace {

class Lbgr final : public Router {
 public:
  Lbgr(const RouterContext& ctx, const Params& p)
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

const bool registered = register_router<Lbgr>({
    .name = "lbgr",
    .summary = "least predicted latency: uncached tokens x token cost (approximate tree) + "
               "decaying queue of routed service + RLS-learned per-worker bias",
    .source = "Randomization Boosts KV Caching, Learning Balances Query Load (LBGR), 2025",
    // The authors' 1 ms per uncached character at about 4 characters per token. Its scale
    // matters: the queue slot decays by wall-clock time, so a realistic per-token cost makes
    // queues look short and herds load onto cached workers (docs/routers.md, lbgr).
    .params = {param_double("token_cost_ms", 4, {.min = 0, .special = {-1}},
                            "service per uncached prompt token, ms (the authors use 1 ms per "
                            "uncached character); -1 = the cluster's prefill cost per token"),
               param_double("decay", 31.0 / 32.0, {.min = 0, .max = 1, .min_exclusive = true},
                            "the queue slot is multiplied by this every decay interval"),
               param_double("decay_interval_ms", 20, {.min = 0, .min_exclusive = true},
                            "the queue's decay interval, ms"),
               param_double("forgetting", 0.992, {.min = 0, .max = 1, .min_exclusive = true},
                            "RLS forgetting factor of the learned bias"),
               param_double("p0", 1e6, {.min = 0, .min_exclusive = true},
                            "RLS initial variance of the bias"),
               param_int("max_tree_tokens", int64_t{1} << 24, {.min = 1},
                         "per-worker size of the approximate tree, tokens (SGLang: 2^24 "
                         "characters); LRU leaves go beyond it")},
    .variants = {"token_cost_ms=-1", "max_tree_tokens=64,decay=1"},
    .max_workers = ApproxTree::kMaxWorkers,
});

}  // namespace
}  // namespace kvpolicy
