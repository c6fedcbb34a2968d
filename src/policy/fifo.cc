// FIFO: evicts the evictable leaf inserted earliest, deeper first on ties.
// Source: classic; a baseline of the WA paper (ALGORITHMS.md section 1).
// Cost: O(1) per access; O(log n) per eviction and per leaf change, O(1) down a chain.
#include "cache_access.h"
#include "kvpolicy/policy.h"
#include "leaf_heap.h"

namespace kvpolicy {
namespace {

// A list in insertion order would keep old shared prefixes (interior nodes, inserted before
// their children) at its head forever, so every eviction would rescan them. Insertion time only
// ever decreases towards the root, so a heap over the evictable leaves alone is exact and small.
class Fifo final : public InlinedPolicy<Fifo> {
 public:
  explicit Fifo(const PolicyContext& ctx) : tree_(ctx.tree) {}

  void on_request_begin(const RequestView&) override { ++clock_; }
  void on_access(NodeId n, const AccessInfo& info) override {
    if (n >= heap_.ids()) heap_.resize(tree_->id_limit());
    // Blocks of one request share an insertion time; the deeper one sorts first.
    if (!info.hit) heap_.stored_key(n) = (clock_ << 32) | (UINT32_MAX - tree_->depth(n));
  }
  void on_evictable(NodeId n) override { heap_.insert(n); }
  void on_unevictable(NodeId n) override { heap_.erase(n); }
  NodeId victim(Time) override { return heap_.top(); }
  void on_removed(NodeId n) override { heap_.erase(n); }
  size_t memory_bytes() const override { return heap_.memory_bytes(); }

 private:
  const PrefixTree* tree_;
  uint64_t clock_ = 0;  // requests seen: a logical insertion time
  // Holds every block's key.
  LeafHeap<uint64_t> heap_;
};

PolicyRegistrar registrar({
    .name = "fifo",
    .summary = "evictable leaf inserted earliest (deeper first on ties)",
    .paper = "classic; a baseline in Wang et al., KVCache Cache in the Wild (2025)",
    .params = {},
    .make = [](const PolicyContext& ctx, const Params&) { return std::make_unique<Fifo>(ctx); },
});

}  // namespace
}  // namespace kvpolicy
