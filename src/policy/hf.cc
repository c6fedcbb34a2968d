// HF ("heuristic-filtered"): evicts the largest predicted next access among the c least
// recently used evictable leaves. Source: LCR paper's baseline (as in HALP, MAT; c = 4).
// Cost: O(1) per access plus one prediction; O(log n) per eviction (order-statistic treap).
#include "learned_common.h"

namespace kvpolicy {
namespace {

class Hf final : public learned::LearnedPolicy {
 public:
  Hf(const PolicyContext& ctx, const Params& params) : LearnedPolicy(ctx, params, kTreap) {
    int64_t c = params.get_int("c");
    if (c < 1) throw ConfigError("hf: c must be at least 1");
    c_ = size_t(c);
  }
  NodeId victim(Time) override {
    if (evictable() == 0) return kNoNode;
    count_eviction();
    return choose(c_);
  }

 private:
  size_t c_;
};

PolicyRegistrar registrar({
    .name = "hf",
    .summary = "heuristic-filtered: the furthest predicted next access among the c LRU leaves",
    .paper = "LCR paper baseline (as in HALP, MAT)",
    .params = learned::with(learned::common_params(),
                            {{"c", "4", "LRU candidates scored per eviction (HALP's 4)"}}),
    // Static flag: the oracle is computed for every predictor; gbm ignores it.
    .needs_oracle = true,
    .make = [](const PolicyContext& ctx, const Params& p) -> std::unique_ptr<Policy> {
      return std::make_unique<Hf>(ctx, p);
    },
});

}  // namespace
}  // namespace kvpolicy
