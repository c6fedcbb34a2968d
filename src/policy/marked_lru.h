// MarkedLru, the base of the T-LRU family (tlru.cc, tlru_tokens.cc); internal to src/policy.
#pragma once

#include <span>

#include "kvpolicy/core/order/intrusive_list.h"
#include "kvpolicy/core/tree.h"
#include "kvpolicy/policy/policy.h"

namespace kvpolicy {

// LRU over two lists: first-to-evict blocks ("infinitely old") and the rest. Each list is kept
// oldest first with every block before its parent (a path is placed deepest first), as in lru:
// ties in recency go to the deeper block. A marked block that a request hits goes back to the
// plain list. With nothing marked this is exactly lru.
class MarkedLru : public Policy {
 public:
  explicit MarkedLru(const PolicyContext& ctx) : tree_(*ctx.tree) {}
  void reserve_ids(size_t ids) override {
    plain_.resize(ids);
    marked_.resize(ids);
  }

  void on_request_begin(const RequestView&) override { hits_ = 0; }
  void on_access(NodeId n, const AccessInfo& info) override {
    if (marked_.contains(n)) {
      marked_.erase(n);
    } else if (plain_.contains(n)) {
      plain_.erase(n);
    }
    NodeId parent = tree_.parent(n);
    if (info.position == 0 || parent == kNoNode || !plain_.contains(parent)) {
      plain_.push_back(n);
    } else {
      plain_.insert_before(n, parent);
    }
    if (info.reused()) ++hits_;
  }
  void on_evictable(NodeId) override {}
  void on_unevictable(NodeId) override {}
  NodeId victim(Time) override {
    for (NodeId n = marked_.front(); n != kNoNode; n = marked_.next(n))
      if (tree_.is_evictable(n)) return n;
    for (NodeId n = plain_.front(); n != kNoNode; n = plain_.next(n))
      if (tree_.is_evictable(n)) return n;
    return kNoNode;
  }
  void on_removed(NodeId n, Removal) override {
    if (marked_.contains(n)) {
      marked_.erase(n);
    } else if (plain_.contains(n)) {
      plain_.erase(n);
    }
  }
  size_t memory_bytes() const override { return plain_.memory_bytes() + marked_.memory_bytes(); }

 protected:
  // Whether n is a block of this policy's tier.
  bool holds(NodeId n) const { return plain_.contains(n) || marked_.contains(n); }
  // Moves path[from..] to the first-to-evict list, deepest first (so deeper goes first).
  void mark_from(std::span<const NodeId> path, size_t from) {
    for (size_t j = path.size(); j-- > from;) {
      NodeId n = path[j];
      if (!plain_.contains(n)) continue;  // not this tier's block
      plain_.erase(n);
      marked_.push_back(n);
    }
  }
  uint32_t hits_ = 0;  // blocks the current request found cached

 private:
  const PrefixTree& tree_;
  IntrusiveList plain_, marked_;
};

}  // namespace kvpolicy
