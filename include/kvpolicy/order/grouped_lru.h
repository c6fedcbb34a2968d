// One intrusive doubly linked list per group over dense ids, links kept in arrays: O(1) insert,
// erase and move, the head of every group, and the non-empty groups in id order. WA keeps one
// recency list per request category in it; LPC one list per score bucket.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kvpolicy/types.h"

namespace kvpolicy {

class GroupedLru {
 public:
  using Group = uint16_t;
  static constexpr Group kNoGroup = 0xFFFF;
  static constexpr size_t kMaxGroups = kNoGroup;  // groups are 0 .. kMaxGroups - 1

  // Grows the id range; never shrinks (ids are recycled by the tree).
  void resize(size_t ids) {
    if (ids > prev_.size()) {
      prev_.resize(ids, kNoNode);
      next_.resize(ids, kNoNode);
      group_.resize(ids, kNoGroup);
    }
  }
  // Grows the number of groups to at least `groups` (at most kMaxGroups).
  void ensure_groups(size_t groups) {
    if (groups <= heads_.size()) return;
    heads_.resize(groups, kNoNode);
    tails_.resize(groups, kNoNode);
    sizes_.resize(groups, 0);
    nonempty_.resize((groups + 63) / 64, 0);
  }
  size_t groups() const { return heads_.size(); }

  bool contains(NodeId n) const { return n < group_.size() && group_[n] != kNoGroup; }
  Group group_of(NodeId n) const { return n < group_.size() ? group_[n] : kNoGroup; }
  bool empty(Group g) const { return heads_[g] == kNoNode; }
  size_t size(Group g) const { return sizes_[g]; }
  size_t size() const { return total_; }
  NodeId front(Group g) const { return heads_[g]; }  // oldest of the group
  NodeId back(Group g) const { return tails_[g]; }   // newest of the group
  NodeId next(NodeId n) const { return next_[n]; }   // kNoNode at the group's end
  NodeId prev(NodeId n) const { return prev_[n]; }

  // The first non-empty group >= g, or kNoGroup: visits the heads without touching empty groups.
  Group next_nonempty(size_t g) const {
    size_t w = g / 64;
    if (w >= nonempty_.size()) return kNoGroup;
    uint64_t bits = nonempty_[w] & (~uint64_t{0} << (g % 64));
    while (bits == 0) {
      if (++w >= nonempty_.size()) return kNoGroup;
      bits = nonempty_[w];
    }
    return static_cast<Group>(w * 64 + std::countr_zero(bits));
  }
  Group first_nonempty() const { return next_nonempty(0); }

  // The id must be in range and in no group; the group must exist.
  void push_back(Group g, NodeId n) { link(g, n, tails_[g], kNoNode); }
  void push_front(Group g, NodeId n) { link(g, n, kNoNode, heads_[g]); }
  // Places n just before `pos`, in pos's group.
  void insert_before(NodeId n, NodeId pos) { link(group_[pos], n, prev_[pos], pos); }
  void insert_after(NodeId n, NodeId pos) { link(group_[pos], n, pos, next_[pos]); }
  void erase(NodeId n) {
    Group g = group_[n];
    NodeId p = prev_[n], q = next_[n];
    (p == kNoNode ? heads_[g] : next_[p]) = q;
    (q == kNoNode ? tails_[g] : prev_[q]) = p;
    group_[n] = kNoGroup;
    --total_;
    if (--sizes_[g] == 0) nonempty_[g / 64] &= ~(uint64_t{1} << (g % 64));
  }
  // Erases n from wherever it is (if anywhere) and appends it to group g.
  void move_to_back(Group g, NodeId n) {
    if (contains(n)) erase(n);
    push_back(g, n);
  }
  NodeId pop_front(Group g) {
    NodeId n = heads_[g];
    erase(n);
    return n;
  }

  size_t memory_bytes() const {
    return prev_.capacity() * (2 * sizeof(NodeId) + sizeof(Group)) +
           heads_.capacity() * (2 * sizeof(NodeId) + sizeof(size_t)) + nonempty_.capacity() * 8;
  }

 private:
  void link(Group g, NodeId n, NodeId p, NodeId q) {
    prev_[n] = p;
    next_[n] = q;
    (p == kNoNode ? heads_[g] : next_[p]) = n;
    (q == kNoNode ? tails_[g] : prev_[q]) = n;
    group_[n] = g;
    ++total_;
    if (sizes_[g]++ == 0) nonempty_[g / 64] |= uint64_t{1} << (g % 64);
  }

  std::vector<NodeId> prev_, next_;
  std::vector<Group> group_;
  std::vector<NodeId> heads_, tails_;
  std::vector<size_t> sizes_;
  std::vector<uint64_t> nonempty_;  // bit g set iff group g is non-empty
  size_t total_ = 0;
};

}  // namespace kvpolicy
