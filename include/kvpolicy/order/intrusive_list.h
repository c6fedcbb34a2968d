// Doubly linked list over dense ids, links kept in arrays (8 bytes per id, no allocation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kvpolicy/types.h"

namespace kvpolicy {

class IntrusiveList {
 public:
  void resize(size_t ids) {
    if (ids > prev_.size()) {
      prev_.resize(ids, kNoNode);
      next_.resize(ids, kNoNode);
      in_.resize(ids, 0);
    }
  }
  bool contains(NodeId n) const { return n < in_.size() && in_[n]; }
  bool empty() const { return head_ == kNoNode; }
  size_t size() const { return size_; }
  NodeId front() const { return head_; }  // oldest
  NodeId back() const { return tail_; }   // newest
  NodeId next(NodeId n) const { return next_[n]; }
  NodeId prev(NodeId n) const { return prev_[n]; }

  void push_back(NodeId n) { link(n, tail_, kNoNode); }
  void push_front(NodeId n) { link(n, kNoNode, head_); }
  // Places n just before `pos` (which must be in the list).
  void insert_before(NodeId n, NodeId pos) { link(n, prev_[pos], pos); }
  void erase(NodeId n) {
    NodeId p = prev_[n], q = next_[n];
    (p == kNoNode ? head_ : next_[p]) = q;
    (q == kNoNode ? tail_ : prev_[q]) = p;
    in_[n] = 0;
    --size_;
  }
  NodeId pop_front() {
    NodeId n = head_;
    erase(n);
    return n;
  }
  void clear() {
    for (NodeId n = head_; n != kNoNode; n = next_[n]) in_[n] = 0;
    head_ = tail_ = kNoNode;
    size_ = 0;
  }
  size_t memory_bytes() const { return prev_.capacity() * 9; }

 private:
  void link(NodeId n, NodeId p, NodeId q) {
    prev_[n] = p;
    next_[n] = q;
    (p == kNoNode ? head_ : next_[p]) = n;
    (q == kNoNode ? tail_ : prev_[q]) = n;
    in_[n] = 1;
    ++size_;
  }
  std::vector<NodeId> prev_, next_;
  std::vector<uint8_t> in_;
  NodeId head_ = kNoNode, tail_ = kNoNode;
  size_t size_ = 0;
};

}  // namespace kvpolicy
