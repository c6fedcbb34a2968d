// Priority then recency: evicts the evictable leaf of the lowest priority, LRU within one
// priority, then the deeper block. A block's priority comes from the requests that use it.
// Source: SGLang's radix-cache PriorityStrategy (priority, last_access_time) and TensorRT-LLM's
// KV cache retention priorities (docs/policies.md). Cost: O(1) per access; O(log n) per eviction
// and per leaf change.
#include <algorithm>
#include <cstdint>

#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"
#include "leaf_heap.h"

namespace kvpolicy {
namespace {

// How a cached block's priority follows the requests that reach it.
enum class Combine {
  kMax,   // SGLang: the highest priority of any request that reached it while cached
  kLast,  // TensorRT-LLM: each claim overrides, so the last request's priority
};

// Key: priority (sign bit flipped, so it sorts as unsigned) << 32 | last access request.
// With every priority equal this is the last access alone: the order of lru.
class Priority final : public InlinedPolicy<Priority> {
 public:
  static constexpr PolicyHooks kHooks{};
  Priority(const PolicyContext& ctx, const Params& p) : heap_({ctx.tree}) {
    combine_ = p.get_string("combine") == "last" ? Combine::kLast : Combine::kMax;
  }
  void reserve_ids(size_t ids) override { heap_.resize(ids); }

  void on_request_begin(const RequestView&) override { ++clock_; }
  void on_access(NodeId n, const AccessInfo& info) override {
    uint64_t& k = heap_.stored_key(n);  // n is pinned
    uint32_t mine = static_cast<uint32_t>(info.priority) ^ 0x80000000u;
    uint32_t prio = mine;
    // A block new to this tier takes the request's priority whatever it had before.
    if (info.reused() && combine_ == Combine::kMax) prio = std::max(mine, uint32_t(k >> 32));
    k = uint64_t{prio} << 32 | clock_;
  }
  void on_evictable(NodeId n) override { heap_.insert(n); }
  void on_unevictable(NodeId n) override { heap_.erase(n); }
  NodeId victim(Time) override { return heap_.top(); }
  void on_removed(NodeId n, Removal) override { heap_.erase(n); }
  size_t memory_bytes() const override { return heap_.memory_bytes(); }

 private:
  Combine combine_ = Combine::kMax;
  uint32_t clock_ = 0;  // requests seen: a logical access time
  LeafHeap<uint64_t, DeeperOnTies<uint64_t>> heap_;
};

const bool registered = register_policy<Priority>({
    .name = "priority",
    .summary = "lowest request priority first (the trace's priority column; none: lru), LRU "
               "within one priority, then deeper first",
    .paper = "SGLang radix-cache priority (priority, last_access_time); TensorRT-LLM KV cache "
             "retention priorities",
    .params = {param_choice("combine", "max", {"max", "last"},
                            "a cached block's priority: max = the highest of the requests that "
                            "reached it (SGLang), last = the last request's (TensorRT-LLM's "
                            "claim overrides)")},
    .variants = {"combine=last"},
});

}  // namespace
}  // namespace kvpolicy
