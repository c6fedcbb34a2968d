// LRU: evicts the least recently accessed evictable leaf, deeper first on ties.
// Source: the default of vLLM, SGLang and Dynamo (docs/policies.md).
// Cost: O(1) per access; O(1) per eviction in replay (see victim()).
#include "kvpolicy/core/order/intrusive_list.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"

namespace kvpolicy {
namespace {

// One recency list over all cached blocks, oldest first. A request's path is placed at the
// tail deepest-first (each block just before its parent), so every block stands before its
// parent: the list's head is always a leaf, and ties in recency go to the deeper block.
class Lru final : public InlinedPolicy<Lru> {
 public:
  static constexpr PolicyHooks kHooks{.prefetch_for_access = true};
  explicit Lru(const PolicyContext& ctx) : tree_(*ctx.tree) {}
  void reserve_ids(size_t ids) override { list_.resize(ids); }

  // The hooks are always_inline into the replay (InlinedPolicy): faster than virtual calls
  // (measured: docs/experiments.md, The replay loop).
  [[gnu::always_inline]] void on_access(NodeId n, const AccessInfo& info) override {
    if (list_.contains(n)) list_.erase(n);
    NodeId parent = tree_.parent(n);
    // The parent is absent only when it is in another tier (n was demoted to this one).
    if (info.position == 0 || parent == kNoNode || !list_.contains(parent)) {
      list_.push_back(n);
    } else {
      list_.insert_before(n, parent);
    }
  }
  [[gnu::always_inline]] void prefetch_for_access(NodeId n) const { list_.prefetch(n); }
  void on_evictable(NodeId) override {}
  void on_unevictable(NodeId) override {}
  // Only pinned blocks (and their ancestors) can stand before the first evictable leaf; in
  // replay those are the current request's, at the tail, so the scan stops at once.
  [[gnu::always_inline]] NodeId victim(Time) override {
    for (NodeId n = list_.front(); n != kNoNode; n = list_.next(n))
      if (tree_.is_evictable(n)) return n;
    return kNoNode;
  }
  [[gnu::always_inline]] void on_removed(NodeId n, Removal) override {
    prefetch_next_victims(tree_, list_, n);
    list_.erase(n);
  }
  size_t memory_bytes() const override { return list_.memory_bytes(); }

 private:
  const PrefixTree& tree_;
  IntrusiveList list_;
};

const bool registered = register_policy<Lru>({
    .name = "lru",
    .summary = "least recently used evictable leaf (deeper first on ties)",
    .paper = "classic; default of vLLM, SGLang, Dynamo",
});

}  // namespace
}  // namespace kvpolicy
