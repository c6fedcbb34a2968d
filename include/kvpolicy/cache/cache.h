// PrefixCache: a prefix tree with one or two tiers, each run by an eviction policy built from
// the registry, and the walk that drives them (policy/walk.h). What replay, serve mode and an
// engine embedding kvpolicy call.
#pragma once

#include <memory>

#include "kvpolicy/core/tree.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"

namespace kvpolicy {

class PrefixCache {
 public:
  // Builds the policies from their specs; ctx.tree and ctx.capacity_blocks are set here.
  PrefixCache(size_t capacity_blocks, const PolicySpec& spec, PolicyContext ctx,
              size_t dram_capacity_blocks = 0, const PolicySpec& dram_spec = {"lru", ""});
  // Takes an already-built one-tier policy (tests); it must have been made with `tree`.
  PrefixCache(size_t capacity_blocks, std::unique_ptr<Policy> policy,
              std::unique_ptr<PrefixTree> tree);

  // Matches, pins, inserts with eviction and unpins one request. Policies built on
  // InlinedPolicy run it with their calls inlined (Policy::access_in).
  AccessResult access(const RequestView& request) { return policy_->access_in(*walk_, request); }

  const PrefixTree& tree() const { return *tree_; }
  Policy& policy() { return *policy_; }
  Policy* dram_policy() { return dram_policy_.get(); }
  size_t capacity() const { return walk_->capacity(); }
  size_t dram_capacity() const { return walk_->dram_capacity(); }
  size_t hbm_size() const { return walk_->hbm_size(); }
  size_t dram_size() const { return walk_->dram_size(); }
  // Checks (in tests) that every victim a policy returns is an evictable node of its tier, and
  // that victim() names it again when asked twice (it is a choice, with no side effects).
  void set_checking(bool on) { walk_->set_checking(on); }
  // With a DRAM tier: the minimum priority for offload (RequestWalk); -1 = off.
  void set_offload_min_priority(int32_t p) { walk_->set_offload_min_priority(p); }
  size_t memory_bytes() const;

 private:
  std::unique_ptr<PrefixTree> tree_;
  std::unique_ptr<RequestWalk> walk_;
  std::unique_ptr<Policy> policy_;
  std::unique_ptr<Policy> dram_policy_;
};

}  // namespace kvpolicy
