// A prefix tree driven by one policy: match, pin, insert with eviction, unpin.
#pragma once

#include <memory>
#include <vector>

#include "kvpolicy/policy.h"
#include "kvpolicy/tree.h"

namespace kvpolicy {

struct AccessResult {
  uint32_t hit_blocks = 0;       // longest cached prefix, in blocks
  uint32_t inserted_blocks = 0;  // blocks added (the rest of the prompt if room allowed)
  uint32_t evictions = 0;
};

class PrefixCache {
 public:
  // Builds the policy from `spec`; ctx.tree is set to this cache's tree.
  PrefixCache(size_t capacity_blocks, const PolicySpec& spec, PolicyContext ctx);
  // Takes an already-built policy (tests); the policy must have been made with tree().
  PrefixCache(size_t capacity_blocks, std::unique_ptr<Policy> policy,
              std::unique_ptr<PrefixTree> tree);

  AccessResult access(const RequestView& request);

  const PrefixTree& tree() const { return *tree_; }
  Policy& policy() { return *policy_; }
  size_t capacity() const { return capacity_; }
  // Checks (in tests) that every victim the policy returns is an evictable leaf.
  void set_checking(bool on) { checking_ = on; }

 private:
  bool make_room(Time now);

  size_t capacity_;
  std::unique_ptr<PrefixTree> tree_;
  std::unique_ptr<Policy> policy_;
  std::vector<NodeId> path_;
  bool checking_ = false;
};

}  // namespace kvpolicy
