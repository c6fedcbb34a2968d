// PrefixCache::access_with, the replay's hot path, as a template over the HBM policy's type:
// instantiated for a final policy class, its calls are direct and mostly inlined. Internal to
// src/policy.
#pragma once

#include <algorithm>

#include "kvpolicy/cache.h"

namespace kvpolicy {

// The base of a final policy class whose replay inlines its calls: `class Lru final : public
// InlinedPolicy<Lru>`, or `InlinedPolicy<Fpb, LearnedPolicy>` over a shared base. Wrappers
// (ForwardingPolicy) keep the virtual path, so they see every call.
template <typename Self, typename Base = Policy>
class InlinedPolicy : public Base {
 public:
  using Base::Base;
  AccessResult access_in(PrefixCache& cache, const RequestView& r) final {
    return cache.access_with(static_cast<Self&>(*this), r);
  }
};

namespace cache_detail {
// How many blocks ahead of the walk the hash slots, and then the nodes they name, are
// prefetched.
constexpr uint32_t kSlotsAhead = 16, kNodesAhead = 8;
[[noreturn, gnu::cold]] void throw_not_evictable(NodeId v);
}  // namespace cache_detail

template <typename P>
[[gnu::always_inline]] inline void PrefixCache::prefetch_ahead(const P& hbm, BlockKey key) const {
  NodeId node = tree_->prefetch_node(key);
  if (node != kNoNode) {
    hbm.prefetch_for_access(node);
  } else {
    hbm.prefetch_for_insert(key);
  }
}

template <typename P>
inline void PrefixCache::tell_evictable(P& hbm, NodeId n) {
  if (tree_->tier(n) == Tier::kHbm) {
    hbm.on_evictable(n);
  } else {
    dram_policy_->on_evictable(n);
  }
}

template <typename P>
inline NodeId PrefixCache::checked_victim(P& policy, Tier tier, Time now) {
  NodeId v = policy.victim(now);
  if (checking_ && v != kNoNode &&
      (!tree_->contains(v) || !tree_->is_evictable(v) || tree_->tier(v) != tier))
    cache_detail::throw_not_evictable(v);
  return v;
}

template <typename P>
inline void PrefixCache::drop(P& hbm, NodeId v, AccessResult& res) {
  tree_->prefetch_removal(v);  // its misses overlap with the policy's own bookkeeping
  if (tree_->tier(v) == Tier::kHbm) {
    hbm.on_removed(v);
    --hbm_size_;
  } else {
    dram_policy_->on_removed(v);
  }
  NodeId parent = tree_->remove(v);
  if (parent != kNoNode) {
    tree_->prefetch_removal(parent);  // evictions run down chains: often the next victim
    tell_evictable(hbm, parent);
  }
  ++res.evictions;
}

template <typename P>
inline bool PrefixCache::make_room_hbm(P& hbm, const AccessInfo& info, AccessResult& res,
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
AccessResult PrefixCache::access_with(P& hbm, const RequestView& r) {
  using cache_detail::kNodesAhead;
  using cache_detail::kSlotsAhead;
  AccessResult res;
  hbm.on_request_begin(r);
  if (dram_policy_) dram_policy_->on_request_begin(r);
  path_.clear();
  AccessInfo info;
  info.now = r.time;
  info.req = r.index;
  info.session = r.session;
  info.turn = r.turn;
  info.category = r.category;
  info.prompt_blocks = static_cast<uint32_t>(r.blocks.size());

  // Longest cached prefix: HBM blocks first, then DRAM ones; the first miss ends it.
  uint32_t n = info.prompt_blocks, i = 0, first_dram = n;
  for (uint32_t k = 0; k < std::min(n, kSlotsAhead); ++k) tree_->prefetch_slot(r.blocks[k]);
  for (uint32_t k = 0; k < std::min(n, kNodesAhead); ++k) prefetch_ahead(hbm, r.blocks[k]);
  info.hit = true;
  for (; i < n; ++i) {
    if (i + kSlotsAhead < n) tree_->prefetch_slot(r.blocks[i + kSlotsAhead]);
    if (i + kNodesAhead < n) prefetch_ahead(hbm, r.blocks[i + kNodesAhead]);
    NodeId node = tree_->find(r.blocks[i]);
    if (node == kNoNode) break;
    if (tree_->pin(node)) {
      if (tree_->tier(node) == Tier::kHbm) {
        hbm.on_unevictable(node);
      } else {
        dram_policy_->on_unevictable(node);
      }
    }
    path_.push_back(node);
    if (tree_->tier(node) == Tier::kHbm) {
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

  // DRAM hits are promoted to HBM in prefix order; to the HBM policy they are new blocks.
  info.hit = false;
  for (uint32_t j = first_dram; j < i; ++j) {
    info.position = j;
    info.access = r.first_access + j;
    if (hbm_size_ >= capacity_ && !make_room_hbm(hbm, info, res, /*swap=*/true)) {
      in_hbm = false;
      break;
    }
    NodeId node = path_[j];
    dram_policy_->on_removed(node);
    tree_->promote(node);  // its parent is in HBM and pinned: no transition to report
    ++hbm_size_;
    hbm.on_access(node, info);
  }

  NodeId parent = path_.empty() ? kNoNode : path_.back();
  for (; in_hbm && i < n; ++i) {
    if (i + kSlotsAhead < n) tree_->prefetch_slot(r.blocks[i + kSlotsAhead]);
    info.position = i;
    info.access = r.first_access + i;
    if (hbm_size_ >= capacity_ && !make_room_hbm(hbm, info, res, /*swap=*/false))
      break;  // everything left is pinned: the rest stays uncached
    NodeId node = tree_->insert(r.blocks[i], parent);
    ++hbm_size_;
    path_.push_back(node);
    hbm.on_access(node, info);
    parent = node;
    ++res.inserted_blocks;
  }

  if (dram_policy_) {
    last_access_.resize(std::max(last_access_.size(), tree_->id_limit()));
    for (size_t j = 0; j < path_.size(); ++j) last_access_[path_[j]] = r.first_access + j;
  }
  hbm.on_request_end(r, path_);
  if (dram_policy_) dram_policy_->on_request_end(r, path_);
  for (size_t j = path_.size(); j-- > 0;) {
    NodeId node = path_[j];
    if (tree_->unpin(node)) tell_evictable(hbm, node);
  }
  return res;
}

}  // namespace kvpolicy
