// HF ("heuristic-filtered"): evicts the largest predicted next access among the c least
// recently used evictable leaves. Source: LCR paper's baseline (as in HALP, MAT; c = 4).
// Cost: O(1) per access plus one prediction; O(c) per eviction (recency list), O(log n) for a
// c above `list_max` (order-statistic treap).
#include "kvpolicy/policy/walk.h"
#include "learned_common.h"

namespace kvpolicy {
namespace {

// kIndex: a recency list for a small c, an order-statistic treap for a large one (the victims
// are the same).
template <learned::LeafIndex kIndex>
class Hf final : public InlinedPolicy<Hf<kIndex>, learned::LearnedPolicy<kIndex>> {
 public:
  static constexpr PolicyHooks kHooks{};
  Hf(const PolicyContext& ctx, const Params& params)
      : InlinedPolicy<Hf, learned::LearnedPolicy<kIndex>>(ctx, params),
        c_(size_t(params.get_int("c"))) {}
  NodeId victim(Time) override {
    if (this->evictable() == 0) return kNoNode;
    return this->choose(c_);
  }

 private:
  size_t c_;
};

std::unique_ptr<Policy> make_hf(const PolicyContext& ctx, const Params& params) {
  if (params.get_int("c") <= params.get_int("list_max"))
    return std::make_unique<Hf<learned::kList>>(ctx, params);
  return std::make_unique<Hf<learned::kTreap>>(ctx, params);
}

const bool registered = register_policy<Hf<learned::kList>>({
    .name = "hf",
    .summary = "heuristic-filtered: the furthest predicted next access among the c LRU leaves",
    .paper = "LCR paper baseline (as in HALP, MAT)",
    .params = learned::with(
        learned::common_params(),
        {param_int("c", 4, {.min = 1}, "LRU candidates scored per eviction (HALP's 4)"),
         param_int("list_max", 32, {.min = 0},
                   "c up to this walks a recency list of leaves (O(c)); a larger c uses a treap "
                   "(O(log n)); the victims are the same")}),
    .variants = {"list_max=0", "c=1", "predictor=noisy,p=0.3"},
    .needs_future = true,
    .needs_future_with = learned::predictor_needs_future,
    .make = make_hf,
});

}  // namespace
}  // namespace kvpolicy
