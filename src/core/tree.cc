#include "kvpolicy/tree.h"

#include <algorithm>
#include <bit>
#include <string>

namespace kvpolicy {

PrefixTree::PrefixTree(size_t reserve_nodes) {
  size_t slots = std::bit_ceil(std::max<size_t>(16, reserve_nodes * 2));
  slots_.assign(slots, kNoNode);
  mask_ = slots - 1;
  shift_ = 64 - std::countr_zero(slots);
  keys_.reserve(reserve_nodes);
  parents_.reserve(reserve_nodes);
  children_.reserve(reserve_nodes);
  pins_.reserve(reserve_nodes);
  depths_.reserve(reserve_nodes);
  tiers_.reserve(reserve_nodes);
  live_.reserve(reserve_nodes);
}

NodeId PrefixTree::insert(BlockKey key, NodeId parent) {
  NodeId id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<NodeId>(keys_.size());
    keys_.push_back(0);
    parents_.push_back(kNoNode);
    children_.push_back(0);
    pins_.push_back(0);
    depths_.push_back(0);
    tiers_.push_back(0);
    live_.push_back(0);
  }
  keys_[id] = key;
  parents_[id] = parent;
  children_[id] = 0;
  pins_[id] = 1;
  depths_[id] = parent == kNoNode ? 0 : depths_[parent] + 1;
  tiers_[id] = 0;
  live_[id] = 1;
  if (parent != kNoNode) ++children_[parent];
  if ((size_ + 1) * 2 > slots_.size()) grow_table();
  table_insert(id);
  ++size_;
  return id;
}

NodeId PrefixTree::remove(NodeId node) {
  table_erase(node);
  --size_;
  live_[node] = 0;
  free_ids_.push_back(node);
  NodeId parent = parents_[node];
  if (parent != kNoNode && --children_[parent] == 0 && pins_[parent] == 0) return parent;
  return kNoNode;
}

void PrefixTree::table_insert(NodeId id) {
  size_t slot = home(keys_[id]);
  while (slots_[slot] != kNoNode) slot = (slot + 1) & mask_;
  slots_[slot] = id;
}

void PrefixTree::table_erase(NodeId id) {
  size_t slot = home(keys_[id]);
  while (slots_[slot] != id) slot = (slot + 1) & mask_;
  // Backward-shift: pull later entries of the probe run into the hole, so no tombstones.
  size_t hole = slot;
  for (size_t next = (hole + 1) & mask_; slots_[next] != kNoNode; next = (next + 1) & mask_) {
    size_t want = home(keys_[slots_[next]]);
    // Move the entry if its home is not in the cyclic range (hole, next].
    bool stays = hole <= next ? (hole < want && want <= next) : (hole < want || want <= next);
    if (!stays) {
      slots_[hole] = slots_[next];
      hole = next;
    }
  }
  slots_[hole] = kNoNode;
}

void PrefixTree::grow_table() {
  size_t slots = slots_.size() * 2;
  slots_.assign(slots, kNoNode);
  mask_ = slots - 1;
  shift_ = 64 - std::countr_zero(slots);
  for (NodeId id = 0; id < keys_.size(); ++id)
    if (live_[id]) table_insert(id);
}

size_t PrefixTree::memory_bytes() const {
  size_t per_node = sizeof(BlockKey) + sizeof(NodeId) + 3 * sizeof(uint32_t) + 2;
  return keys_.capacity() * per_node + slots_.capacity() * sizeof(NodeId) +
         free_ids_.capacity() * sizeof(NodeId);
}

std::string PrefixTree::check_invariants() const {
  std::vector<uint32_t> counted(keys_.size(), 0);
  size_t live = 0;
  for (NodeId id = 0; id < keys_.size(); ++id) {
    if (!live_[id]) continue;
    ++live;
    if (find(keys_[id]) != id) return "node " + std::to_string(id) + " not found by its key";
    NodeId p = parents_[id];
    if (p != kNoNode) {
      if (!live_[p]) return "node " + std::to_string(id) + " has an uncached parent";
      if (depths_[id] != depths_[p] + 1) return "depth mismatch at " + std::to_string(id);
      ++counted[p];
    } else if (depths_[id] != 0) {
      return "root-level node " + std::to_string(id) + " has nonzero depth";
    }
  }
  if (live != size_) return "size mismatch";
  for (NodeId id = 0; id < keys_.size(); ++id)
    if (live_[id] && counted[id] != children_[id])
      return "child count mismatch at " + std::to_string(id);
  size_t occupied = 0;
  for (NodeId s : slots_) occupied += s != kNoNode;
  if (occupied != size_) return "hash table holds " + std::to_string(occupied) + " entries";
  return {};
}

}  // namespace kvpolicy
