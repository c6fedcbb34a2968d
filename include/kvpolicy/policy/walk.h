// RequestWalk: the hot loop of the cache, which walks one request through the prefix tree and
// tells the policies of its tiers what happens (the sequence in policy.h). It is a template over
// the HBM policy's type so that a policy built on InlinedPolicy instantiates it in its own file,
// with direct, inlined calls; that is why it lives with the contract and not in the cache layer
// above (PrefixCache, which builds and owns the tree, the walk and the policies).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "kvpolicy/core/access.h"
#include "kvpolicy/core/tree.h"
#include "kvpolicy/policy/policy.h"

namespace kvpolicy {

struct AccessResult {
  uint32_t hit_blocks = 0;       // longest cached prefix in either tier, in blocks
  uint32_t dram_hit_blocks = 0;  // the part of it found in DRAM (transferred, not recomputed)
  uint32_t inserted_blocks = 0;  // blocks added (the rest of the prompt if room allowed)
  uint32_t evictions = 0;        // blocks dropped from the cache
  uint32_t demotions = 0;        // HBM blocks moved to DRAM
  // HBM victims dropped instead of demoted: their retention priority was below the minimum
  // for offload (RequestWalk::set_offload_min_priority); counted in `evictions` too.
  uint32_t offload_skipped = 0;
};

// One tier (HBM) by default; with a DRAM capacity, HBM victims are demoted to DRAM (run by its
// own policy) and DRAM hits are promoted back to HBM.
class RequestWalk {
 public:
  // How many blocks ahead of the walk the hash slots, and then the nodes they name, are
  // prefetched.
  static constexpr uint32_t kSlotsAhead = 16, kNodesAhead = 8;

  RequestWalk(PrefixTree& tree, size_t capacity_blocks, size_t dram_capacity_blocks);
  // The policies of the tiers (dram only with a DRAM capacity); they must outlive the walk.
  void attach(Policy& hbm, Policy* dram);

  // Matches, pins, inserts with eviction and unpins one request. `hbm` is the attached HBM
  // policy, as its own type P (P = Policy: virtual calls).
  template <typename P>
  AccessResult access(P& hbm, const RequestView& request);

  size_t capacity() const { return capacity_; }
  size_t dram_capacity() const { return dram_capacity_; }
  size_t hbm_size() const { return hbm_size_; }
  size_t dram_size() const { return tree_.size() - hbm_size_; }
  // Checks (in tests) every victim: an evictable node of its tier, named again when asked twice.
  void set_checking(bool on) { checking_ = on; }
  // With a DRAM tier: TensorRT-LLM's minimum priority for offload (docs/serve.md, "Memory
  // tiers"): an HBM victim whose retention priority is below it is dropped, not demoted, unless
  // DRAM blocks hang below it (the tree needs it: demoted). -1 = off.
  void set_offload_min_priority(int32_t p) { offload_min_priority_ = p; }
  size_t memory_bytes() const { return last_access_.capacity() * sizeof(uint64_t); }

 private:
  // Prefetches the node `key` likely names, a few blocks ahead of the walk, and the HBM
  // policy's state for it; or, when no node is likely, what the policy reads to insert one.
  template <typename P>
  [[gnu::always_inline]] void prefetch_ahead(const P& hbm, BlockKey key) const;
  // Tells the policy of n's tier that n became evictable / unevictable.
  template <typename P>
  [[gnu::always_inline]] void tell_evictable(P& hbm, NodeId n);
  template <typename P>
  [[gnu::always_inline]] void tell_unevictable(P& hbm, NodeId n);
  // Tells both policies of node ids the tree may now hand out.
  template <typename P>
  [[gnu::always_inline]] void tell_id_limit(P& hbm);
  // The one-tier replay runs through these for every eviction: always_inline keeps them in
  // access()'s body, and the two-tier work apart (demote).
  template <typename P>
  [[gnu::always_inline]] NodeId checked_victim(P& policy, Tier tier, Time now);
  // Evicts one HBM block: drops it, or with a DRAM tier demotes it; `swap` when a DRAM block
  // is about to move up.
  template <typename P>
  [[gnu::always_inline]] bool make_room_hbm(P& hbm, const AccessInfo& info, AccessResult& res,
                                            bool swap);
  template <typename P>
  [[gnu::always_inline]] void drop(P& hbm, NodeId victim, AccessResult& res);
  bool demote(NodeId victim, const AccessInfo& info, AccessResult& res, bool swap);
  bool make_room_dram(Time now, AccessResult& res);
  [[noreturn, gnu::cold]] void throw_bad_victim(NodeId v, const char* why) const;

  PrefixTree& tree_;
  size_t capacity_;
  size_t dram_capacity_;
  size_t hbm_size_ = 0;
  size_t ids_told_ = 0;  // the tree's id limit the policies were last told of
  Policy* hbm_ = nullptr;
  Policy* dram_ = nullptr;
  std::vector<NodeId> path_;
  std::vector<uint64_t> last_access_;  // per node, for the DRAM policy (two tiers only)
  bool checking_ = false;
  int32_t offload_min_priority_ = -1;
};

// The base of a final policy class whose replay inlines its calls: `class Lru final : public
// InlinedPolicy<Lru>`, or `InlinedPolicy<Fpb, LearnedPolicy>` over a shared base. Wrappers
// (ForwardingPolicy) keep the virtual path, so they see every call.
template <typename Self, typename Base = Policy>
class InlinedPolicy : public Base {
 public:
  using Base::Base;
  AccessResult access_in(RequestWalk& walk, const RequestView& r) final {
    static_assert(
        requires { Self::kHooks; },
        "declare the optional hooks: static constexpr PolicyHooks kHooks{...} (policy.h)");
    static_assert(Self::kHooks.prefetch_for_access == HasPrefetchForAccess<Self>,
                  "kHooks.prefetch_for_access must match a `void prefetch_for_access(NodeId) "
                  "const` member");
    static_assert(Self::kHooks.prefetch_for_insert == HasPrefetchForInsert<Self>,
                  "kHooks.prefetch_for_insert must match a `void prefetch_for_insert(BlockKey) "
                  "const` member");
    return walk.access(static_cast<Self&>(*this), r);
  }
};

template <typename P>
[[gnu::always_inline]] inline void RequestWalk::prefetch_ahead(const P& hbm, BlockKey key) const {
  NodeId node = tree_.prefetch_node(key);
  if constexpr (hooks_of<P>().prefetch_for_access) {
    if (node != kNoNode) hbm.prefetch_for_access(node);
  }
  if constexpr (hooks_of<P>().prefetch_for_insert) {
    if (node == kNoNode) hbm.prefetch_for_insert(key);
  }
}

template <typename P>
inline void RequestWalk::tell_evictable(P& hbm, NodeId n) {
  if (tree_.tier(n) == Tier::kHbm) {
    hbm.on_evictable(n);
  } else {
    dram_->on_evictable(n);
  }
}

template <typename P>
inline void RequestWalk::tell_unevictable(P& hbm, NodeId n) {
  if (tree_.tier(n) == Tier::kHbm) {
    hbm.on_unevictable(n);
  } else {
    dram_->on_unevictable(n);
  }
}

template <typename P>
inline void RequestWalk::tell_id_limit(P& hbm) {
  if (tree_.id_limit() == ids_told_) return;
  ids_told_ = tree_.id_limit();
  hbm.reserve_ids(ids_told_);
  if (dram_) dram_->reserve_ids(ids_told_);
}

template <typename P>
inline NodeId RequestWalk::checked_victim(P& policy, Tier tier, Time now) {
  NodeId v = policy.victim(now);
  if (checking_ && v != kNoNode) {
    if (!tree_.contains(v) || !tree_.is_evictable(v) || tree_.tier(v) != tier)
      throw_bad_victim(v, "is not an evictable block of its tier");
    if (policy.victim(now) != v) throw_bad_victim(v, "was not named again when asked twice");
  }
  return v;
}

template <typename P>
inline void RequestWalk::drop(P& hbm, NodeId v, AccessResult& res) {
  tree_.prefetch_removal(v);  // its misses overlap with the policy's own bookkeeping
  if (tree_.tier(v) == Tier::kHbm) {
    hbm.on_removed(v, Removal::kEvicted);
    --hbm_size_;
  } else {
    dram_->on_removed(v, Removal::kEvicted);
  }
  NodeId parent = tree_.remove(v);
  if (parent != kNoNode) {
    tree_.prefetch_removal(parent);  // evictions run down chains: often the next victim
    tell_evictable(hbm, parent);
  }
  ++res.evictions;
}

template <typename P>
inline bool RequestWalk::make_room_hbm(P& hbm, const AccessInfo& info, AccessResult& res,
                                       bool swap) {
  NodeId v = checked_victim(hbm, Tier::kHbm, info.now);
  if (v == kNoNode) return false;
  if (dram_capacity_ == 0) {
    drop(hbm, v, res);
    return true;
  }
  return demote(v, info, res, swap);
}

template <typename P>
AccessResult RequestWalk::access(P& hbm, const RequestView& r) {
  AccessResult res;
  hbm.on_request_begin(r);
  if (dram_) dram_->on_request_begin(r);
  path_.clear();
  AccessInfo info = AccessInfo::of_request(r);

  // Longest cached prefix: HBM blocks first, then DRAM ones; the first miss ends it.
  uint32_t n = info.prompt_blocks, i = 0, first_dram = n;
  for (uint32_t k = 0; k < std::min(n, kSlotsAhead); ++k) tree_.prefetch_slot(r.blocks[k]);
  for (uint32_t k = 0; k < std::min(n, kNodesAhead); ++k) prefetch_ahead(hbm, r.blocks[k]);
  info.kind = AccessKind::kReused;
  for (; i < n; ++i) {
    if (i + kSlotsAhead < n) tree_.prefetch_slot(r.blocks[i + kSlotsAhead]);
    if (i + kNodesAhead < n) prefetch_ahead(hbm, r.blocks[i + kNodesAhead]);
    NodeId node = tree_.find(r.blocks[i]);
    if (node == kNoNode) break;
    if (tree_.pin(node)) tell_unevictable(hbm, node);
    path_.push_back(node);
    if (tree_.tier(node) == Tier::kHbm) {
      info.position = i;
      info.access = r.first_access + i;
      hbm.on_access(node, info);
    } else if (first_dram == n) {
      first_dram = i;
    }
  }
  res.hit_blocks = i;
  res.dram_hit_blocks = first_dram < i ? i - first_dram : 0;
  bool in_hbm = true;  // whether the whole matched path is (now) in HBM

  // DRAM hits are promoted to HBM in prefix order.
  info.kind = AccessKind::kPromoted;
  for (uint32_t j = first_dram; j < i; ++j) {
    info.position = j;
    info.access = r.first_access + j;
    if (hbm_size_ >= capacity_ && !make_room_hbm(hbm, info, res, /*swap=*/true)) {
      in_hbm = false;
      break;
    }
    NodeId node = path_[j];
    dram_->on_removed(node, Removal::kPromoted);
    tree_.promote(node);  // its parent is in HBM and pinned: no transition to report
    ++hbm_size_;
    hbm.on_access(node, info);
  }

  info.kind = AccessKind::kInserted;
  NodeId parent = path_.empty() ? kNoNode : path_.back();
  for (; in_hbm && i < n; ++i) {
    if (i + kSlotsAhead < n) tree_.prefetch_slot(r.blocks[i + kSlotsAhead]);
    info.position = i;
    info.access = r.first_access + i;
    if (hbm_size_ >= capacity_ && !make_room_hbm(hbm, info, res, /*swap=*/false))
      break;  // everything left is pinned: the rest stays uncached
    NodeId node = tree_.insert(r.blocks[i], parent);
    tell_id_limit(hbm);
    ++hbm_size_;
    path_.push_back(node);
    hbm.on_access(node, info);
    parent = node;
    ++res.inserted_blocks;
  }

  if (dram_) {
    last_access_.resize(std::max(last_access_.size(), tree_.id_limit()));
    for (size_t j = 0; j < path_.size(); ++j) last_access_[path_[j]] = r.first_access + j;
  }
  hbm.on_request_end(r, path_);
  if (dram_) dram_->on_request_end(r, path_);
  for (size_t j = path_.size(); j-- > 0;) {
    NodeId node = path_[j];
    if (tree_.unpin(node)) tell_evictable(hbm, node);
  }
  return res;
}

}  // namespace kvpolicy
