// The prefix tree of cached KV blocks: one node per block, parent = the block before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

// Prefix-closed store of block nodes with pins and incremental leaf tracking. It knows no
// policy: operations report the evictable transitions they cause and the caller (PrefixCache)
// tells the policy. Node ids are dense and recycled, so policies index arrays by NodeId.
//
// Two tiers: HBM blocks are prefix-closed, and so are HBM and DRAM together (a DRAM block's
// children are DRAM blocks). A node is evictable within its own tier: an HBM block with no HBM
// child (it is demoted, and its DRAM children stay), a DRAM block with no child at all (it is
// dropped). With one tier every block is HBM and this is the plain leaf rule.
class PrefixTree {
 public:
  explicit PrefixTree(size_t reserve_nodes = 1024);

  NodeId find(BlockKey key) const {
    uint32_t tag = tag_of(key);
    for (size_t slot = home_of_tag(tag);; slot = next_slot(slot)) {
      const Slot& e = slots_[slot];
      if (e.id == kNoNode) return kNoNode;
      if (e.tag == tag && nodes_[e.id].key == key) return e.id;
    }
  }

  // A request's keys are known before it is walked, so the cache misses of find() can overlap:
  // prefetch_slot(key) starts loading the hash slot `key` probes first, and a few keys later
  // (the slot has arrived) prefetch_node(key) the node that slot names, if its tag matches. It
  // returns that node (kNoNode if none), a likely hit whose policy state can be fetched too.
  // always_inline: GCC 12 deems a const function that only prefetches pure and drops calls.
  [[gnu::always_inline]] void prefetch_slot(BlockKey key) const {
    __builtin_prefetch(&slots_[home_of_tag(tag_of(key))]);
  }
  [[gnu::always_inline]] NodeId prefetch_node(BlockKey key) const {
    uint32_t tag = tag_of(key);
    const Slot& e = slots_[home_of_tag(tag)];
    if (e.id == kNoNode || e.tag != tag) return kNoNode;
    __builtin_prefetch(&nodes_[e.id]);
    return e.id;
  }

  // Starts loading what remove(node) touches beyond the node: its hash slot and its parent. It
  // reads the node, so that is best in cache already (a victim just chosen, or a block fetched
  // earlier with prefetch_node_id).
  [[gnu::always_inline]] void prefetch_removal(NodeId node) const {
    const Node& n = at(node);
    __builtin_prefetch(&slots_[home_of_tag(tag_of(n.key))]);
    if (n.parent != kNoNode) __builtin_prefetch(&nodes_[n.parent]);
  }
  [[gnu::always_inline]] void prefetch_node_id(NodeId node) const {
    __builtin_prefetch(&nodes_[node]);
  }

  // Adds a pinned child of `parent` (kNoNode for a first block). The key must be absent and
  // the parent cached.
  [[gnu::always_inline]] NodeId insert(BlockKey key, NodeId parent);

  // Removes an evictable node with no children. Returns its parent if the parent thereby
  // became evictable.
  [[gnu::always_inline]] NodeId remove(NodeId node);

  // Moves an evictable HBM node to DRAM. Returns its parent if the parent thereby became
  // evictable; the node itself is evictable in DRAM iff it has no children (is_evictable).
  NodeId demote(NodeId node);
  // Moves a DRAM node whose parent is in HBM back to HBM. Returns true if the parent was
  // evictable and no longer is.
  bool promote(NodeId node);

  // Pin returns true if the node was evictable and no longer is; unpin returns true if it
  // became evictable.
  bool pin(NodeId node) {
    Node& n = at(node);
    if (n.pins == kMaxPins) throw_too_many_pins(node);
    bool was_evictable = n.pins == 0 && tier_children(n) == 0;
    ++n.pins;
    return was_evictable;
  }
  bool unpin(NodeId node) {
    Node& n = at(node);
    --n.pins;
    return n.pins == 0 && tier_children(n) == 0;
  }

  bool contains(NodeId n) const { return n < nodes_.size() && nodes_[n].depth != kFree; }
  bool is_leaf(NodeId n) const { return at(n).children == 0; }
  // An unpinned node with no child in its own tier (see the class comment).
  bool is_evictable(NodeId n) const { return at(n).pins == 0 && tier_children(at(n)) == 0; }
  bool is_pinned(NodeId n) const { return at(n).pins != 0; }
  // No child in its own tier: evictable whenever it is unpinned.
  bool is_tier_leaf(NodeId n) const { return tier_children(at(n)) == 0; }
  BlockKey key(NodeId n) const { return at(n).key; }
  NodeId parent(NodeId n) const { return at(n).parent; }
  uint32_t depth(NodeId n) const { return at(n).depth; }  // 0 = first block of a prompt
  // A flat store's root standing for a block `depth` deep in its prompt (serve mode's lower
  // tiers, docs/serve.md): policies reading depth order it as replay's DRAM tier does.
  void set_root_depth(NodeId n, uint32_t depth) {
    if (at(n).parent != kNoNode || at(n).children != 0) throw_not_flat_root();
    if (depth > kMaxDepth) throw_too_deep();
    nodes_[n].depth = depth;
    flat_depths_ = true;
  }
  uint32_t child_count(NodeId n) const { return at(n).children; }
  uint32_t pin_count(NodeId n) const { return at(n).pins; }
  uint32_t hbm_child_count(NodeId n) const { return at(n).hbm_children; }
  Tier tier(NodeId n) const { return tier_of(at(n)); }

  size_t size() const { return size_; }
  // An upper bound on node ids, growing geometrically with the tree's own storage: policies
  // size their per-node arrays to it, so they never hold more slack than the tree does.
  size_t id_limit() const { return nodes_.capacity(); }
  // Bytes held by the tree itself (node arrays and hash table), for the memory budget.
  size_t memory_bytes() const;

  // Test support: checks every structural invariant; returns an empty string when sound.
  std::string check_invariants() const;

 private:
  // The fields every access touches, in one 24-byte record: the depth, the pin count and the
  // tier share a word (a third more nodes per cache line than 32 bytes, and the bytes per block
  // stay within budget). Their limits are checked, never wrapped.
  static constexpr uint32_t kFree = (1u << 24) - 1;  // depth of a recycled node id
  static constexpr uint32_t kMaxDepth = kFree - 1;   // prompts of up to 16.7 M blocks
  static constexpr uint32_t kMaxPins = 127;          // requests holding a block at once
  struct Node {
    BlockKey key;
    NodeId parent;
    uint32_t children;      // cached children, both tiers
    uint32_t hbm_children;  // children in HBM
    uint32_t depth : 24;
    uint32_t pins : 7;
    uint32_t in_dram : 1;
  };
  static_assert(sizeof(Node) == 24);
  static Tier tier_of(const Node& n) { return n.in_dram ? Tier::kDram : Tier::kHbm; }
  static uint32_t tier_children(const Node& n) { return n.in_dram ? n.children : n.hbm_children; }
  // Node ids come from callers of a public class: each is range-checked, one compare that a
  // replay never fails (its ids come from the tree), so it costs a predicted branch.
  const Node& at(NodeId n) const {
    if (n >= nodes_.size()) [[unlikely]]
      throw_bad_node(n);
    return nodes_[n];
  }
  Node& at(NodeId n) {
    if (n >= nodes_.size()) [[unlikely]]
      throw_bad_node(n);
    return nodes_[n];
  }
  // Out of line: the hot paths stay small.
  [[noreturn]] void throw_bad_node(NodeId node) const;
  [[noreturn]] static void throw_too_deep();
  [[noreturn]] static void throw_not_flat_root();
  [[noreturn]] static void throw_too_many_pins(NodeId node);
  // A slot keeps the upper half of the key's hash beside the id: probes and backward shifts
  // rarely need to read the node.
  struct Slot {
    NodeId id;
    uint32_t tag;
  };
  static uint32_t tag_of(BlockKey key) { return (key * 0x9e3779b97f4a7c15ULL) >> 32; }
  // Multiply-shift maps a tag onto any table size, so the table is sized to the capacity
  // exactly instead of rounding up to a power of two.
  size_t home_of_tag(uint32_t tag) const { return (uint64_t{tag} * slots_.size()) >> 32; }
  size_t next_slot(size_t slot) const { return slot + 1 == slots_.size() ? 0 : slot + 1; }
  void grow_table();
  void table_insert(NodeId id);
  void table_erase(NodeId id);

  BlockVector<Node> nodes_;
  std::vector<NodeId> free_ids_;

  // Open addressing with linear probing and backward-shift deletion (no tombstones); load
  // factor at most 1/2; the home slot is a function of the tag.
  BlockVector<Slot> slots_;
  size_t size_ = 0;
  bool flat_depths_ = false;  // set_root_depth was used: roots may have any depth
};

// The replay's hot path, inline so that the cache's loop compiles into one body.
inline NodeId PrefixTree::insert(BlockKey key, NodeId parent) {
  uint32_t depth = parent == kNoNode ? 0 : at(parent).depth + 1;
  if (depth > kMaxDepth) throw_too_deep();
  NodeId id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<NodeId>(nodes_.size());
    nodes_.push_back({});
  }
  if (parent != kNoNode) {
    ++nodes_[parent].children;
    ++nodes_[parent].hbm_children;
  }
  nodes_[id] = Node{key, parent, 0, 0, depth, 1, 0};
  // Growing re-inserts every live node, this one included.
  if ((size_ + 1) * 2 > slots_.size()) {
    grow_table();
  } else {
    table_insert(id);
  }
  ++size_;
  return id;
}

inline NodeId PrefixTree::remove(NodeId node) {
  Node& n = at(node);
  table_erase(node);
  --size_;
  n.depth = kFree;
  free_ids_.push_back(node);
  NodeId parent = n.parent;
  if (parent == kNoNode) return kNoNode;
  Node& p = nodes_[parent];
  --p.children;
  if (!n.in_dram) --p.hbm_children;
  // An HBM parent's evictability does not depend on its DRAM children.
  bool counted = p.in_dram || !n.in_dram;
  return counted && p.pins == 0 && tier_children(p) == 0 ? parent : kNoNode;
}

inline void PrefixTree::table_insert(NodeId id) {
  uint32_t tag = tag_of(nodes_[id].key);
  size_t slot = home_of_tag(tag);
  while (slots_[slot].id != kNoNode) slot = next_slot(slot);
  slots_[slot] = Slot{id, tag};
}

inline void PrefixTree::table_erase(NodeId id) {
  size_t slot = home_of_tag(tag_of(nodes_[id].key));
  while (slots_[slot].id != id) slot = next_slot(slot);
  // Backward shift: pull later entries of the probe run into the hole.
  size_t hole = slot;
  for (size_t next = next_slot(hole); slots_[next].id != kNoNode; next = next_slot(next)) {
    size_t want = home_of_tag(slots_[next].tag);
    // The entry may move only if its home is not in the cyclic range (hole, next].
    bool stays = hole <= next ? (hole < want && want <= next) : (hole < want || want <= next);
    if (!stays) {
      slots_[hole] = slots_[next];
      hole = next;
    }
  }
  slots_[hole].id = kNoNode;
}

}  // namespace kvpolicy
