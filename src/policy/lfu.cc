// LFU: evicts the evictable leaf with the fewest accesses; ties by least recent access, then
// the deeper block. Source: classic; SGLang's `lfu` (hit count, last access), with hits counted.
// Cost: O(1) per access; O(log n) per eviction and per leaf change, O(1) down a chain.
#include "kvpolicy/policy.h"
#include "leaf_heap.h"

namespace kvpolicy {
namespace {

// Access count in the high word; last access request << 32 | inverted depth in the low word
// (older, then deeper, first). One 128-bit compare keeps the heap's sift loops branch-free.
using LfuKey = unsigned __int128;

// A block's key only changes while it is accessed, i.e. while pinned and out of the heap, so
// the heap holds just the evictable leaves and is keyed once when a leaf becomes evictable.
// Per block only the count and the last access (a request counter, 32 bits) are kept.
class Lfu final : public Policy {
 public:
  explicit Lfu(const PolicyContext& ctx) : tree_(ctx.tree) {}

  void on_request_begin(const RequestView&) override { ++clock_; }
  void on_access(NodeId n, const AccessInfo& info) override {
    if (n >= count_.size()) {
      count_.resize(tree_->id_limit());
      last_.resize(tree_->id_limit());
      heap_.resize(tree_->id_limit());
    }
    count_[n] = info.hit ? count_[n] + 1 : 1;  // an evicted block comes back with no history
    last_[n] = clock_;
  }
  void on_evictable(NodeId n) override {
    heap_.insert(
        n, (LfuKey{count_[n]} << 64) | (uint64_t{last_[n]} << 32) | (UINT32_MAX - tree_->depth(n)));
  }
  void on_unevictable(NodeId n) override { heap_.erase(n); }
  NodeId victim(Time) override { return heap_.top(); }
  void on_removed(NodeId n) override { heap_.erase(n); }
  size_t memory_bytes() const override {
    return (count_.capacity() + last_.capacity()) * 4 + heap_.memory_bytes();
  }

 private:
  const PrefixTree* tree_;
  uint32_t clock_ = 0;  // requests seen: a logical access time
  std::vector<uint32_t> count_, last_;
  LeafHeap<LfuKey> heap_;
};

PolicyRegistrar registrar({
    .name = "lfu",
    .summary = "fewest accesses, ties by least recent access, then deeper first",
    .paper = "classic; SGLang radix-cache lfu (hit count, last access)",
    .params = {},
    .make = [](const PolicyContext& ctx, const Params&) { return std::make_unique<Lfu>(ctx); },
});

}  // namespace
}  // namespace kvpolicy
