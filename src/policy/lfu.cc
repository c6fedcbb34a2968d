// LFU: evicts the evictable leaf with the fewest accesses; ties by least recent access, then
// the deeper block. Source: classic; SGLang's `lfu` (hit count, last access), with hits counted.
// Cost: O(1) per access; O(log n) per eviction and per leaf change, O(1) down a chain.
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"
#include "leaf_heap.h"

namespace kvpolicy {
namespace {

// Access count << 32 | last access request (a request counter).
using LfuKey = uint64_t;

// A block's key only changes while it is accessed, i.e. while pinned and out of the heap, so
// the heap holds just the evictable leaves and is keyed once when a leaf becomes evictable.
// Per block only that key is kept, in the heap's slots.
class Lfu final : public InlinedPolicy<Lfu> {
 public:
  static constexpr PolicyHooks kHooks{};
  explicit Lfu(const PolicyContext& ctx) : heap_({ctx.tree}) {}
  void reserve_ids(size_t ids) override { heap_.resize(ids); }

  void on_request_begin(const RequestView&) override { ++clock_; }
  void on_access(NodeId n, const AccessInfo& info) override {
    LfuKey& k = heap_.stored_key(n);  // n is pinned
    // An evicted block comes back with no history.
    uint32_t count = info.reused() ? static_cast<uint32_t>(k >> 32) + 1 : 1;
    k = (LfuKey{count} << 32) | clock_;
  }
  void on_evictable(NodeId n) override { heap_.insert(n); }
  void on_unevictable(NodeId n) override { heap_.erase(n); }
  NodeId victim(Time) override { return heap_.top(); }
  void on_removed(NodeId n, Removal) override { heap_.erase(n); }
  size_t memory_bytes() const override { return heap_.memory_bytes(); }

 private:
  uint32_t clock_ = 0;  // requests seen: a logical access time
  LeafHeap<LfuKey, DeeperOnTies<LfuKey>> heap_;
};

const bool registered = register_policy<Lfu>({
    .name = "lfu",
    .summary = "fewest accesses, ties by least recent access, then deeper first",
    .paper = "classic; SGLang radix-cache lfu (hit count, last access)",
});

}  // namespace
}  // namespace kvpolicy
