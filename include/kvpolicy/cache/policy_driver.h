// What the caches driven request by request share: PolicyTree (engines) and ServingCache
// (serve). A prefix tree and its policy, blocks held by counted holds (the tree pins a held
// block once), the policy told of every new node id, and eviction of the policy's victim,
// checked. The callers keep their own request cycles (docs/api.md, docs/serving.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kvpolicy/core/tree.h"
#include "kvpolicy/policy/policy.h"

namespace kvpolicy {

class PolicyDriver {
 public:
  // Builds the tree (room for min(capacity, 2^22) nodes before it grows) and the policy, with
  // ctx.tree and ctx.capacity_blocks set. Throws ConfigError from the policy's parameters.
  PolicyDriver(size_t capacity_blocks, const PolicySpec& spec, PolicyContext ctx);

  PrefixTree& tree() { return *tree_; }
  const PrefixTree& tree() const { return *tree_; }
  Policy& policy() { return *policy_; }
  const Policy& policy() const { return *policy_; }
  const std::string& label() const { return label_; }

  // A hold keeps n cached until released as often as held; the policy hears of n as
  // unevictable when its first hold makes it so, and evictable when the last is released.
  void hold(NodeId n) {
    if (holders_[n]++ > 0) return;
    ++pinned_;
    if (tree_->pin(n)) policy_->on_unevictable(n);
  }
  void release(NodeId n) {
    if (--holders_[n] > 0) return;
    --pinned_;
    if (tree_->unpin(n)) policy_->on_evictable(n);
  }
  uint32_t holders(NodeId n) const { return holders_[n]; }
  size_t pinned() const { return pinned_; }  // cached blocks with at least one hold

  // Inserts `key` under `parent` (kNoNode: a first block), held once; the policy is told of
  // new ids first (it hears of the node itself from the caller's on_access).
  NodeId insert_held(BlockKey key, NodeId parent);
  // Node ids the policy was told of; per-node arrays of the callers are this long.
  size_t ids() const { return ids_told_; }

  // A hold the policy is not told of: n already left the policy's order (victims() before
  // their commit), and only the tree keeps it.
  void hold_quietly(NodeId n) {
    if (holders_[n]++ > 0) return;
    ++pinned_;
    tree_->pin(n);
  }
  // Removes the childless node n whatever its holds; the policy hears nothing of n itself (it
  // has been told already), only of its parent if that becomes an evictable leaf.
  void remove_quietly(NodeId n);
  // Removes the childless node n whatever its holds, told to the policy as dropped by the owner
  // (Removal::kDropped, n pinned when told).
  void drop(NodeId n);

  struct Evicted {
    NodeId node = kNoNode;  // kNoNode: the policy named no victim
    BlockKey key = 0;
    NodeId parent = kNoNode;  // its parent when it was removed (kNoNode: a first block)
    BlockKey parent_key = 0;
    uint32_t depth = 0;
    // Its retention priority as it left (read before on_removed resets it; only when asked,
    // else the default): the minimum priority for offload compares it (docs/serve.md).
    int32_t priority = RetentionSettings{}.default_priority;
  };
  // Removes the policy's victim. `check`: throws Error when it is not an evictable block, and
  // when asking again names another (`ask_twice`: a victim() with side effects).
  // `read_priority`: fills Evicted::priority from the policy.
  Evicted evict(Time now, bool check, bool ask_twice, bool read_priority = false);

 private:
  void reserve_ids();

  std::unique_ptr<PrefixTree> tree_;
  std::unique_ptr<Policy> policy_;
  std::string label_;
  size_t ids_told_ = 0;            // the tree's id limit the policy was last told of
  std::vector<uint32_t> holders_;  // per node: its holds
  size_t pinned_ = 0;
};

}  // namespace kvpolicy
