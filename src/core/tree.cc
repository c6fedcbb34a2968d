#include "kvpolicy/core/tree.h"

#include <algorithm>
#include <string>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

PrefixTree::PrefixTree(size_t reserve_nodes) {
  slots_.assign(std::max<size_t>(16, reserve_nodes * 2), Slot{kNoNode, 0});
  nodes_.reserve(reserve_nodes);
}

NodeId PrefixTree::demote(NodeId node) {
  Node& n = at(node);
  n.in_dram = 1;
  if (n.parent == kNoNode) return kNoNode;
  Node& p = nodes_[n.parent];
  --p.hbm_children;
  return p.pins == 0 && tier_children(p) == 0 ? n.parent : kNoNode;
}

bool PrefixTree::promote(NodeId node) {
  Node& n = at(node);
  n.in_dram = 0;
  if (n.parent == kNoNode) return false;
  Node& p = nodes_[n.parent];
  bool was_evictable = p.pins == 0 && tier_children(p) == 0;
  ++p.hbm_children;
  return was_evictable;
}

void PrefixTree::grow_table() {
  slots_.assign(slots_.size() * 2, Slot{kNoNode, 0});
  for (NodeId id = 0; id < nodes_.size(); ++id)
    if (nodes_[id].depth != kFree) table_insert(id);
}

void PrefixTree::throw_bad_node(NodeId node) const {
  throw Error("prefix tree: node id " + std::to_string(node) + " was never handed out (" +
              std::to_string(nodes_.size()) + " ids so far)");
}

void PrefixTree::throw_too_deep() {
  throw Error("a prompt is longer than " + std::to_string(kMaxDepth + 1) +
              " blocks, the prefix tree's limit");
}

void PrefixTree::throw_not_flat_root() {
  throw Error("prefix tree: set_root_depth on a node with a parent or children (a bug)");
}

void PrefixTree::throw_too_many_pins(NodeId node) {
  throw Error("block " + std::to_string(node) + " is pinned by more than " +
              std::to_string(kMaxPins) + " requests at once, the prefix tree's limit");
}

size_t PrefixTree::memory_bytes() const {
  return nodes_.capacity() * sizeof(Node) + slots_.capacity() * sizeof(Slot) +
         free_ids_.capacity() * sizeof(NodeId);
}

std::string PrefixTree::check_invariants() const {
  std::vector<uint32_t> counted(nodes_.size(), 0), counted_hbm(nodes_.size(), 0);
  size_t live = 0;
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    if (!contains(id)) continue;
    ++live;
    if (find(nodes_[id].key) != id) return "node " + std::to_string(id) + " not found by its key";
    NodeId p = nodes_[id].parent;
    if (p != kNoNode) {
      if (!contains(p)) return "node " + std::to_string(id) + " has an uncached parent";
      if (nodes_[id].depth != nodes_[p].depth + 1) return "depth mismatch at " + std::to_string(id);
      ++counted[p];
      if (!nodes_[id].in_dram) {
        if (nodes_[p].in_dram) return "HBM node " + std::to_string(id) + " under a DRAM parent";
        ++counted_hbm[p];
      }
    } else if (nodes_[id].depth != 0 && !flat_depths_) {
      return "root-level node " + std::to_string(id) + " has nonzero depth";
    }
  }
  if (live != size_) return "size mismatch";
  for (NodeId id = 0; id < nodes_.size(); ++id)
    if (contains(id) &&
        (counted[id] != nodes_[id].children || counted_hbm[id] != nodes_[id].hbm_children))
      return "child count mismatch at " + std::to_string(id);
  size_t occupied = 0;
  for (const Slot& s : slots_) occupied += s.id != kNoNode;
  if (occupied != size_) return "hash table holds " + std::to_string(occupied) + " entries";
  return {};
}

}  // namespace kvpolicy
