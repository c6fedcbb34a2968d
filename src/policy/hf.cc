// HF ("heuristic-filtered"): evicts the largest predicted next access among the c least
// recently used evictable leaves. Source: LCR paper's baseline (as in HALP, MAT; c = 4).
// Cost: O(1) per access plus one prediction; O(c) per eviction (recency list), O(log n) for a
// c above `list_max` (order-statistic treap).
#include "cache_access.h"
#include "learned_common.h"

namespace kvpolicy {
namespace {

class Hf final : public InlinedPolicy<Hf, learned::LearnedPolicy> {
 public:
  Hf(const PolicyContext& ctx, const Params& params)
      : InlinedPolicy(ctx, params, index_for(params)), c_(size_t(params.get_int("c"))) {}
  NodeId victim(Time) override {
    if (evictable() == 0) return kNoNode;
    count_eviction();
    return choose(c_);
  }

 private:
  static unsigned index_for(const Params& params) {
    int64_t c = params.get_int("c"), list_max = params.get_int("list_max");
    if (c < 1) throw ConfigError("hf: c must be at least 1");
    if (list_max < 0) throw ConfigError("hf: list_max must be >= 0");
    return c <= list_max ? kList : kTreap;
  }
  size_t c_;
};

PolicyRegistrar registrar({
    .name = "hf",
    .summary = "heuristic-filtered: the furthest predicted next access among the c LRU leaves",
    .paper = "LCR paper baseline (as in HALP, MAT)",
    .params = learned::with(
        learned::common_params(),
        {{"c", "4", "LRU candidates scored per eviction (HALP's 4)"},
         {"list_max", "32",
          "c up to this walks a recency list of leaves (O(c)); a larger c uses a treap "
          "(O(log n)); the victims are the same"}}),
    // Static flag: the oracle is computed for every predictor; gbm ignores it.
    .needs_oracle = true,
    .make = [](const PolicyContext& ctx, const Params& p) -> std::unique_ptr<Policy> {
      return std::make_unique<Hf>(ctx, p);
    },
});

}  // namespace
}  // namespace kvpolicy
