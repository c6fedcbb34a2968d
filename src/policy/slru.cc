// SLRU as SGLang ships it: blocks hit fewer than `protected_threshold` times (probationary) are
// evicted before protected ones; LRU within each segment, then the deeper block.
// Source: SGLang's radix-cache SLRUStrategy, priority (hit_count >= threshold, last_access_time)
// (docs/policies.md). Cost: O(1) per access; O(log n) per eviction and per leaf change.
#include <algorithm>
#include <compare>

#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"
#include "leaf_heap.h"

namespace kvpolicy {
namespace {

// A block's hit_count is SGLang's: every request whose path reaches the block adds one, the
// request that inserts it included (so a block seen once has 1). A block evicted and inserted
// again starts at 1. The key orders on (protected, last access request); the count rides along.
struct SlruKey {
  uint32_t last;   // last access, a request counter
  uint32_t count;  // hit_count
  bool is_protected;
  std::strong_ordering operator<=>(const SlruKey& o) const {
    return is_protected != o.is_protected ? is_protected <=> o.is_protected : last <=> o.last;
  }
  bool operator==(const SlruKey& o) const { return (*this <=> o) == 0; }
};

class Slru final : public InlinedPolicy<Slru> {
 public:
  static constexpr PolicyHooks kHooks{};
  Slru(const PolicyContext& ctx, const Params& p)
      : heap_({ctx.tree}), threshold_(static_cast<uint32_t>(p.get_int("protected_threshold"))) {}
  void reserve_ids(size_t ids) override { heap_.resize(ids); }

  void on_request_begin(const RequestView&) override { ++clock_; }
  void on_access(NodeId n, const AccessInfo& info) override {
    SlruKey& k = heap_.stored_key(n);  // n is pinned
    k.count = info.reused() ? std::min(k.count, kMaxCount - 1) + 1 : 1;
    k.is_protected = k.count >= threshold_;
    k.last = clock_;
  }
  void on_evictable(NodeId n) override { heap_.insert(n); }
  void on_unevictable(NodeId n) override { heap_.erase(n); }
  NodeId victim(Time) override { return heap_.top(); }
  void on_removed(NodeId n, Removal) override { heap_.erase(n); }
  size_t memory_bytes() const override { return heap_.memory_bytes(); }

 private:
  static constexpr uint32_t kMaxCount = 0xFFFFFFFF;
  uint32_t clock_ = 0;  // requests seen: a logical access time
  LeafHeap<SlruKey, DeeperOnTies<SlruKey>> heap_;
  uint32_t threshold_;
};

const bool registered = register_policy<Slru>({
    .name = "slru",
    .summary = "probationary blocks (hit fewer than protected_threshold times) before protected "
               "ones, LRU within each, then deeper first",
    .paper = "SGLang radix-cache slru (hit_count >= protected_threshold, last_access_time)",
    .params = {param_int("protected_threshold", 2, {.min = 1, .max = 4294967295.0},
                         "hit_count (requests that reached the block, its inserting one "
                         "included) from which a block is protected")},
    .variants = {"protected_threshold=1", "protected_threshold=4"},
});

}  // namespace
}  // namespace kvpolicy
