// Doubly linked list over dense ids, links kept in one array (8 bytes per id, no allocation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

class IntrusiveList {
 public:
  void resize(size_t ids) {
    if (ids > links_.size()) links_.resize(ids, Link{kOut, kOut});
  }
  bool contains(NodeId n) const { return n < links_.size() && links_[n].prev != kOut; }
  size_t ids() const { return links_.size(); }  // ids below this have links
  bool empty() const { return head_ == kNoNode; }
  size_t size() const { return size_; }
  NodeId front() const { return head_; }  // oldest
  NodeId back() const { return tail_; }   // newest
  NodeId next(NodeId n) const { return links_[n].next; }
  NodeId prev(NodeId n) const { return links_[n].prev; }
  // always_inline: GCC 12 deems a const function that only prefetches pure and drops calls.
  [[gnu::always_inline]] void prefetch(NodeId n) const { __builtin_prefetch(&links_[n]); }

  void push_back(NodeId n) { link(n, tail_, kNoNode); }
  void push_front(NodeId n) { link(n, kNoNode, head_); }
  // Places n just before `pos` (which must be in the list).
  void insert_before(NodeId n, NodeId pos) { link(n, links_[pos].prev, pos); }
  void erase(NodeId n) {
    NodeId p = links_[n].prev, q = links_[n].next;
    (p == kNoNode ? head_ : links_[p].next) = q;
    (q == kNoNode ? tail_ : links_[q].prev) = p;
    links_[n] = Link{kOut, kOut};
    --size_;
  }
  NodeId pop_front() {
    NodeId n = head_;
    erase(n);
    return n;
  }
  void clear() {
    for (NodeId n = head_; n != kNoNode;) {
      NodeId next = links_[n].next;
      links_[n] = Link{kOut, kOut};
      n = next;
    }
    head_ = tail_ = kNoNode;
    size_ = 0;
  }
  size_t memory_bytes() const { return links_.capacity() * sizeof(Link); }

 private:
  static constexpr NodeId kOut = kNoNode - 1;  // prev of an id not in the list
  struct Link {
    NodeId prev, next;
  };
  void link(NodeId n, NodeId p, NodeId q) {
    links_[n] = Link{p, q};
    (p == kNoNode ? head_ : links_[p].next) = n;
    (q == kNoNode ? tail_ : links_[q].prev) = n;
    ++size_;
  }
  BlockVector<Link> links_;
  NodeId head_ = kNoNode, tail_ = kNoNode;
  size_t size_ = 0;
};

}  // namespace kvpolicy
