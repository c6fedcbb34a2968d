// cache_aware: when loads are imbalanced, the least-loaded worker; otherwise the worker whose
// approximate tree matches most of the prompt if the match is a large enough share, else the
// worker with the smallest tree. The chosen worker's tree then gains the prompt.
// Source: SGLang router's cache_aware policy, with KVRouting's (RLT paper) thresholds.
// Cost: O(prompt blocks + workers) per request, plus the tree's evictions.
#include <algorithm>

#include "approx_tree.h"
#include "route_common.h"

namespace kvpolicy {
namespace {

class CacheAware final : public Router {
 public:
  CacheAware(const RouterContext& ctx, const Params& p)
      : balance_abs_(static_cast<uint32_t>(p.get_int("balance_abs"))),
        balance_rel_(p.get_double("balance_rel")),
        threshold_(p.get_double("cache_threshold")),
        block_tokens_(ctx.block_tokens),
        tree_(ctx.workers, ctx.block_tokens, static_cast<uint64_t>(p.get_int("max_tree_tokens"))) {}

  WorkerId route(const RequestView& r, const ClusterView& cluster) override {
    WorkerId chosen = choose(r, cluster);
    tree_.insert(chosen, r.blocks, cluster.now());
    return chosen;
  }

  PolicyStats stats() const override {
    return {{"imbalanced_decisions", double(imbalanced_)},
            {"prefix_decisions", double(by_prefix_)},
            {"smallest_tree_decisions", double(by_smallest_)}};
  }

 private:
  WorkerId choose(const RequestView& r, const ClusterView& cluster) {
    uint32_t lo = UINT32_MAX, hi = 0;
    for (WorkerId w = 0; w < cluster.workers(); ++w) {
      lo = std::min(lo, cluster.load(w).in_flight);
      hi = std::max(hi, cluster.load(w).in_flight);
    }
    if (hi - lo > balance_abs_ && double(hi) > balance_rel_ * double(lo)) {
      ++imbalanced_;
      return least_in_flight(cluster);
    }
    tree_.match(r.blocks, cluster.now(), matched_);
    // The longest match; ties to the less loaded, then the lower index.
    WorkerId best = 0;
    for (WorkerId w = 1; w < cluster.workers(); ++w)
      if (matched_[w] > matched_[best] ||
          (matched_[w] == matched_[best] &&
           cluster.load(w).in_flight < cluster.load(best).in_flight))
        best = w;
    uint64_t matched_tokens =
        std::min<uint64_t>(uint64_t{matched_[best]} * block_tokens_, r.prompt_tokens);
    if (r.prompt_tokens > 0 && double(matched_tokens) / r.prompt_tokens > threshold_) {
      ++by_prefix_;
      return best;
    }
    ++by_smallest_;
    WorkerId smallest = 0;
    for (WorkerId w = 1; w < cluster.workers(); ++w)
      if (tree_.tokens(w) < tree_.tokens(smallest)) smallest = w;
    return smallest;
  }

  uint32_t balance_abs_;
  double balance_rel_, threshold_;
  uint32_t block_tokens_;
  ApproxTree tree_;
  std::vector<uint32_t> matched_;
  uint64_t imbalanced_ = 0, by_prefix_ = 0, by_smallest_ = 0;
};

const bool registered = register_router<CacheAware>({
    .name = "cache_aware",
    .summary = "if max - min load > balance_abs and max > balance_rel x min: least loaded; else "
               "the longest match in its approximate tree if match / prompt > cache_threshold, "
               "else the smallest tree",
    .source = "SGLang router (cache_aware), with KVRouting's thresholds (RLT paper)",
    .params = {param_int("balance_abs", 32, {.min = 0},
                         "imbalanced if max - min requests in flight exceeds this ..."),
               param_double(
                   "balance_rel", 1.0001, {.min = 1},
                   "... and max exceeds balance_rel x min (SGLang's launcher: 64, 1.5, with "
                   "cache_threshold 0.3)"),
               param_double("cache_threshold", 0.5, {.min = 0, .max = 1},
                            "route by prefix when the best match covers more than this share of "
                            "the prompt"),
               param_int("max_tree_tokens", int64_t{1} << 24, {.min = 1},
                         "per-worker size of the approximate tree, tokens (SGLang: 2^24 "
                         "characters); LRU leaves go beyond it")},
    .variants = {"balance_abs=0,balance_rel=1", "max_tree_tokens=64", "cache_threshold=0"},
    .max_workers = ApproxTree::kMaxWorkers,
});

}  // namespace
}  // namespace kvpolicy
