// dynamo: the worker of least cost = overlap_weight x prefill blocks (the prompt's uncached
// part there, plus its queued prefills) + decode blocks (its active sequences); ties to the
// worker with the smaller cache, then the lower index.
// Source: NVIDIA Dynamo's KV router (KvScheduler's default cost, overlap_score_weight 1.0).
// Cost: O(workers) cached-prefix queries (events=exact) or O(prompt blocks + workers) (approx).
#include <algorithm>
#include <memory>

#include "approx_tree.h"
#include "route_common.h"

namespace kvpolicy {
namespace {

class Dynamo final : public Router {
 public:
  Dynamo(const RouterContext& ctx, const Params& p)
      : overlap_weight_(p.get_double("overlap_weight")) {
    if (p.get_string("events") == "approx") {
      // Dynamo's ApproxKvIndexer: what was routed is assumed cached until its TTL runs out.
      auto ttl = static_cast<Time>(p.get_double("ttl_s") * double(kMicrosPerSecond));
      tree_ = std::make_unique<ApproxTree>(ctx.workers, ctx.block_tokens, UINT64_MAX, ttl);
    }
  }

  WorkerId route(const RequestView& r, const ClusterView& cluster) override {
    const double block = cluster.block_tokens();
    if (tree_) tree_->match(r.blocks, cluster.now(), matched_);
    WorkerId best = 0;
    double best_cost = 0;
    for (WorkerId w = 0; w < cluster.workers(); ++w) {
      uint64_t blocks = tree_ ? matched_[w] : cluster.cached_prefix_blocks(w, r);
      uint64_t matched_tokens =
          std::min<uint64_t>(blocks * cluster.block_tokens(), r.prompt_tokens);
      const WorkerLoad& load = cluster.load(w);
      double prefill = double(r.prompt_tokens - matched_tokens) / block +
                       double(load.queued_prefill_tokens) / block;
      double cost = overlap_weight_ * prefill + double(load.active_blocks);
      if (w == 0 || cost < best_cost ||
          (cost == best_cost && load.cached_blocks < cluster.load(best).cached_blocks)) {
        best = w;
        best_cost = cost;
      }
    }
    if (tree_) tree_->insert(best, r.blocks, cluster.now());
    return best;
  }

 private:
  double overlap_weight_;
  std::unique_ptr<ApproxTree> tree_;  // only with events=approx
  std::vector<uint32_t> matched_;
};

const bool registered = register_router<Dynamo>({
    .name = "dynamo",
    .summary = "least overlap_weight x prefill blocks (uncached prompt + queued prefills) + "
               "decode blocks; ties to the smaller cache, then the lower index",
    .source = "NVIDIA Dynamo KV router (KV events, or its approximate indexer with a TTL)",
    .params = {param_double("overlap_weight", 1.0, {.min = 0},
                            "weight of the prefill blocks against the decode blocks"),
               param_choice("events", "exact", {"exact", "approx"},
                            "matches from the workers' KV events (exact), or from the router's "
                            "own tree of what it routed (approx)"),
               param_double("ttl_s", 120, {.min = 0, .min_exclusive = true},
                            "events=approx: a routed prefix is assumed cached this long, s")},
    // events=approx's tree rejects more than 64 workers; the exact mode takes any number.
    .variants = {"events=approx", "events=approx,ttl_s=0.05", "overlap_weight=0"},
});

}  // namespace
}  // namespace kvpolicy
