// The prefix tree of cached KV blocks: one node per block, parent = the block before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/types.h"

namespace kvpolicy {

enum class Tier : uint8_t { kHbm = 0, kDram = 1 };

// Prefix-closed store of block nodes with pins and incremental leaf tracking. It knows no
// policy: operations report the evictable transitions they cause and the caller (PrefixCache)
// tells the policy. Node ids are dense and recycled, so policies index arrays by NodeId.
class PrefixTree {
 public:
  explicit PrefixTree(size_t reserve_nodes = 1024);

  NodeId find(BlockKey key) const {
    if (size_ == 0) return kNoNode;
    for (size_t slot = home(key);; slot = (slot + 1) & mask_) {
      NodeId id = slots_[slot];
      if (id == kNoNode) return kNoNode;
      if (keys_[id] == key) return id;
    }
  }

  // Adds a pinned child of `parent` (kNoNode for a first block). The key must be absent and
  // the parent cached.
  NodeId insert(BlockKey key, NodeId parent);

  // Removes an evictable node. Returns its parent if the parent thereby became evictable.
  NodeId remove(NodeId node);

  // Pin returns true if the node was evictable and no longer is; unpin returns true if it
  // became evictable.
  bool pin(NodeId node) {
    bool was_evictable = is_evictable(node);
    ++pins_[node];
    return was_evictable;
  }
  bool unpin(NodeId node) {
    --pins_[node];
    return is_evictable(node);
  }

  bool contains(NodeId n) const { return n < keys_.size() && live_[n]; }
  bool is_leaf(NodeId n) const { return children_[n] == 0; }
  bool is_evictable(NodeId n) const { return children_[n] == 0 && pins_[n] == 0; }
  bool is_pinned(NodeId n) const { return pins_[n] != 0; }
  BlockKey key(NodeId n) const { return keys_[n]; }
  NodeId parent(NodeId n) const { return parents_[n]; }
  uint32_t depth(NodeId n) const { return depths_[n]; }  // 0 = first block of a prompt
  uint32_t child_count(NodeId n) const { return children_[n]; }
  uint32_t pin_count(NodeId n) const { return pins_[n]; }
  Tier tier(NodeId n) const { return static_cast<Tier>(tiers_[n]); }
  void set_tier(NodeId n, Tier t) { tiers_[n] = static_cast<uint8_t>(t); }

  size_t size() const { return size_; }
  // One past the largest node id ever handed out: policies size their arrays to this.
  size_t id_limit() const { return keys_.size(); }
  // Bytes held by the tree itself (node arrays and hash table), for the memory budget.
  size_t memory_bytes() const;

  // Test support: checks every structural invariant; returns an empty string when sound.
  std::string check_invariants() const;

 private:
  size_t home(BlockKey key) const { return (key * 0x9e3779b97f4a7c15ULL) >> shift_; }
  void grow_table();
  void table_insert(NodeId id);
  void table_erase(NodeId id);

  // Node columns, indexed by NodeId.
  std::vector<BlockKey> keys_;
  std::vector<NodeId> parents_;
  std::vector<uint32_t> children_;
  std::vector<uint32_t> pins_;
  std::vector<uint32_t> depths_;
  std::vector<uint8_t> tiers_;
  std::vector<uint8_t> live_;
  std::vector<NodeId> free_ids_;

  // Open addressing with linear probing and backward-shift deletion; slots hold node ids and
  // the key is read from keys_, so a slot costs 4 bytes. Load factor stays at most 1/2.
  std::vector<NodeId> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace kvpolicy
