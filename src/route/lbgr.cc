// lbgr: the worker of least predicted latency = service (uncached tokens x a per-token cost,
// from its approximate tree; the robust variant prices it by the worker's requests in flight,
// which the prefill delays) + queue (a slot that grows by each routed request's service,
// decays by a factor every interval, and is released on completion; the robust variant takes
// the worker's prefill backlog, less what waits cached, when larger, and adds the wait for a
// running slot when the worker's are all taken) + a learned bias (scalar
// recursive least squares per worker on observed latency - estimate); ties to the lower index.
// Source: "Randomization Boosts KV Caching, Learning Balances Query Load" (LBGR, Algorithm 2;
// code fzwark/KVRouting). Cost: O(prompt blocks + workers) per request, O(1) per completion;
// backlog_of=uncached adds O(waiting) per worker per request and O(in flight) per completion.
#include <algorithm>
#include <cmath>
#include <deque>
#include <string>
#include <vector>

#include "approx_tree.h"
#include "prefill_tracker.h"
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
        paper_(p.get_string("variant") == "paper"),
        shrink_(paper_ ? 1.0 : p.get_double("bias_shrink")),
        cap_(paper_ ? -1.0 : p.get_double("bias_cap_s")),
        guard_inflight_(paper_ ? 0 : static_cast<uint32_t>(p.get_int("guard_inflight"))),
        guard_tokens_(paper_ ? 0 : static_cast<uint64_t>(p.get_int("guard_prefill_tokens"))),
        queue_tau_(paper_ ? 0.0 : p.get_double("queue_tau")),
        tau_of_(paper_ ? Clock::kE2e : clock_of(p.get_string("queue_tau_of"))),
        queue_tau_ttft_(p.get_double("queue_tau_ttft")),
        cap_ttft_(paper_ ? -1.0 : p.get_double("bias_cap_ttft")),
        residual_floor_(paper_ ? -1.0 : p.get_double("residual_floor_ms") / 1e3),
        backlog_weight_(paper_ ? 0.0 : p.get_double("backlog_weight")),
        service_load_(paper_ ? 0.0 : p.get_double("service_load")),
        admission_(paper_ ? 0.0 : p.get_double("admission")),
        bias_learns_ttft_(!paper_ && p.get_string("bias_learns") == "ttft"),
        max_running_(ctx.worker_max_running),
        to_token_cost_(ctx.prefill_seconds_per_token > 0
                           ? seconds_per_token_ / ctx.prefill_seconds_per_token
                           : 1.0),
        backlog_of_(backlog_weight_ > 0 ? backlog_of(p.get_string("backlog_of"))
                                        : Backlog::kCluster),
        prefills_(ctx.workers, ctx.prefill_seconds_per_token, true),
        matched_in_flight_(ctx.workers),
        tree_(ctx.workers, ctx.block_tokens,
              tree_tokens(ctx, p.get_int("max_tree_tokens"), paper_)),
        workers_(ctx.workers) {
    for (Worker& w : workers_) w.p = p.get_double("p0");
  }

  WorkerId route(const RequestView& r, const ClusterView& cluster) override {
    const int64_t tick = cluster.now() / interval_;
    tree_.match(r.blocks, cluster.now(), matched_);
    if (!paper_) return route_robust(r, cluster, tick);
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
    record(r, best, best_service, tick);
    tree_.insert(best, r.blocks, cluster.now());
    return best;
  }

  void on_complete(const RequestView& r, WorkerId worker, const Completion& done,
                   const ClusterView& cluster) override {
    if (backlog_of_ == Backlog::kTracked) prefills_.complete(r.index, cluster.now());
    if (backlog_of_ == Backlog::kUncached) {
      auto& q = matched_in_flight_[worker];  // mostly the oldest completes first
      auto it = std::find_if(q.begin(), q.end(), [&](const auto& e) { return e.first == r.index; });
      if (it != q.end()) q.erase(it);
    }
    if (r.index >= records_.size() || !records_[r.index].open) return;
    const Record rec = records_[r.index];
    records_[r.index].open = false;
    --open_records_;
    Worker& w = workers_[rec.worker];
    const int64_t tick = cluster.now() / interval_;
    decay_to(rec.worker, tick);
    const double latency = double(done.finish - done.arrival) / double(kMicrosPerSecond);
    const double ttft = double(done.first_token - done.arrival) / double(kMicrosPerSecond);
    if (paper_) {
      // What is left of this request's share of the slot, decayed as the slot was.
      double left = rec.service * std::pow(decay_, double(std::max<int64_t>(0, tick - rec.tick)));
      w.queue = std::max(0.0, w.queue - left);
    } else {
      // The slot's decay may vary (queue_tau): the share left follows its summed log-decay.
      double left = rec.service * std::exp(w.log_decay - rec.log_decay);
      w.queue = --w.open ? std::max(0.0, w.queue - left) : 0.0;
      // What the slot's time constant follows: end-to-end latency, the time to first token
      // (the queue wait and prefill the slot models; decode is the bias's), or the shorter of
      // the two scaled (docs/routers.md, lbgr): both EWMAs are kept.
      mean_e2e_ = completions_ ? mean_e2e_ + kLatencyWeight * (latency - mean_e2e_) : latency;
      mean_ttft_ = completions_ ? mean_ttft_ + kLatencyWeight * (ttft - mean_ttft_) : ttft;
    }
    // Scalar RLS with feature 1: the bias tracks latency - estimate, forgetting old errors.
    // Robust, bias_learns=ttft: the latency is the time to first token in the estimate's
    // token-cost seconds, the quantity the service and the slot stand for (docs/routers.md).
    double residual = (bias_learns_ttft_ ? ttft * to_token_cost_ : latency) - rec.estimate;
    // Robust: the residual floored, as the authors' code does (at 1 ms), so a worker's bias
    // never rewards it for the estimate's overshoot (docs/routers.md, lbgr).
    if (residual_floor_ >= 0) residual = std::max(residual, residual_floor_);
    double gain = w.p / (forgetting_ + w.p);
    w.bias += gain * (residual - w.bias);
    w.p = (1.0 - gain) * w.p / forgetting_;
    ++completions_;
  }

  PolicyStats stats() const override {
    PolicyStats out = {{"completions", double(completions_)},
                       {"open_records", double(open_records_)},
                       {"last_estimate_s", last_estimate_},
                       {"guard_fired", double(guard_fired_)}};
    if (!paper_) {  // the robust slot's clocks (the paper's slot has a fixed decay)
      out.emplace_back("mean_e2e_s", mean_e2e_);
      out.emplace_back("mean_ttft_s", mean_ttft_);
      out.emplace_back("queue_tau_s", slot_tau());
    }
    for (WorkerId w = 0; w < workers_.size(); ++w) {
      out.emplace_back("bias_s_w" + std::to_string(w), workers_[w].bias);
      out.emplace_back("queue_s_w" + std::to_string(w), workers_[w].queue);
    }
    return out;
  }

  // The slot as of the router's last event (it decays lazily), the learned bias and the bias
  // the robust variant routes with (shrunk towards the workers' mean and capped).
  void worker_state(WorkerId w, std::vector<std::pair<std::string, double>>& out) const override {
    out.emplace_back("lbgr_queue_s", workers_[w].queue);
    out.emplace_back("lbgr_bias_s", workers_[w].bias);
    out.emplace_back("lbgr_bias_used_s", paper_ ? workers_[w].bias : used_bias(w, mean_bias()));
  }

  double in_flight_state() const override {
    double queued = 0;
    for (const Worker& w : workers_) queued += w.queue;
    for (const auto& q : matched_in_flight_) queued += double(q.size());
    return queued + double(open_records_) + prefills_.in_flight();
  }

 private:
  struct Worker {
    double queue = 0;        // seconds of service routed to it, decayed, not yet released
    int64_t tick = 0;        // decay interval the queue was last decayed to
    double bias = 0, p = 0;  // the RLS estimate and its variance
    double log_decay = 0;    // robust: log of the product of the decay factors applied so far
    uint32_t open = 0;       // robust: its open records
  };
  struct Record {
    WorkerId worker;
    double service;  // its addition to the worker's queue
    int64_t tick;    // when it was added
    double estimate;
    bool open = false;     // routed, not yet completed
    double log_decay = 0;  // robust: the worker's log_decay when it was added
  };
  static constexpr double kLatencyWeight = 0.05;  // EWMA of observed latencies (queue_tau)

  // The robust variant (docs/routers.md, lbgr): the paper's argmin with the bias shrunk and
  // capped, the queue at least the prefill backlog's share, under an optional load guard.
  WorkerId route_robust(const RequestView& r, const ClusterView& cluster, int64_t tick) {
    const uint32_t n = cluster.workers();
    const double mean = mean_bias();
    WorkerId best = 0;
    double best_latency = 0;
    for (WorkerId w = 0; w < n; ++w) {
      decay_to(w, tick);
      // The service at its marginal cost: a prefill shares the worker with, and delays, the
      // requests in flight there (docs/routers.md, lbgr).
      const double marginal = 1.0 + service_load_ * double(cluster.load(w).in_flight);
      double latency = marginal * service(r, matched_[w], cluster.block_tokens()) +
                       queue(w, cluster) + admission(w, cluster) + used_bias(w, mean);
      if (w == 0 || latency < best_latency) {
        best = w;
        best_latency = latency;
      }
    }
    if (WorkerId g = guarded(cluster); g != kNoGuard) {
      best = g;
      ++guard_fired_;
    }
    record(r, best, service(r, matched_[best], cluster.block_tokens()), tick);
    const uint64_t cached =
        std::min<uint64_t>(uint64_t{matched_[best]} * cluster.block_tokens(), r.prompt_tokens);
    if (backlog_of_ == Backlog::kTracked)
      prefills_.add(best, r.index, r.prompt_tokens - cached, cluster.now());
    if (backlog_of_ == Backlog::kUncached) matched_in_flight_[best].emplace_back(r.index, cached);
    ++workers_[best].open;
    tree_.insert(best, r.blocks, cluster.now());
    return best;
  }

  // The load guard: when the spread (max - min) of requests in flight exceeds guard_inflight,
  // the worker with the fewest in flight; else when the spread of queued prefill tokens exceeds
  // guard_prefill_tokens, the one with the fewest; ties to the lower index. kNoGuard otherwise.
  static constexpr WorkerId kNoGuard = ~WorkerId{0};
  WorkerId guarded(const ClusterView& cluster) const {
    if (!guard_inflight_ && !guard_tokens_) return kNoGuard;
    WorkerId few = 0, few_tokens = 0;
    uint32_t most = 0;
    uint64_t most_tokens = 0;
    for (WorkerId w = 0; w < cluster.workers(); ++w) {
      const WorkerLoad& l = cluster.load(w);
      if (l.in_flight < cluster.load(few).in_flight) few = w;
      if (l.queued_prefill_tokens < cluster.load(few_tokens).queued_prefill_tokens) few_tokens = w;
      most = std::max(most, l.in_flight);
      most_tokens = std::max(most_tokens, l.queued_prefill_tokens);
    }
    if (guard_inflight_ && most - cluster.load(few).in_flight > guard_inflight_) return few;
    if (guard_tokens_ &&
        most_tokens - cluster.load(few_tokens).queued_prefill_tokens > guard_tokens_)
      return few_tokens;
    return kNoGuard;
  }

  double mean_bias() const {
    double sum = 0;
    for (const Worker& w : workers_) sum += w.bias;
    return workers_.empty() ? 0.0 : sum / double(workers_.size());
  }
  // Only the workers' differences in bias move the argmin: shrink them towards the mean, cap
  // (in seconds, and in multiples of the EWMA of TTFT: a bias worth more than a few prefills
  // outweighs any cached prefix, docs/routers.md).
  double used_bias(WorkerId w, double mean) const {
    double d = shrink_ * (workers_[w].bias - mean);
    if (cap_ >= 0) d = std::clamp(d, -cap_, cap_);
    if (cap_ttft_ >= 0 && completions_ > 0)
      d = std::clamp(d, -cap_ttft_ * mean_ttft_, cap_ttft_ * mean_ttft_);
    return mean + d;
  }

  // The queue the robust argmin sees: the slot, or the worker's prefill backlog (tokens still
  // to prefill x token cost x backlog_weight) when that is larger. The backlog: as the worker
  // reports it (every waiting prompt in full); as the router tracks what it sent (uncached
  // tokens by its tree, draining at the cluster's prefill rate); or the report less what the
  // tree matched for the requests still waiting, taken as the newest of those routed there.
  double queue(WorkerId w, const ClusterView& cluster) {
    if (backlog_weight_ == 0) return workers_[w].queue;
    const WorkerLoad& load = cluster.load(w);
    uint64_t tokens = load.queued_prefill_tokens;
    if (backlog_of_ == Backlog::kTracked) tokens = prefills_.tokens(w, cluster.now());
    if (backlog_of_ == Backlog::kUncached) {
      const auto& q = matched_in_flight_[w];
      uint64_t matched = 0;
      for (size_t i = 0; i < std::min<size_t>(load.waiting, q.size()); ++i)
        matched += q[q.size() - 1 - i].second;
      tokens -= std::min(tokens, matched);
    }
    return std::max(workers_[w].queue, backlog_weight_ * double(tokens) * seconds_per_token_);
  }

  // The wait for a running slot, in the slot's units: with the worker's running sequences at
  // their cap, a request waits for the completions of those ahead of it (each about the EWMA of
  // end-to-end latency / the cap apart), converted from seconds to token-cost seconds by
  // token cost / the cluster's real prefill cost (docs/routers.md, lbgr).
  double admission(WorkerId w, const ClusterView& cluster) const {
    if (admission_ == 0 || max_running_ == 0 || completions_ == 0) return 0;
    const WorkerLoad& load = cluster.load(w);
    const double free_slots = double(max_running_ - std::min(max_running_, load.running));
    const double ahead = double(load.waiting) + 1.0 - free_slots;
    if (ahead <= 0) return 0;
    return admission_ * to_token_cost_ * ahead * mean_e2e_ / double(max_running_);
  }

  enum class Backlog { kCluster, kTracked, kUncached };
  static Backlog backlog_of(const std::string& s) {
    return s == "tracked"    ? Backlog::kTracked
           : s == "uncached" ? Backlog::kUncached
                             : Backlog::kCluster;
  }

  // max_tree_tokens, or with -1 the worker's KV memory (SGLang's 2^24 for variant=paper, or
  // when the cluster does not say): a tree larger than the cache remembers evicted prefixes.
  static uint64_t tree_tokens(const RouterContext& ctx, int64_t param, bool paper) {
    if (param >= 0) return static_cast<uint64_t>(param);
    return ctx.worker_kv_tokens && !paper ? ctx.worker_kv_tokens : uint64_t{1} << 24;
  }

  enum class Clock { kE2e, kTtft, kMin };
  static Clock clock_of(const std::string& s) {
    return s == "ttft" ? Clock::kTtft : s == "min" ? Clock::kMin : Clock::kE2e;
  }
  // The slot's time constant, seconds (0 before the first completion): queue_tau x the chosen
  // EWMA, or with queue_tau_of=min, min(queue_tau x EWMA(e2e), queue_tau_ttft x EWMA(TTFT)), so
  // the slot lasts about as long as the work it stands for, whichever clock is shorter.
  double slot_tau() const {
    if (completions_ == 0) return 0;
    switch (tau_of_) {
      case Clock::kE2e:
        return queue_tau_ * mean_e2e_;
      case Clock::kTtft:
        return queue_tau_ * mean_ttft_;
      case Clock::kMin:
        return std::min(queue_tau_ * mean_e2e_, queue_tau_ttft_ * mean_ttft_);
    }
    return 0;
  }

  void record(const RequestView& r, WorkerId best, double best_service, int64_t tick) {
    // The estimate the bias corrects: the service and the slot, without the bias itself (and
    // without the robust terms: the backlog, the marginal price and the admission wait).
    last_estimate_ = best_service + workers_[best].queue;
    // Open records by request index: a vector, not a hash map (one allocation per request was
    // a visible share of serve mode's time, docs/results/bench.md).
    if (r.index >= records_.size())
      records_.resize(std::max<size_t>(r.index + 1, records_.size() * 2));
    if (!records_[r.index].open) ++open_records_;
    records_[r.index] = {best, best_service, tick, last_estimate_, true, workers_[best].log_decay};
    workers_[best].queue += best_service;
  }

  double service(const RequestView& r, uint32_t matched_blocks, uint32_t block_tokens) const {
    uint64_t cached = std::min<uint64_t>(uint64_t{matched_blocks} * block_tokens, r.prompt_tokens);
    return double(r.prompt_tokens - cached) * seconds_per_token_;
  }

  // The slot decays once per interval; applied lazily, from the intervals since the last time.
  // Robust with queue_tau > 0: the factor is exp(-interval / (queue_tau x the EWMA of observed
  // latencies)), so the slot forgets a request about when one completes (the paper's fixed
  // factor until the first completion).
  void decay_to(WorkerId w, int64_t tick) {
    Worker& x = workers_[w];
    if (tick > x.tick) {
      if (paper_) {
        x.queue *= std::pow(decay_, double(tick - x.tick));
      } else {
        double log_f = std::log(decay_);
        if (const double tau = slot_tau(); queue_tau_ > 0 && tau > 0)
          log_f = -double(interval_) / double(kMicrosPerSecond) / tau;
        double k = double(tick - x.tick) * log_f;
        x.queue *= std::exp(k);
        x.log_decay += k;
      }
    }
    x.tick = std::max(x.tick, tick);
  }

  double seconds_per_token_, decay_;
  Time interval_;
  double forgetting_;
  bool paper_;
  double shrink_, cap_;
  uint32_t guard_inflight_;
  uint64_t guard_tokens_;
  double queue_tau_;
  Clock tau_of_;
  double queue_tau_ttft_;
  double cap_ttft_;        // multiples of mean_ttft_; < 0: none
  double residual_floor_;  // seconds; < 0: none
  double backlog_weight_;
  double service_load_;    // per request in flight on the worker
  double admission_;       // weight of the wait for a running slot
  bool bias_learns_ttft_;  // the bias learns on TTFT (token-cost seconds), else end-to-end
  uint32_t max_running_;   // the worker's cap on running sequences, 0 = unknown
  double to_token_cost_;   // token-cost seconds per real second
  Backlog backlog_of_;
  PrefillTracker prefills_;  // backlog_of=tracked
  // backlog_of=uncached: per worker, (request, prompt tokens its tree matched) in routing order
  std::vector<std::deque<std::pair<RequestIndex, uint64_t>>> matched_in_flight_;
  double mean_e2e_ = 0;   // EWMA of observed end-to-end latencies, seconds
  double mean_ttft_ = 0;  // EWMA of observed times to first token, seconds
  uint64_t guard_fired_ = 0;
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
    .summary = "least predicted latency: uncached tokens x token cost (approximate tree; "
               "robust: x (1 + service_load x requests in flight)) + queue (decaying slot of "
               "routed service, or the worker's prefill backlog less what waits cached, when "
               "larger; robust: + the wait for a running slot) + RLS-learned per-worker bias",
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
               param_int("max_tree_tokens", -1, {.min = 1, .special = {-1}},
                         "per-worker size of the approximate tree, tokens (SGLang: 2^24 "
                         "characters); LRU leaves go beyond it; -1 = the worker's KV memory "
                         "(variant=paper, or no cluster: 2^24)"),
               param_choice("variant", "robust", {"robust", "paper"},
                            "paper: Algorithm 2 as published (the robust parameters below are "
                            "ignored); robust: with them"),
               param_double("bias_shrink", 0.5, {.min = 0, .max = 1},
                            "robust: each worker's bias deviation from the workers' mean is "
                            "multiplied by this when routing (1 = as learned; 0.5 tuned on "
                            "Mooncake's first half, docs/routers.md)"),
               param_double("bias_cap_s", -1, {.min = 0, .special = {-1}},
                            "robust: cap on a worker's (shrunk) bias deviation from the mean, "
                            "seconds; -1 = none"),
               param_int("guard_inflight", 0, {.min = 0},
                         "robust: route to the worker with fewest requests in flight when the "
                         "spread (max - min) of in-flight requests exceeds this; 0 = off"),
               param_int("guard_prefill_tokens", 0, {.min = 0},
                         "robust: route to the worker with fewest queued prefill tokens when "
                         "their spread exceeds this; 0 = off"),
               param_double("queue_tau", 0.5, {.min = 0},
                            "robust: the queue slot's time constant as a multiple of the EWMA "
                            "of observed latencies (0 = the fixed decay; 0.5 tuned on "
                            "Mooncake's first half)"),
               param_choice("queue_tau_of", "min", {"e2e", "ttft", "min"},
                            "robust: the latency whose EWMA queue_tau multiplies: end-to-end, "
                            "time to first token, or min: the shorter of queue_tau x end-to-end "
                            "and queue_tau_ttft x TTFT"),
               param_double("queue_tau_ttft", 3, {.min = 0, .min_exclusive = true},
                            "robust, queue_tau_of=min: the multiple of the EWMA of TTFT that "
                            "caps the slot's time constant"),
               param_double("bias_cap_ttft", 1, {.min = 0, .special = {-1}},
                            "robust: cap on a worker's (shrunk) bias deviation from the mean, in "
                            "multiples of the EWMA of TTFT; -1 = none"),
               param_double("residual_floor_ms", -1, {.min = 0, .special = {-1}},
                            "robust: the residual the bias learns is at least this, ms (the "
                            "authors' code: 1); -1 = no floor"),
               param_double("backlog_weight", 0.2, {.min = 0},
                            "robust: the queue term is the larger of the slot and this x the "
                            "worker's prefill backlog (backlog_of) x token cost; 0 = the slot "
                            "alone"),
               param_double("service_load", 0.02, {.min = 0},
                            "robust: the service is multiplied by 1 + this x the worker's "
                            "requests in flight (its marginal cost: the prefill delays them); "
                            "0 = the service alone"),
               param_double("admission", 1, {.min = 0},
                            "robust: weight of the wait for a running slot when the worker's "
                            "running sequences are at their cap (waiting ahead x EWMA of "
                            "end-to-end latency / the cap, in token-cost units); 0 = off"),
               param_choice("bias_learns", "e2e", {"e2e", "ttft"},
                            "robust: the latency whose residual the bias learns: end-to-end in "
                            "seconds (Algorithm 2), or the time to first token in the "
                            "estimate's token-cost seconds (x token cost / the cluster's prefill "
                            "cost per token)"),
               param_choice("backlog_of", "uncached", {"cluster", "tracked", "uncached"},
                            "robust: the backlog the worker reports (cluster: every waiting "
                            "prompt in full), the router's record of the uncached tokens it "
                            "sent, draining at the cluster's prefill rate (tracked, as dynamo's "
                            "prefill_load=tracked), or the report less the tokens its tree "
                            "matched for the requests still waiting (uncached)")},
    .variants = {"token_cost_ms=-1", "max_tree_tokens=64,decay=1", "variant=paper",
                 "guard_inflight=1,guard_prefill_tokens=64,bias_shrink=0.5,bias_cap_s=0.1,"
                 "queue_tau=1",
                 // the robust defaults before the backlog (docs/routers.md, lbgr), the backlog
                 // at full weight, the other two backlogs, and the defaults before the marginal
                 // cost and the wait for a running slot; the bias learned on TTFT
                 "queue_tau_of=e2e,bias_cap_ttft=-1,backlog_weight=0,max_tree_tokens=16777216",
                 "backlog_weight=1", "backlog_of=tracked,backlog_weight=0.5", "backlog_of=cluster",
                 "service_load=0,admission=0", "bias_learns=ttft"},
    .max_workers = ApproxTree::kMaxWorkers,
});

}  // namespace
}  // namespace kvpolicy
