// A prefix tree driven by policies: match, pin, promote, insert with eviction, unpin.
#pragma once

#include <memory>
#include <vector>

#include "kvpolicy/policy.h"
#include "kvpolicy/trace.h"
#include "kvpolicy/tree.h"

namespace kvpolicy {

struct AccessResult {
  uint32_t hit_blocks = 0;       // longest cached prefix in either tier, in blocks
  uint32_t dram_hit_blocks = 0;  // the part of it found in DRAM (transferred, not recomputed)
  uint32_t inserted_blocks = 0;  // blocks added (the rest of the prompt if room allowed)
  uint32_t evictions = 0;        // blocks dropped from the cache
  uint32_t demotions = 0;        // HBM blocks moved to DRAM
};

// Request r of `trace` as the cache sees it.
RequestView request_view(const Trace& trace, size_t r);

// One tier (HBM) by default; with a DRAM capacity, HBM victims are demoted to DRAM (run by its
// own policy instance) and DRAM hits are promoted back to HBM.
class PrefixCache {
 public:
  // Builds the policies from their specs; ctx.tree is set to this cache's tree.
  PrefixCache(size_t capacity_blocks, const PolicySpec& spec, PolicyContext ctx,
              size_t dram_capacity_blocks = 0, const PolicySpec& dram_spec = {"lru", ""});
  // Takes an already-built one-tier policy (tests); it must have been made with `tree`.
  PrefixCache(size_t capacity_blocks, std::unique_ptr<Policy> policy,
              std::unique_ptr<PrefixTree> tree);

  // Matches, pins, inserts with eviction and unpins one request. One-tier policies built on
  // InlinedPolicy run it with their calls inlined (Policy::access_in).
  AccessResult access(const RequestView& request) { return policy_->access_in(*this, request); }
  // access() with the HBM policy's calls bound to type P (P = Policy: virtual calls). Defined
  // in src/policy/cache_access.h; `hbm` must be this cache's policy().
  template <typename P>
  AccessResult access_with(P& hbm, const RequestView& request);

  const PrefixTree& tree() const { return *tree_; }
  Policy& policy() { return *policy_; }
  Policy* dram_policy() { return dram_policy_.get(); }
  size_t capacity() const { return capacity_; }
  size_t dram_capacity() const { return dram_capacity_; }
  size_t hbm_size() const { return hbm_size_; }
  size_t dram_size() const { return tree_->size() - hbm_size_; }
  // Checks (in tests) that every victim a policy returns is an evictable node of its tier.
  void set_checking(bool on) { checking_ = on; }
  size_t memory_bytes() const;

 private:
  // Prefetches the node `key` likely names, a few blocks ahead of the walk, and the HBM
  // policy's state for it; or, when no node is likely, what the policy reads to insert one.
  template <typename P>
  [[gnu::always_inline]] void prefetch_ahead(const P& hbm, BlockKey key) const;
  // Tells the policy of n's tier that n became evictable.
  template <typename P>
  [[gnu::always_inline]] void tell_evictable(P& hbm, NodeId n);
  // The one-tier replay runs through these for every eviction: always_inline keeps them in
  // access_with()'s body, and the two-tier work apart (demote).
  template <typename P>
  [[gnu::always_inline]] NodeId checked_victim(P& policy, Tier tier, Time now);
  // Evicts one HBM block: drops it, or with a DRAM tier demotes it; `swap` when a DRAM block
  // is about to move up.
  template <typename P>
  [[gnu::always_inline]] bool make_room_hbm(P& hbm, const AccessInfo& info, AccessResult& res,
                                            bool swap);
  bool demote(NodeId victim, const AccessInfo& info, AccessResult& res, bool swap);
  bool make_room_dram(Time now, AccessResult& res);
  template <typename P>
  [[gnu::always_inline]] void drop(P& hbm, NodeId victim, AccessResult& res);

  size_t capacity_;
  size_t dram_capacity_ = 0;
  size_t hbm_size_ = 0;
  std::unique_ptr<PrefixTree> tree_;
  std::unique_ptr<Policy> policy_;
  std::unique_ptr<Policy> dram_policy_;
  std::vector<NodeId> path_;
  std::vector<uint64_t> last_access_;  // per node, for the DRAM policy (two tiers only)
  bool checking_ = false;
};

}  // namespace kvpolicy
