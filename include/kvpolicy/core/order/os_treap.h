// Order-statistic treap over dense NodeIds, keyed by a 64-bit recency sequence (smaller = older),
// each subtree holding its size and the member with the largest value P. It answers "the member
// with the largest P among the l oldest" in O(log n), which LARU, FPB and HF need
// (docs/policies.md). Links live in arrays indexed by NodeId: no allocation per operation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

class OsTreap {
 public:
  explicit OsTreap(uint64_t seed = 1) : seed_(mix64(seed ^ 0x7472656170ULL)) {}

  // Makes room for ids below `ids` (never shrinks).
  void resize(size_t ids);

  // Key and P are stored for every id, members or not, so a caller can set them while a node
  // is outside the treap and insert it later without keeping its own copy.
  void set_key(NodeId n, uint64_t key) { nodes_[n].key = key; }  // only while not a member
  uint64_t key(NodeId n) const { return nodes_[n].key; }
  Time p(NodeId n) const { return nodes_[n].p; }
  // Sets P; updates the subtree maxima on n's path when n is a member. O(log n).
  void set_p(NodeId n, Time p);

  bool contains(NodeId n) const { return n < nodes_.size() && nodes_[n].size != 0; }
  size_t size() const { return root_ == kNoNode ? 0 : nodes_[root_].size; }
  bool empty() const { return root_ == kNoNode; }

  // Inserts n with its stored key (which must differ from every member's). O(log n).
  void insert(NodeId n);
  void erase(NodeId n);  // n must be a member. O(log n).
  void clear();

  NodeId oldest() const;  // smallest key, kNoNode when empty
  // The member with the largest P among the l members with the smallest keys (l >= 1; all
  // members when l >= size). Ties in P go to the smaller key (the older member). O(log n).
  NodeId max_among_oldest(size_t l) const;
  NodeId max_p() const { return root_ == kNoNode ? kNoNode : nodes_[root_].best; }
  // The member of 0-based rank r in key order (r < size). O(log n).
  NodeId select(size_t r) const;

  size_t memory_bytes() const { return nodes_.capacity() * sizeof(Node); }
  size_t height() const;  // longest root-to-leaf path in nodes, O(n): tests only
  // Test support: BST order, heap order, sizes and maxima; empty string when sound.
  std::string check_invariants() const;

 private:
  uint32_t prio(NodeId n) const { return static_cast<uint32_t>(mix64(seed_ ^ n)); }
  // One record per id, all fields of a visit in one cache line. The subtree maximum's P and
  // key are copied beside its id so that recomputing a node reads only its children.
  struct Node {
    uint64_t key = 0;
    Time p = 0;
    Time best_p = 0;
    uint64_t best_key = 0;
    NodeId left = kNoNode, right = kNoNode, best = kNoNode;
    uint32_t size = 0;  // 0 = not a member
  };
  uint32_t sz(NodeId t) const { return t == kNoNode ? 0 : nodes_[t].size; }
  // Whether (p, key) beats (q, key2): larger P, then smaller key (the older member).
  static bool beats(Time p, uint64_t key, Time q, uint64_t key2) {
    return p != q ? p > q : key < key2;
  }
  void pull(NodeId t) {
    Node& x = nodes_[t];
    x.size = 1;
    x.best = t;
    x.best_p = x.p;
    x.best_key = x.key;
    for (NodeId c : {x.left, x.right}) {
      if (c == kNoNode) continue;
      const Node& y = nodes_[c];
      x.size += y.size;
      if (beats(y.best_p, y.best_key, x.best_p, x.best_key)) {
        x.best = y.best;
        x.best_p = y.best_p;
        x.best_key = y.best_key;
      }
    }
  }
  // Splits t into keys < key (*l) and keys > key (*r).
  void split(NodeId t, uint64_t key, NodeId* l, NodeId* r);
  NodeId merge(NodeId a, NodeId b);
  // Fills path_ with the members from the root down to n (by key).
  void find_path(NodeId n);

  uint64_t seed_;
  NodeId root_ = kNoNode;
  BlockVector<Node> nodes_;
  std::vector<NodeId> path_;  // scratch for set_p
};

}  // namespace kvpolicy
