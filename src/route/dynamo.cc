// dynamo: NVIDIA Dynamo's KV router cost (docs/routers.md, "dynamo"): per worker,
//   prefill = max(0, (prompt tokens + prefill load) / B - credit),
//   credit  = overlap_score_credit x decay x HBM-matched blocks + host_cache_hit_weight x DRAM
//             blocks after them + disk_cache_hit_weight x SSD/remote blocks after those,
//   cost    = overlap_weight x prefill + decode blocks;
// the least cost (ties to the smaller cache, then the lower index), or a seeded softmax draw
// over the costs with router_temperature > 0. The prefill load is the worker's reported queued
// prefill tokens, or the router's own record of what it routed (Dynamo's active sequences),
// the oldest decaying as its modelled prefill runs.
// Cost: O(workers) cached-prefix queries (events=exact) or O(prompt blocks + workers) (approx),
// plus O(1) amortized per tracked prefill.
#include <algorithm>
#include <cmath>
#include <memory>

#include "approx_tree.h"
#include "prefill_tracker.h"
#include "route_common.h"

namespace kvpolicy {
namespace {

class Dynamo final : public Router {
 public:
  Dynamo(const RouterContext& ctx, const Params& p)
      : overlap_weight_(p.get_double("overlap_weight")),
        credit_(p.get_double("overlap_score_credit")),
        credit_decay_(p.get_double("overlap_score_credit_decay")),
        host_weight_(p.get_double("host_cache_hit_weight")),
        disk_weight_(p.get_double("disk_cache_hit_weight")),
        temperature_(p.get_double("router_temperature")),
        tracked_(p.get_string("prefill_load") == "tracked"),
        decay_prefill_(p.get_string("prefill_decay") == "linear"),
        rng_(ctx.seed ^ 0x64796e616d6fULL),
        prefills_(ctx.workers, ctx.prefill_seconds_per_token, decay_prefill_) {
    if (p.get_string("events") == "approx") {
      // Dynamo's ApproxKvIndexer: what was routed is assumed cached until its TTL runs out.
      auto ttl = static_cast<Time>(p.get_double("ttl_s") * double(kMicrosPerSecond));
      tree_ = std::make_unique<ApproxTree>(ctx.workers, ctx.block_tokens, UINT64_MAX, ttl);
    }
  }

  WorkerId route(const RequestView& r, const ClusterView& cluster) override {
    const uint32_t n = cluster.workers();
    const double block = cluster.block_tokens();
    const Time now = cluster.now();
    if (tree_) tree_->match(r.blocks, now, matched_);
    load_.assign(n, 0);
    uint64_t min_load = UINT64_MAX;
    for (WorkerId w = 0; w < n; ++w) {
      load_[w] = tracked_ ? prefills_.tokens(w, now) : cluster.load(w).queued_prefill_tokens;
      min_load = std::min(min_load, load_[w]);
    }
    const double request_blocks = std::ceil(double(r.prompt_tokens) / block);
    cost_.assign(n, 0);
    credited_.assign(n, 0);
    for (WorkerId w = 0; w < n; ++w) {
      uint64_t blocks = tree_ ? matched_[w] : cluster.cached_prefix_blocks(w, r);
      uint64_t matched = std::min<uint64_t>(blocks * cluster.block_tokens(), r.prompt_tokens);
      // Overlap credit decays on a worker whose prefill load exceeds the least loaded one's,
      // measured in this request's blocks (0 = no decay, Dynamo's default).
      double decay = 1.0;
      if (credit_decay_ > 0 && request_blocks > 0)
        decay =
            1.0 / (1.0 + credit_decay_ * (double(load_[w] - min_load) / block) / request_blocks);
      double credit_tokens = credit_ * decay * double(matched);
      if ((host_weight_ > 0 || disk_weight_ > 0) && matched < r.prompt_tokens) {
        auto lower = cluster.lower_tier_prefix_blocks(w, r);
        uint64_t host = std::min<uint64_t>(uint64_t{lower[0]} * cluster.block_tokens(),
                                           r.prompt_tokens - matched);
        uint64_t disk = std::min<uint64_t>(uint64_t{lower[1]} * cluster.block_tokens(),
                                           r.prompt_tokens - matched - host);
        credit_tokens += host_weight_ * double(host) + disk_weight_ * double(disk);
        credited_[w] = host + disk > 0;
      }
      double prefill = std::max(
          0.0, (double(r.prompt_tokens) - credit_tokens) / block + double(load_[w]) / block);
      cost_[w] = overlap_weight_ * prefill + double(cluster.load(w).active_blocks);
    }
    WorkerId best = temperature_ > 0 ? sample() : least(cluster);
    if (credited_[best]) ++tier_credited_;
    if (tree_) tree_->insert(best, r.blocks, now);
    if (tracked_) track(best, r, cluster, now);
    return best;
  }

  void on_complete(const RequestView& r, WorkerId, const Completion&,
                   const ClusterView& cluster) override {
    if (tracked_) prefills_.complete(r.index, cluster.now());
  }

  PolicyStats stats() const override {
    return {{"argmin_decisions", double(argmin_)},
            {"softmax_decisions", double(softmax_)},
            {"ties_to_smaller_cache", double(ties_by_cache_)},
            {"tier_credited_decisions", double(tier_credited_)},
            {"tracked_prefills_expired", double(prefills_.expired())},
            {"tracked_prefills_completed_early", double(prefills_.completed_early())}};
  }

  double in_flight_state() const override { return prefills_.in_flight(); }

 private:
  void track(WorkerId w, const RequestView& r, const ClusterView& cluster, Time now) {
    uint64_t matched = tree_ ? matched_[w] : cluster.cached_prefix_blocks(w, r);
    matched = std::min<uint64_t>(matched * cluster.block_tokens(), r.prompt_tokens);
    prefills_.add(w, r.index, r.prompt_tokens - matched, now);  // none: Dynamo records none
  }

  // The least cost; ties to the worker with the smaller cache, then the lower index.
  WorkerId least(const ClusterView& cluster) {
    ++argmin_;
    WorkerId best = 0;
    bool tie_by_cache = false;
    for (WorkerId w = 1; w < cost_.size(); ++w) {
      if (cost_[w] < cost_[best]) {
        best = w;
        tie_by_cache = false;
      } else if (cost_[w] == cost_[best] &&
                 cluster.load(w).cached_blocks < cluster.load(best).cached_blocks) {
        best = w;
        tie_by_cache = true;
      }
    }
    if (tie_by_cache) ++ties_by_cache_;
    return best;
  }

  // Dynamo's softmax over costs: p(w) ~ exp(-(cost(w) - min) / ((max - min) x temperature)),
  // uniform when every cost is equal; one seeded draw per decision.
  WorkerId sample() {
    ++softmax_;
    auto [lo, hi] = std::minmax_element(cost_.begin(), cost_.end());
    double min = *lo, range = *hi - *lo;
    probs_.resize(cost_.size());
    double sum = 0;
    for (size_t w = 0; w < cost_.size(); ++w) {
      probs_[w] = range > 0 ? std::exp(-(cost_[w] - min) / (range * temperature_)) : 1.0;
      sum += probs_[w];
    }
    double u = double(rng_.next() >> 11) * 0x1.0p-53 * sum;
    double cumulative = 0;
    for (size_t w = 0; w < probs_.size(); ++w) {
      cumulative += probs_[w];
      if (u < cumulative) return static_cast<WorkerId>(w);
    }
    return static_cast<WorkerId>(probs_.size() - 1);
  }

  double overlap_weight_, credit_, credit_decay_, host_weight_, disk_weight_, temperature_;
  bool tracked_, decay_prefill_;
  SplitMix64 rng_;
  std::unique_ptr<ApproxTree> tree_;  // only with events=approx
  std::vector<uint32_t> matched_;
  std::vector<uint64_t> load_;
  std::vector<double> cost_, probs_;
  std::vector<char> credited_;
  PrefillTracker prefills_;  // prefill_load=tracked
  uint64_t argmin_ = 0, softmax_ = 0, ties_by_cache_ = 0, tier_credited_ = 0;
};

const bool registered = register_router<Dynamo>({
    .name = "dynamo",
    .summary = "least overlap_weight x max(0, (prompt + prefill load) / B - credit) + decode "
               "blocks, credit = overlap_score_credit x decay x HBM-cached blocks + tier "
               "weights x DRAM/SSD blocks after them; ties to the smaller cache; "
               "router_temperature > 0: seeded softmax over costs",
    .source = "NVIDIA Dynamo KV router (KvRouterConfig defaults; KV events, or its approximate "
              "indexer with a TTL; its active-sequence prefill tracking)",
    .params = {param_double("overlap_weight", 1.0, {.min = 0},
                            "weight of the prefill blocks against the decode blocks (Dynamo's "
                            "prefill_load_scale, formerly overlap_score_weight)"),
               param_double("overlap_score_credit", 1.0, {.min = 0},
                            "credit per HBM-cached block of the prompt, in blocks"),
               param_double("overlap_score_credit_decay", 0.0, {.min = 0},
                            "the credit is divided by 1 + this x (prefill load - least prefill "
                            "load) / prompt blocks (0: no decay)"),
               param_double("host_cache_hit_weight", 0.75, {.min = 0},
                            "credit per block found next in host DRAM"),
               param_double("disk_cache_hit_weight", 0.25, {.min = 0},
                            "credit per block found next on SSD or in the remote pool"),
               param_double("router_temperature", 0.0, {.min = 0},
                            "0: the least cost; > 0: a seeded softmax draw over costs scaled to "
                            "their range"),
               param_choice("prefill_load", "cluster", {"cluster", "tracked"},
                            "prefill load: the worker's reported queued prefill tokens (cluster), "
                            "or the router's record of the uncached tokens it routed (tracked, "
                            "Dynamo's active sequences)"),
               param_choice("prefill_decay", "linear", {"linear", "none"},
                            "prefill_load=tracked: the oldest prefill falls linearly over its "
                            "modelled time (tokens x the cluster's prefill cost per token) and "
                            "leaves then (linear), or counts in full until its request completes"),
               param_choice("events", "exact", {"exact", "approx"},
                            "matches from the workers' KV events (exact), or from the router's "
                            "own tree of what it routed (approx)"),
               param_double("ttl_s", 120, {.min = 0, .min_exclusive = true},
                            "events=approx: a routed prefix is assumed cached this long, s")},
    // events=approx's tree rejects more than 64 workers; the exact mode takes any number.
    .variants = {"events=approx", "events=approx,ttl_s=0.05", "overlap_weight=0",
                 "overlap_score_credit=0.5,overlap_score_credit_decay=2", "prefill_load=tracked",
                 "prefill_load=tracked,prefill_decay=none", "router_temperature=0.5",
                 "events=approx,prefill_load=tracked"},
    .randomized_with = [](const Params& p) { return p.get_double("router_temperature") > 0; },
});

}  // namespace
}  // namespace kvpolicy
