// The guard's exact shadow LRU cache (guarded.h's budget): LRU's misses on the same requests,
// replayed block by block beside the guarded cache.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/order/intrusive_list.h"
#include "kvpolicy/core/tree.h"

namespace kvpolicy {

// An exact LRU cache of k blocks over the trace's block keys, stepped block by block beside the
// guarded cache: its own prefix tree (for the keys and prefix closure) and one recency list of
// the blocks not in the current request, oldest first. A request's blocks join the list at its
// end deepest first, so the order is lru.cc's, and the list's first block is always a leaf.
//
// Serve mode (elastic): the shadow has the guarded tier's memory rather than k blocks of its own
// (decode blocks and overlapping requests take the rest): it never evicts to insert, and the
// guard trims it to the tier's size whenever that shrinks, skipping blocks the tier holds pinned
// (in-flight requests'), as the cache's LRU would. Answers written at completion join it
// uncounted, just before their parent, as lru.cc orders them.
class ShadowLru {
 public:
  explicit ShadowLru(size_t capacity, const PrefixTree* outer = nullptr)
      : capacity_(outer ? SIZE_MAX : capacity),
        outer_(outer),
        tree_(std::min<size_t>(capacity, size_t{1} << 20)) {}

  void begin_request() {
    path_.clear();
    stopped_ = false;
    answer_ = false;
  }
  // Serve mode: the current request's blocks are an answer written after the block `parent`
  // (absent: none), counted neither as accesses nor as misses.
  void begin_answer(BlockKey parent, bool has_parent) {
    answer_ = true;
    parent_ = has_parent ? tree_.find(parent) : kNoNode;
    stopped_ = has_parent && parent_ == kNoNode;  // (prefix closure: no parent, no child)
  }
  // The last lookup is remembered: the guard asks about a missed block just before the shadow
  // steps through it (one hash lookup instead of two).
  bool contains(BlockKey key) const {
    if (!memo_valid_ || memo_key_ != key) {
      memo_key_ = key;
      memo_node_ = tree_.find(key);
      memo_valid_ = true;
    }
    return memo_node_ != kNoNode;
  }
  // Whether a miss now would insert, and which block it would evict (kNoNode if none).
  bool would_insert() const { return !stopped_ && (tree_.size() < capacity_ || !list_.empty()); }
  NodeId next_victim() const {
    if (outer_) return tree_.size() < cap_ ? kNoNode : trim_victim();
    return tree_.size() < capacity_ ? kNoNode : list_.front();
  }
  BlockKey key(NodeId n) const { return tree_.key(n); }

  // The next block of the current request. `left(key)` and `joined(key)` hear of the blocks
  // that leave and enter. Returns whether it was a hit.
  template <typename Left, typename Joined>
  bool step(BlockKey key, Left&& left, Joined&& joined) {
    accesses_ += !answer_;
    NodeId n = stopped_ ? kNoNode : memo_valid_ && memo_key_ == key ? memo_node_ : tree_.find(key);
    memo_valid_ = false;
    if (n != kNoNode) {
      if (list_.contains(n)) list_.erase(n);
      tree_.pin(n);
      path_.push_back(n);
      return true;
    }
    misses_ += !answer_;
    if (stopped_) return false;
    if (tree_.size() >= capacity_) {
      if (list_.empty()) {  // all of it is this prompt's: like the cache, insert no further
        stopped_ = true;
        return false;
      }
      NodeId v = list_.front();
      if (!tree_.is_evictable(v)) throw Error("guarded: the shadow LRU's oldest block is no leaf");
      list_.erase(v);
      left(tree_.key(v));
      tree_.remove(v);
    }
    NodeId m = tree_.insert(key, !path_.empty() ? path_.back() : answer_ ? parent_ : kNoNode);
    list_.resize(tree_.id_limit());
    path_.push_back(m);
    joined(key);
    return false;
  }
  void end_request() {
    if (answer_ && parent_ != kNoNode && list_.contains(parent_)) {
      NodeId after = parent_;  // lru.cc: each answer block just before its parent
      for (NodeId n : path_) {
        tree_.unpin(n);
        list_.insert_before(n, after);
        after = n;
      }
      path_.clear();
      return;
    }
    for (size_t j = path_.size(); j-- > 0;) {
      tree_.unpin(path_[j]);
      list_.push_back(path_[j]);
    }
    path_.clear();
  }
  // Serve mode: evicts least recently used blocks until at most `cap` remain, skipping those the
  // guarded tier holds pinned; `left(key)` hears of each. Returns false if it stopped short.
  template <typename Left>
  bool trim(size_t cap, Left&& left) {
    cap_ = cap;
    while (tree_.size() > cap) {
      NodeId v = trim_victim();
      if (v == kNoNode) return false;
      list_.erase(v);
      left(tree_.key(v));
      tree_.remove(v);
      memo_valid_ = false;
    }
    return true;
  }
  // Serve mode: the guarded tier dropped `key` (a block never computed): so does the shadow, if
  // it holds it as an unpinned leaf. Returns whether it did.
  template <typename Left>
  bool drop(BlockKey key, Left&& left) {
    NodeId n = tree_.find(key);
    memo_valid_ = false;
    if (n == kNoNode || !list_.contains(n) || !tree_.is_evictable(n)) return false;
    list_.erase(n);
    left(key);
    tree_.remove(n);
    return true;
  }
  uint64_t misses() const { return misses_; }
  uint64_t accesses() const { return accesses_; }
  size_t size() const { return tree_.size(); }
  size_t memory_bytes() const { return tree_.memory_bytes() + list_.memory_bytes(); }

 private:
  // Serve mode's next victim: the least recently used leaf the guarded tier does not hold pinned.
  NodeId trim_victim() const {
    for (NodeId n = list_.front(); n != kNoNode; n = list_.next(n)) {
      if (!tree_.is_evictable(n)) continue;
      NodeId o = outer_->find(tree_.key(n));
      if (o == kNoNode || outer_->tier(o) != Tier::kHbm || !outer_->is_pinned(o)) return n;
    }
    return kNoNode;
  }

  size_t capacity_;
  const PrefixTree* outer_;  // serve mode: the guarded tier's tree
  size_t cap_ = SIZE_MAX;    // serve mode: the guarded tier's size at the last trim
  bool answer_ = false;
  NodeId parent_ = kNoNode;
  PrefixTree tree_;
  IntrusiveList list_;
  std::vector<NodeId> path_;
  bool stopped_ = false;
  uint64_t misses_ = 0, accesses_ = 0;
  mutable BlockKey memo_key_ = 0;
  mutable NodeId memo_node_ = kNoNode;
  mutable bool memo_valid_ = false;
};

}  // namespace kvpolicy
