// LRU: evicts the least recently accessed evictable leaf, deeper first on ties.
// Source: the default of vLLM, SGLang and Dynamo (docs/policies.md).
// Cost: O(1) per access; O(1) amortised per eviction (see victim()).
#include "kvpolicy/core/order/intrusive_list.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"

namespace kvpolicy {
namespace {

// One recency list over all cached blocks, oldest first. A request's path is placed at the
// tail deepest-first (each block just before its parent), so every block stands before its
// parent: the list's head is always a leaf, and ties in recency go to the deeper block.
//
// The victim is the first evictable block of that list. Blocks the scan finds unevictable
// (pinned, or a parent whose children a retention wrapper withholds: docs/policies.md
// "Retention hints") are parked: kept in the order but taken off a second list, the candidates,
// until they become evictable again; so no eviction walks past them twice.
class Lru final : public InlinedPolicy<Lru> {
 public:
  static constexpr PolicyHooks kHooks{.prefetch_for_access = true};
  explicit Lru(const PolicyContext& ctx) : tree_(*ctx.tree) {}
  void reserve_ids(size_t ids) override {
    list_.resize(ids);
    cand_.resize(ids);
  }

  // The hooks are always_inline into the replay (InlinedPolicy): faster than virtual calls
  // (measured: docs/experiments.md, The replay loop).
  [[gnu::always_inline]] void on_access(NodeId n, const AccessInfo& info) override {
    if (list_.contains(n)) {
      list_.erase(n);
      if (cand_.contains(n)) cand_.erase(n);
    }
    NodeId parent = tree_.parent(n);
    // The parent is absent only when it is in another tier (n was demoted to this one).
    if (info.position == 0 || parent == kNoNode || !list_.contains(parent)) {
      list_.push_back(n);
      cand_.push_back(n);
    } else {
      list_.insert_before(n, parent);
      if (cand_.contains(parent)) {
        cand_.insert_before(n, parent);
      } else {
        unpark(n);
      }
    }
  }
  [[gnu::always_inline]] void prefetch_for_access(NodeId n) const { list_.prefetch(n); }
  void on_evictable(NodeId n) override {
    if (list_.contains(n) && !cand_.contains(n)) unpark(n);
  }
  void on_unevictable(NodeId) override {}
  // In replay only the current request's blocks (at the tail) are pinned, so the scan stops at
  // once; a block it parks returns at its on_evictable.
  [[gnu::always_inline]] NodeId victim(Time) override {
    for (NodeId n = cand_.front(); n != kNoNode;) {
      if (tree_.is_evictable(n)) return n;
      NodeId next = cand_.next(n);
      cand_.erase(n);
      n = next;
    }
    return kNoNode;
  }
  [[gnu::always_inline]] void on_removed(NodeId n, Removal) override {
    if (cand_.contains(n)) {
      prefetch_next_victims(tree_, cand_, n);
      cand_.erase(n);
    }
    list_.erase(n);
  }
  size_t memory_bytes() const override { return list_.memory_bytes() + cand_.memory_bytes(); }

 private:
  // Puts n (in the order, parked) back among the candidates at its place: next to the nearest
  // candidate on either side in the order, looking both ways at once.
  void unpark(NodeId n) {
    NodeId after = list_.next(n), before = list_.prev(n);
    while (true) {
      if (after == kNoNode) return cand_.push_back(n);
      if (cand_.contains(after)) return cand_.insert_before(n, after);
      if (before == kNoNode) return cand_.push_front(n);
      if (cand_.contains(before)) {
        NodeId b = cand_.next(before);
        return b == kNoNode ? cand_.push_back(n) : cand_.insert_before(n, b);
      }
      after = list_.next(after);
      before = list_.prev(before);
    }
  }

  const PrefixTree& tree_;
  IntrusiveList list_;  // every cached block, in LRU's order
  IntrusiveList cand_;  // the same order without the parked blocks
};

const bool registered = register_policy<Lru>({
    .name = "lru",
    .summary = "least recently used evictable leaf (deeper first on ties)",
    .paper = "classic; default of vLLM, SGLang, Dynamo",
});

}  // namespace
}  // namespace kvpolicy
