// FPB ("follow predictions blindly"): evicts the evictable leaf with the largest predicted
// next access. Source: LCR paper's baseline (as in LRB, 3L-Cache, Raven; "blindoracle").
// Cost: O(1) per access plus one prediction; O(log n) per eviction (indexed heap of leaves).
#include "kvpolicy/policy/walk.h"
#include "learned_common.h"

namespace kvpolicy {
namespace {

class Fpb final : public InlinedPolicy<Fpb, learned::LearnedPolicy<learned::kHeap>> {
 public:
  static constexpr PolicyHooks kHooks{};
  using InlinedPolicy::InlinedPolicy;
  NodeId victim(Time) override {
    if (evictable() == 0) return kNoNode;
    return choose(evictable());
  }
};

const bool registered = register_policy<Fpb>({
    .name = "fpb",
    .summary = "follow predictions blindly: the leaf with the furthest predicted next access",
    .paper = "LCR paper baseline (as in LRB, 3L-Cache, Raven)",
    .params = learned::common_params(),
    // gbm's window and retrain interval small enough that it trains within the contract suite.
    .variants = {"predictor=noisy,p=0.3", "predictor=gbm,retrain=200,window=400"},
    .needs_future = true,
    .needs_future_with = learned::predictor_needs_future,
});

}  // namespace
}  // namespace kvpolicy
