// The evictable leaves of a policy that evicts the smallest key: an indexed heap plus one leaf
// parked outside it. Shared by fifo.cc, lfu.cc and gdsf.cc.
#pragma once

#include <cstddef>

#include "kvpolicy/order/indexed_heap.h"
#include "kvpolicy/types.h"

namespace kvpolicy {

// Evicting down a chain (the victim's parent becomes the next evictable leaf, often the next
// victim) would cost a heap pop and a push per block. The slot keeps the smallest leaf that
// arrived since the slot last emptied, so such a parent is parked and then evicted in O(1).
// Keys must be distinct for victims to be exact (ties may resolve either way).
template <typename Key>
class LeafHeap {
 public:
  void resize(size_t ids) { heap_.resize(ids); }
  bool empty() const { return parked_ == kNoNode && heap_.empty(); }

  void insert(NodeId n, const Key& k) {
    if (parked_ != kNoNode && !(k < parked_key_)) return heap_.push(n, k);
    if (parked_ != kNoNode) heap_.push(parked_, parked_key_);
    parked_ = n;
    parked_key_ = k;
  }
  void erase(NodeId n) {
    if (n == parked_) {
      parked_ = kNoNode;
    } else if (heap_.contains(n)) {
      heap_.erase(n);
    }
  }
  // Smallest leaf, or kNoNode.
  NodeId top() const {
    if (parked_ == kNoNode) return heap_.empty() ? kNoNode : heap_.top();
    return heap_.empty() || parked_key_ < heap_.top_key() ? parked_ : heap_.top();
  }
  size_t memory_bytes() const { return heap_.memory_bytes(); }

 private:
  IndexedHeap<Key> heap_;
  NodeId parked_ = kNoNode;
  Key parked_key_{};
};

}  // namespace kvpolicy
