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
class ShadowLru {
 public:
  explicit ShadowLru(size_t capacity)
      : capacity_(capacity), tree_(std::min<size_t>(capacity, size_t{1} << 20)) {}

  void begin_request() {
    path_.clear();
    stopped_ = false;
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
  NodeId next_victim() const { return tree_.size() < capacity_ ? kNoNode : list_.front(); }
  BlockKey key(NodeId n) const { return tree_.key(n); }

  // The next block of the current request. `left(key)` and `joined(key)` hear of the blocks
  // that leave and enter. Returns whether it was a hit.
  template <typename Left, typename Joined>
  bool step(BlockKey key, Left&& left, Joined&& joined) {
    ++accesses_;
    NodeId n = stopped_ ? kNoNode : memo_valid_ && memo_key_ == key ? memo_node_ : tree_.find(key);
    memo_valid_ = false;
    if (n != kNoNode) {
      if (list_.contains(n)) list_.erase(n);
      tree_.pin(n);
      path_.push_back(n);
      return true;
    }
    ++misses_;
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
    NodeId m = tree_.insert(key, path_.empty() ? kNoNode : path_.back());
    list_.resize(tree_.id_limit());
    path_.push_back(m);
    joined(key);
    return false;
  }
  void end_request() {
    for (size_t j = path_.size(); j-- > 0;) {
      tree_.unpin(path_[j]);
      list_.push_back(path_[j]);
    }
    path_.clear();
  }
  uint64_t misses() const { return misses_; }
  uint64_t accesses() const { return accesses_; }
  size_t size() const { return tree_.size(); }
  size_t memory_bytes() const { return tree_.memory_bytes() + list_.memory_bytes(); }

 private:
  size_t capacity_;
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
