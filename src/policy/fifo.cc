// FIFO: evicts the evictable leaf inserted earliest, deeper first on ties.
// Source: classic; a baseline of the WA paper (docs/policies.md).
// Cost: O(1) per access; O(log n) per eviction and per leaf change, O(1) down a chain.
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"
#include "leaf_heap.h"

namespace kvpolicy {
namespace {

// A list in insertion order would keep old shared prefixes (interior nodes, inserted before
// their children) at its head forever, so every eviction would rescan them. Insertion time only
// ever decreases towards the root, so a heap over the evictable leaves alone is exact and small.
class Fifo final : public InlinedPolicy<Fifo> {
 public:
  static constexpr PolicyHooks kHooks{};
  explicit Fifo(const PolicyContext& ctx) : tree_(ctx.tree) {}
  void reserve_ids(size_t ids) override { heap_.resize(ids); }

  void on_request_begin(const RequestView&) override { ++clock_; }
  void on_access(NodeId n, const AccessInfo& info) override {
    // Blocks of one request share an insertion time; the deeper one sorts first.
    if (!info.reused()) heap_.stored_key(n) = (clock_ << 32) | (UINT32_MAX - tree_->depth(n));
  }
  void on_evictable(NodeId n) override { heap_.insert(n); }
  void on_unevictable(NodeId n) override { heap_.erase(n); }
  NodeId victim(Time) override { return heap_.top(); }
  void on_removed(NodeId n, Removal) override { heap_.erase(n); }
  size_t memory_bytes() const override { return heap_.memory_bytes(); }

 private:
  const PrefixTree* tree_;
  uint64_t clock_ = 0;  // requests seen: a logical insertion time
  // Holds every block's key.
  LeafHeap<uint64_t> heap_;
};

const bool registered = register_policy<Fifo>({
    .name = "fifo",
    .summary = "evictable leaf inserted earliest (deeper first on ties)",
    .paper = "classic; a baseline in Wang et al., KVCache Cache in the Wild (2025)",
});

}  // namespace
}  // namespace kvpolicy
