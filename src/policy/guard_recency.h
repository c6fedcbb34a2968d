// The guard's LRU order (guarded.h): the evictable leaves of its tier by recency key, and the
// key of every block. Two interchangeable implementations, chosen once: the order-statistic
// treap (O(log n) per change) when rule 3 (trust) needs select(), and otherwise an intrusive
// list of all the tier's keyed blocks in key order with a per-block key and membership flag:
// rules 1, 2 and 4 need only the oldest member and keys, and in replay the list changes in O(1)
// (docs/policies.md "guarded"). Both answer every query identically (guard_recency_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/order/intrusive_list.h"
#include "kvpolicy/core/order/os_treap.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

class GuardRecency {
 public:
  GuardRecency(bool treap, uint64_t seed) : use_treap_(treap), treap_(seed) {}

  bool uses_treap() const { return use_treap_; }
  void resize(size_t ids) {
    if (use_treap_) {
      treap_.resize(ids);
      return;
    }
    list_.resize(ids);
    if (ids > keys_.size()) {
      keys_.resize(ids, 0);
      member_.resize(ids, 0);
    }
  }

  uint64_t key(NodeId n) const { return use_treap_ ? treap_.key(n) : keys_[n]; }
  // Whether n is a member: an evictable leaf of the tier.
  bool contains(NodeId n) const {
    return use_treap_ ? treap_.contains(n) : n < member_.size() && member_[n] != 0;
  }
  size_t size() const { return use_treap_ ? treap_.size() : members_; }

  // n's recency key, set when it is accessed (n is no member then: it is pinned).
  void set_key(NodeId n, uint64_t key) {
    if (use_treap_) {
      treap_.set_key(n, key);
      return;
    }
    if (list_.contains(n)) unlink(n);
    keys_[n] = key;
    place(n);
  }
  void insert(NodeId n) {  // n becomes a member, with its key
    if (use_treap_) {
      treap_.insert(n);
      return;
    }
    if (!list_.contains(n)) place(n);  // (a block keyed before it left a tier and came back)
    member_[n] = 1;
    ++members_;
  }
  void erase(NodeId n) {  // n stops being a member (it stays keyed)
    if (use_treap_) {
      treap_.erase(n);
      return;
    }
    member_[n] = 0;
    --members_;
  }
  // n left the tier: no member, and out of the list (its key stays readable).
  void remove(NodeId n) {
    if (contains(n)) erase(n);
    if (!use_treap_ && list_.contains(n)) unlink(n);
  }

  // The member with the smallest key. The list's blocks before it are pinned ones or their
  // ancestors (a block's key is below its parent's), in replay the current request's, at the
  // tail: the scan stops at once, as lru.cc's victim() does.
  NodeId oldest() const {
    if (use_treap_) return treap_.oldest();
    for (NodeId n = list_.front(); n != kNoNode; n = list_.next(n))
      if (member_[n]) return n;
    return kNoNode;
  }
  NodeId select(size_t r) const { return treap_.select(r); }  // trust only: the treap

  size_t memory_bytes() const {
    return use_treap_
               ? treap_.memory_bytes()
               : list_.memory_bytes() + keys_.capacity() * sizeof(uint64_t) + member_.capacity();
  }

 private:
  void unlink(NodeId n) {
    if (hint_ == n) hint_ = list_.prev(n) != kNoNode ? list_.prev(n) : list_.next(n);
    list_.erase(n);
  }
  // Inserts n at its key's place, searching from the newest block or from the last placed
  // one: a request's blocks are keyed newest first, each just below the one before it, and a
  // DRAM tier's demotions in increasing keys, so either search takes one step.
  void place(NodeId n) {
    uint64_t k = keys_[n];
    NodeId tail = list_.back();
    if (tail == kNoNode || keys_[tail] < k) {
      list_.push_back(n);
    } else {
      NodeId x = hint_ != kNoNode ? hint_ : tail;
      if (keys_[x] < k) {
        for (NodeId y = list_.next(x); y != kNoNode && keys_[y] < k; y = list_.next(y)) x = y;
        NodeId y = list_.next(x);
        if (y == kNoNode)
          list_.push_back(n);
        else
          list_.insert_before(n, y);
      } else {
        for (NodeId y = list_.prev(x); y != kNoNode && keys_[y] > k; y = list_.prev(y)) x = y;
        list_.insert_before(n, x);
      }
    }
    hint_ = n;
  }

  bool use_treap_;
  OsTreap treap_;       // trust: evictable leaves by key; keys of all blocks
  IntrusiveList list_;  // otherwise: every keyed block of the tier, by key
  BlockVector<uint64_t> keys_;
  BlockVector<uint8_t> member_;
  size_t members_ = 0;
  NodeId hint_ = kNoNode;  // the last block placed (or a neighbour of it, once it left)
};

}  // namespace kvpolicy
