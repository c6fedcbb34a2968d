// The guard's LRU order in serve mode (guarded.h): lru.cc's own list of every block of the tier,
// an answer block written at completion just before its parent, as the shadow LRU places it
// (the guard's recency keys rank it as new: docs/policies.md, guarded, "In serve mode").
#pragma once

#include "kvpolicy/core/access.h"
#include "kvpolicy/core/order/intrusive_list.h"
#include "kvpolicy/core/tree.h"

namespace kvpolicy {

class GuardServeOrder {
 public:
  void resize(size_t ids) { list_.resize(ids); }
  // As lru.cc's on_access.
  void place(const PrefixTree& tree, NodeId n, const AccessInfo& info) {
    if (list_.contains(n)) list_.erase(n);
    NodeId parent = tree.parent(n);
    if (info.position == 0 || parent == kNoNode || !list_.contains(parent)) {
      list_.push_back(n);
    } else {
      list_.insert_before(n, parent);
    }
  }
  void remove(NodeId n) {
    if (list_.contains(n)) list_.erase(n);
  }
  // lru.cc's victim: the first block of the list that `evictable` accepts (the scan passes
  // pinned blocks as lru.cc's does).
  template <typename Evictable>
  NodeId oldest(Evictable&& evictable) const {
    for (NodeId n = list_.front(); n != kNoNode; n = list_.next(n))
      if (evictable(n)) return n;
    return kNoNode;
  }
  size_t memory_bytes() const { return list_.memory_bytes(); }

 private:
  IntrusiveList list_;
};

}  // namespace kvpolicy
