// GDSF: evicts the evictable leaf with the lowest priority clock + frequency x cost / size,
// where the clock is the priority of the last victim (so old priorities age out).
// Source: Cherkasova, "Improving WWW proxies performance with Greedy-Dual-Size-Frequency
// caching policy", HP Labs 1998. Cost: O(1) per access; O(log n) per eviction and leaf change.
#include <bit>
#include <compare>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"
#include "leaf_heap.h"

namespace kvpolicy {
namespace {

// Ordered by the priority (its bits: a non-negative double's bits sort like the double), then
// the last access request (older first). The frequency rides along, so that an access touches
// one place. Packed: a heap entry is 20 bytes.
#pragma pack(push, 4)
struct GdsfKey {
  uint64_t priority;  // computed at the last access
  uint32_t last;      // last access request
  uint32_t freq;      // accesses since insertion
  std::strong_ordering operator<=>(const GdsfKey& o) const {
    return priority != o.priority ? priority <=> o.priority : last <=> o.last;
  }
};
#pragma pack(pop)
static_assert(sizeof(HeapEntry<GdsfKey>) == 20);

// Size is one block. Cost is the block's recompute cost: by default the cost model's FLOPs to
// prefill one block after `depth` cached ones, relative to the first block (projections and MLP
// are the same for every block, attention grows with the context before it).
class Gdsf final : public InlinedPolicy<Gdsf> {
 public:
  static constexpr PolicyHooks kHooks{};
  Gdsf(const PolicyContext& ctx, const Params& p) : tree_(ctx.tree), heap_({ctx.tree}) {
    std::string cost = p.get_string("cost");
    if (cost == "model") {
      model_ = ctx.cost_model ? *ctx.cost_model : CostModel();
      block_tokens_ = ctx.block_tokens;
      use_model_ = true;
    } else if (cost == "uniform") {
      attention_ratio_ = 0;
    } else {  // depth
      attention_ratio_ = p.get_double("attention_ratio");
    }
  }

  void reserve_ids(size_t ids) override { heap_.resize(ids); }
  void on_request_begin(const RequestView&) override { ++clock_; }
  void on_access(NodeId n, const AccessInfo& info) override {
    GdsfKey& k = heap_.stored_key(n);  // n is pinned
    k.freq = info.reused() ? k.freq + 1 : 1;
    k.priority = std::bit_cast<uint64_t>(inflation_ + k.freq * cost(tree_->depth(n)));
    k.last = clock_;
  }
  void on_evictable(NodeId n) override { heap_.insert(n); }
  void on_unevictable(NodeId n) override { heap_.erase(n); }
  NodeId victim(Time) override { return heap_.top(); }
  void on_removed(NodeId n, Removal why) override {
    // The clock moves to each victim's priority (the minimum, so it never decreases); a DRAM
    // block promoted to HBM (or dropped by the owner) was no victim and does not move it.
    // (Copied out first: the packed heap entry's field may sit unaligned, and bit_cast takes a
    // reference.)
    if (is_victim(why)) {
      uint64_t priority = heap_.key(n).priority;
      inflation_ = std::bit_cast<double>(priority);
    }
    heap_.erase(n);
  }
  size_t memory_bytes() const override { return heap_.memory_bytes(); }

 private:
  double cost(uint32_t depth) {
    if (!use_model_) return 1.0 + attention_ratio_ * depth;
    // Memoized per depth: the cost model's FLOP count is not on the hot path after warm-up.
    while (depth >= cost_by_depth_.size()) {
      uint64_t cached = uint64_t{block_tokens_} * cost_by_depth_.size();
      cost_by_depth_.push_back(model_.prefill_flops(block_tokens_, cached) /
                               model_.prefill_flops(block_tokens_, 0));
    }
    return cost_by_depth_[depth];
  }

  const PrefixTree* tree_;
  bool use_model_ = false;
  CostModel model_;
  uint32_t block_tokens_ = 16;
  std::vector<double> cost_by_depth_;
  double attention_ratio_ = 0;
  double inflation_ = 0;  // GDSF's clock L
  uint32_t clock_ = 0;    // requests seen: a logical access time for ties
  // Holds every block's key.
  LeafHeap<GdsfKey, DeeperOnTies<GdsfKey>> heap_;
};

const bool registered = register_policy<Gdsf>({
    .name = "gdsf",
    .summary = "lowest clock + frequency x cost / size (deeper first on ties)",
    .paper = "Cherkasova, Greedy-Dual-Size-Frequency, HP Labs HPL-98-69 (1998)",
    .params = {param_choice("cost", "model", {"model", "depth", "uniform"},
                            "block cost: model = the cost model's prefill FLOPs of the block at "
                            "its depth (relative to the first block), depth = 1 + "
                            "attention_ratio x depth, uniform = 1"),
               param_double("attention_ratio", 0.05, {.min = 0},
                            "attention cost per block of context (cost=depth)")},
    .variants = {"cost=uniform", "cost=depth"},
});

}  // namespace
}  // namespace kvpolicy
