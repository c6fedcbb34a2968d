// LRU: evicts the least recently accessed evictable leaf, deeper first on ties.
// Source: the default of vLLM, SGLang and Dynamo (docs/policies.md).
// Cost: O(1) per access (amortised: order labels are respaced when a gap runs out); O(1)
// amortised per eviction, O(log n) for a block returning to the candidates (see Lru).
#include <algorithm>
#include <functional>
#include <vector>

#include "kvpolicy/core/error.h"
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
// "Retention hints") are parked: kept in the order but taken off the candidates, so no eviction
// walks past them twice. A parked block that becomes evictable, and a block placed just before
// a parked parent (a hint's expiry), return through a heap by order label (each block's label
// increases along the list), O(log n); the victim is the older of the candidate list's first
// evictable block and the heap's. Parking starts the first time a scan of the plain list passes
// kParkAfter unevictable blocks: replay without hints never gets there and keeps one list (the
// second costs it about 15 % of its speed).
class Lru final : public InlinedPolicy<Lru> {
 public:
  static constexpr PolicyHooks kHooks{.prefetch_for_access = true};
  explicit Lru(const PolicyContext& ctx) : tree_(*ctx.tree) {}
  void reserve_ids(size_t ids) override {
    list_.resize(ids);
    if (parking_) cand_.resize(ids);
    if (labelled_) grow_labels(ids);
  }

  // The hooks are always_inline into the replay (InlinedPolicy): faster than virtual calls
  // (measured: docs/experiments.md, The replay loop).
  [[gnu::always_inline]] void on_access(NodeId n, const AccessInfo& info) override {
    if (list_.contains(n)) {
      list_.erase(n);
      if (parking_ && cand_.contains(n)) cand_.erase(n);
      if (labelled_) leave_heap(n);
    }
    NodeId parent = tree_.parent(n);
    // The parent is absent only when it is in another tier (n was demoted to this one).
    if (info.position == 0 || parent == kNoNode || !list_.contains(parent)) {
      if (labelled_) label_[n] = tail_label();
      list_.push_back(n);
      if (parking_) cand_.push_back(n);
    } else {
      if (labelled_) label_[n] = label_before(parent);
      list_.insert_before(n, parent);
      if (!parking_) return;
      if (cand_.contains(parent)) {
        cand_.insert_before(n, parent);
      } else {
        enter_heap(n);
      }
    }
  }
  [[gnu::always_inline]] void prefetch_for_access(NodeId n) const { list_.prefetch(n); }
  void on_evictable(NodeId n) override {
    if (parking_ && list_.contains(n) && !cand_.contains(n) && !(labelled_ && in_heap_[n]))
      enter_heap(n);
  }
  void on_unevictable(NodeId) override {}
  // In replay only the current request's blocks (at the tail) are pinned, so the scan stops at
  // once and the heap stays empty without hints.
  [[gnu::always_inline]] NodeId victim(Time) override {
    if (!parking_) {
      NodeId n = list_.front();
      for (uint32_t passed = 0; n != kNoNode && passed < kParkAfter; n = list_.next(n), ++passed)
        if (tree_.is_evictable(n)) return n;
      if (n == kNoNode) return kNoNode;
      start_parking();
    }
    NodeId a = cand_.front();
    while (a != kNoNode && !tree_.is_evictable(a)) {
      NodeId next = cand_.next(a);
      cand_.erase(a);  // parked
      a = next;
    }
    if (heap_.empty()) return a;
    NodeId b = heap_top();
    if (b == kNoNode) return a;
    return a != kNoNode && label_[a] < label_[b] ? a : b;
  }
  [[gnu::always_inline]] void on_removed(NodeId n, Removal) override {
    if (!parking_) {
      prefetch_next_victims(tree_, list_, n);
    } else if (cand_.contains(n)) {
      prefetch_next_victims(tree_, cand_, n);
      cand_.erase(n);
    }
    if (labelled_) leave_heap(n);
    list_.erase(n);
  }
  size_t memory_bytes() const override {
    return list_.memory_bytes() + cand_.memory_bytes() +
           label_.capacity() * (sizeof(uint64_t) + sizeof(uint32_t) + 1) +
           heap_.capacity() * sizeof(Entry);
  }

 private:
  static constexpr uint64_t kSpacing = uint64_t{1} << 32, kStep = uint64_t{1} << 16;
  static constexpr uint32_t kParkAfter = 64;

  // From the plain list to parking: every block a candidate, none parked yet, the heap empty.
  void start_parking() {
    parking_ = true;
    cand_.resize(list_.ids());
    for (NodeId n = list_.front(); n != kNoNode; n = list_.next(n)) cand_.push_back(n);
  }
  struct Entry {
    uint64_t label;
    NodeId node;
    uint32_t gen;
    bool operator>(const Entry& o) const { return label > o.label; }
  };

  uint64_t tail_label() {
    if (list_.empty()) return kSpacing;
    if (label_[list_.back()] > (uint64_t{1} << 62)) relabel();
    return label_[list_.back()] + kSpacing;
  }
  // A label between the block before `p` and p: just below p along a request's path (steps of
  // kStep), halving the gap when it is smaller; all labels respaced when there is none.
  uint64_t label_before(NodeId p) {
    for (int pass = 0;; ++pass) {
      NodeId q = list_.prev(p);
      uint64_t lo = q == kNoNode ? 0 : label_[q], hi = label_[p];
      if (hi - lo >= 2) return hi - std::min(kStep, (hi - lo) / 2);
      if (pass > 0) throw Error("lru: no order label left after respacing (a bug)");
      relabel();
    }
  }
  // Respaces every label (order kept), and rebuilds the heap with the new ones.
  void relabel() {
    uint64_t l = 0;
    for (NodeId n = list_.front(); n != kNoNode; n = list_.next(n)) label_[n] = l += kSpacing;
    std::vector<Entry> kept;
    for (const Entry& e : heap_)
      if (valid(e)) kept.push_back({label_[e.node], e.node, e.gen});
    heap_ = std::move(kept);
    std::make_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
  }

  // Labels are kept from the first block that returns through the heap on (never, without
  // hints, in replay): until then the candidate list alone is the order.
  void grow_labels(size_t ids) {
    if (ids <= label_.size()) return;
    label_.resize(ids, 0);
    in_heap_.resize(ids, 0);
    gen_.resize(ids, 0);
  }
  bool valid(const Entry& e) const { return in_heap_[e.node] && gen_[e.node] == e.gen; }
  void enter_heap(NodeId n) {
    if (!labelled_) {
      labelled_ = true;
      grow_labels(list_.ids());
      relabel();
    }
    in_heap_[n] = 1;
    ++in_heap_count_;
    heap_.push_back({label_[n], n, gen_[n]});
    std::push_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
  }
  void leave_heap(NodeId n) {
    if (!in_heap_[n]) return;
    in_heap_[n] = 0;
    ++gen_[n];
    --in_heap_count_;
    if (heap_.size() > 4 * in_heap_count_ + 1024) relabel();  // drop stale entries
  }
  // The heap's oldest evictable block; stale entries are dropped, unevictable ones parked.
  NodeId heap_top() {
    while (!heap_.empty()) {
      const Entry& e = heap_.front();
      NodeId n = e.node;
      bool ok = valid(e);
      if (ok && tree_.is_evictable(n)) return n;
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
      heap_.pop_back();
      if (ok) leave_heap(n);  // parked
    }
    return kNoNode;
  }

  const PrefixTree& tree_;
  IntrusiveList list_;  // every cached block, in LRU's order
  IntrusiveList cand_;  // the same order without the parked blocks and those in the heap
  std::vector<uint64_t> label_;
  std::vector<uint8_t> in_heap_;
  std::vector<uint32_t> gen_;
  std::vector<Entry> heap_;
  size_t in_heap_count_ = 0;
  bool parking_ = false;
  bool labelled_ = false;
};

const bool registered = register_policy<Lru>({
    .name = "lru",
    .summary = "least recently used evictable leaf (deeper first on ties)",
    .paper = "classic; default of vLLM, SGLang, Dynamo",
});

}  // namespace
}  // namespace kvpolicy
