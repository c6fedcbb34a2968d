// One intrusive doubly linked list per group over dense ids, links kept in arrays: O(1) insert,
// erase and move, the head of every group, and the non-empty groups in id order. WA keeps one
// recency list per request category in it.
//
// Per id it keeps 12 bytes: the two links and a 32-bit stamp the caller owns (WA: the request
// counter of the block's last access), so one cache line serves both. It keeps no group per id:
// the caller knows it (WA derives it from the stamp) and names it where the head, the tail or
// the group's size may change.
#pragma once

#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

class GroupedLru {
 public:
  using Group = uint16_t;
  static constexpr Group kNoGroup = 0xFFFF;
  static constexpr size_t kMaxGroups = kNoGroup;  // groups are 0 .. kMaxGroups - 1

  // Grows the id range; never shrinks (ids are recycled by the tree). New ids are in no group
  // and have stamp 0.
  void resize(size_t ids) {
    if (ids > links_.size()) links_.resize(ids, Links{kOut, kNoNode, 0});
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
  size_t ids() const { return links_.size(); }

  bool contains(NodeId n) const { return n < links_.size() && links_[n].prev != kOut; }
  bool empty(Group g) const { return heads_[g] == kNoNode; }
  size_t size(Group g) const { return sizes_[g]; }
  size_t size() const { return total_; }
  NodeId front(Group g) const { return heads_[g]; }       // oldest of the group
  NodeId back(Group g) const { return tails_[g]; }        // newest of the group
  NodeId next(NodeId n) const { return links_[n].next; }  // kNoNode at the group's end
  NodeId prev(NodeId n) const { return links_[n].prev; }  // kNoNode at the group's start

  // The caller's word for id n, kept whether or not n is in a group.
  uint32_t stamp(NodeId n) const { return links_[n].stamp; }
  void set_stamp(NodeId n, uint32_t s) { links_[n].stamp = s; }
  // always_inline: GCC 12 otherwise deems a function that only prefetches pure and drops calls.
  [[gnu::always_inline]] void prefetch(NodeId n) const { __builtin_prefetch(&links_[n]); }

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

  // n must be in range and in no group; g must exist; `pos` must be in group g.
  void push_back(Group g, NodeId n) { link(g, n, tails_[g], kNoNode); }
  void push_front(Group g, NodeId n) { link(g, n, kNoNode, heads_[g]); }
  void insert_before(Group g, NodeId n, NodeId pos) { link(g, n, links_[pos].prev, pos); }
  void insert_after(Group g, NodeId n, NodeId pos) { link(g, n, pos, links_[pos].next); }
  // n must be in group g.
  void erase(Group g, NodeId n) {
    Links& l = links_[n];
    assert(l.prev != kOut && (l.prev != kNoNode || heads_[g] == n));
    NodeId p = l.prev, q = l.next;
    (p == kNoNode ? heads_[g] : links_[p].next) = q;
    (q == kNoNode ? tails_[g] : links_[q].prev) = p;
    l.prev = kOut;
    --total_;
    if (--sizes_[g] == 0) nonempty_[g / 64] &= ~(uint64_t{1} << (g % 64));
  }
  NodeId pop_front(Group g) {
    NodeId n = heads_[g];
    erase(g, n);
    return n;
  }

  size_t memory_bytes() const {
    return links_.capacity() * sizeof(Links) +
           heads_.capacity() * (2 * sizeof(NodeId) + sizeof(uint32_t)) + nonempty_.capacity() * 8;
  }

 private:
  // prev == kOut marks an id in no group (kNoNode is the start of a list).
  static constexpr NodeId kOut = kNoNode - 1;
  struct Links {
    NodeId prev, next;
    uint32_t stamp;
  };

  void link(Group g, NodeId n, NodeId p, NodeId q) {
    assert(links_[n].prev == kOut);
    links_[n].prev = p;
    links_[n].next = q;
    (p == kNoNode ? heads_[g] : links_[p].next) = n;
    (q == kNoNode ? tails_[g] : links_[q].prev) = n;
    ++total_;
    if (sizes_[g]++ == 0) nonempty_[g / 64] |= uint64_t{1} << (g % 64);
  }

  BlockVector<Links> links_;
  std::vector<NodeId> heads_, tails_;
  std::vector<uint32_t> sizes_;
  std::vector<uint64_t> nonempty_;  // bit g set iff group g is non-empty
  size_t total_ = 0;
};

}  // namespace kvpolicy
