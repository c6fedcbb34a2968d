// The evictable leaves of a policy that evicts the smallest key: an indexed heap plus one leaf
// parked outside it. Shared by fifo.cc, lfu.cc and gdsf.cc.
#pragma once

#include <compare>
#include <cstddef>

#include "kvpolicy/core/order/indexed_heap.h"
#include "kvpolicy/core/tree.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

// Smaller key first, then the deeper block. The depth is read from the tree only on a tie,
// instead of widening every key: the keys of LFU and GDSF tie only for blocks accessed in one
// request, which in HBM are never two evictable leaves at once (one is the other's ancestor).
template <typename Key>
struct DeeperOnTies {
  const PrefixTree* tree = nullptr;
  bool operator()(const HeapEntry<Key>& a, const HeapEntry<Key>& b) const {
    auto order = a.key <=> b.key;
    return order != 0 ? order < 0 : tree->depth(a.id) > tree->depth(b.id);
  }
};

// Evicting down a chain (the victim's parent becomes the next evictable leaf, often the next
// victim) would cost a heap pop and a push per block. The slot keeps the smallest leaf that
// arrived since the slot last emptied, so such a parent is parked and then evicted in O(1).
// Keys must be distinct for victims to be exact (ties may resolve either way).
//
// Every block's key lives in the heap's slots (see IndexedHeap): stored_key holds it while the
// block is not an evictable leaf, and insert() makes it one with that key.
template <typename Key, typename Less = ByKey<std::less<Key>>>
class LeafHeap {
 public:
  using Entry = typename IndexedHeap<Key, Less>::Entry;

  explicit LeafHeap(Less less = {}) : heap_(less) {}
  void resize(size_t ids) { heap_.resize(ids); }
  size_t ids() const { return heap_.ids(); }
  bool empty() const { return parked_.id == kNoNode && heap_.empty(); }

  const Key& key(NodeId n) const { return heap_.key(n); }
  // The key of a block that is not an evictable leaf, so not in the heap (a leaf's key changes
  // only while it is pinned).
  Key& stored_key(NodeId n) { return heap_.stored_key(n); }

  void insert(NodeId n) {
    Entry e{heap_.stored_key(n), n};
    if (parked_.id != kNoNode && !heap_.less()(e, parked_)) return heap_.push(n);
    if (parked_.id != kNoNode) heap_.push(parked_.id);
    parked_ = e;
  }
  void erase(NodeId n) {
    if (n == parked_.id) {
      parked_.id = kNoNode;
    } else if (heap_.contains(n)) {
      heap_.erase(n);
    }
  }
  // Smallest leaf, or kNoNode.
  NodeId top() const {
    if (parked_.id == kNoNode) return heap_.empty() ? kNoNode : heap_.top();
    return heap_.empty() || heap_.less()(parked_, heap_.top_entry()) ? parked_.id : heap_.top();
  }
  size_t memory_bytes() const { return heap_.memory_bytes(); }

 private:
  IndexedHeap<Key, Less> heap_;
  Entry parked_{Key{}, kNoNode};  // with its key, read on every top()
};

}  // namespace kvpolicy
