#include "kvpolicy/cache.h"

#include <algorithm>

#include "kvpolicy/error.h"

namespace kvpolicy {
namespace {
// How many blocks ahead of the walk the hash slots, and then the nodes they name, are
// prefetched.
constexpr uint32_t kSlotsAhead = 16, kNodesAhead = 8;
}  // namespace

RequestView request_view(const Trace& trace, size_t r) {
  RequestView v;
  v.index = static_cast<RequestIndex>(r);
  v.time = trace.time[r];
  v.session = trace.session[r];
  v.turn = trace.turn[r];
  v.category = trace.category[r];
  v.prompt_tokens = trace.prompt_tokens[r];
  v.output_tokens = trace.output_tokens[r];
  v.first_access = trace.block_offset[r];
  v.blocks = trace.prompt(r);
  return v;
}

PrefixCache::PrefixCache(size_t capacity_blocks, const PolicySpec& spec, PolicyContext ctx,
                         size_t dram_capacity_blocks, const PolicySpec& dram_spec)
    : capacity_(capacity_blocks),
      dram_capacity_(dram_capacity_blocks),
      tree_(std::make_unique<PrefixTree>(
          std::min<size_t>(capacity_blocks + dram_capacity_blocks, 1 << 22))) {
  if (capacity_blocks == 0) throw ConfigError("cache capacity must be at least one block");
  ctx.tree = tree_.get();
  ctx.capacity_blocks = capacity_blocks;
  policy_ = make_policy(spec, ctx);
  if (dram_capacity_ > 0) {
    ctx.capacity_blocks = dram_capacity_;
    dram_policy_ = make_policy(dram_spec, ctx);
  }
}

PrefixCache::PrefixCache(size_t capacity_blocks, std::unique_ptr<Policy> policy,
                         std::unique_ptr<PrefixTree> tree)
    : capacity_(capacity_blocks), tree_(std::move(tree)), policy_(std::move(policy)) {
  if (capacity_blocks == 0) throw ConfigError("cache capacity must be at least one block");
}

size_t PrefixCache::memory_bytes() const {
  return tree_->memory_bytes() + policy_->memory_bytes() +
         (dram_policy_ ? dram_policy_->memory_bytes() : 0) + last_access_.capacity() * 8;
}

namespace {
[[noreturn, gnu::cold]] void throw_not_evictable(NodeId v) {
  throw Error("policy returned node " + std::to_string(v) + " which is not evictable");
}
}  // namespace

inline NodeId PrefixCache::checked_victim(Policy& policy, Tier tier, Time now) {
  NodeId v = policy.victim(now);
  if (checking_ && v != kNoNode &&
      (!tree_->contains(v) || !tree_->is_evictable(v) || tree_->tier(v) != tier))
    throw_not_evictable(v);
  return v;
}

inline void PrefixCache::drop(NodeId v, AccessResult& res) {
  tree_->prefetch_removal(v);  // its misses overlap with the policy's own bookkeeping
  policy_of(v).on_removed(v);
  if (tree_->tier(v) == Tier::kHbm) --hbm_size_;
  NodeId parent = tree_->remove(v);
  if (parent != kNoNode) policy_of(parent).on_evictable(parent);
  ++res.evictions;
}

bool PrefixCache::make_room_dram(Time now, AccessResult& res) {
  NodeId v = checked_victim(*dram_policy_, Tier::kDram, now);
  if (v == kNoNode) return false;
  drop(v, res);
  return true;
}

inline bool PrefixCache::make_room_hbm(const AccessInfo& info, AccessResult& res, bool swap) {
  NodeId v = checked_victim(*policy_, Tier::kHbm, info.now);
  if (v == kNoNode) return false;
  if (dram_capacity_ == 0) {
    drop(v, res);
    return true;
  }
  return demote(v, info, res, swap);
}

bool PrefixCache::demote(NodeId v, const AccessInfo& info, AccessResult& res, bool swap) {
  // A promotion swaps: the promoted block's DRAM place takes the victim.
  if (dram_size() >= dram_capacity_ + (swap ? 1 : 0) && !make_room_dram(info.now, res)) {
    // DRAM is all pinned: drop the victim instead, if no DRAM block hangs below it.
    if (!tree_->is_leaf(v)) return false;
    drop(v, res);
    return true;
  }
  policy_->on_removed(v);
  NodeId parent = tree_->demote(v);
  --hbm_size_;
  ++res.demotions;
  if (parent != kNoNode) policy_->on_evictable(parent);
  // To the DRAM policy the block is new; its last access is where it was last used.
  AccessInfo demoted = info;
  demoted.access = last_access_[v];
  demoted.position = tree_->depth(v);
  demoted.hit = false;
  dram_policy_->on_access(v, demoted);
  if (tree_->is_evictable(v)) dram_policy_->on_evictable(v);
  return true;
}

AccessResult PrefixCache::access(const RequestView& r) {
  AccessResult res;
  policy_->on_request_begin(r);
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
  for (uint32_t k = 0; k < std::min(n, kNodesAhead); ++k) tree_->prefetch_node(r.blocks[k]);
  info.hit = true;
  for (; i < n; ++i) {
    if (i + kSlotsAhead < n) tree_->prefetch_slot(r.blocks[i + kSlotsAhead]);
    if (i + kNodesAhead < n) tree_->prefetch_node(r.blocks[i + kNodesAhead]);
    NodeId node = tree_->find(r.blocks[i]);
    if (node == kNoNode) break;
    if (tree_->pin(node)) policy_of(node).on_unevictable(node);
    path_.push_back(node);
    if (tree_->tier(node) == Tier::kHbm) {
      info.position = i;
      info.access = r.first_access + i;
      policy_->on_access(node, info);
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
    if (hbm_size_ >= capacity_ && !make_room_hbm(info, res, /*swap=*/true)) {
      in_hbm = false;
      break;
    }
    NodeId node = path_[j];
    dram_policy_->on_removed(node);
    tree_->promote(node);  // its parent is in HBM and pinned: no transition to report
    ++hbm_size_;
    policy_->on_access(node, info);
  }

  NodeId parent = path_.empty() ? kNoNode : path_.back();
  for (; in_hbm && i < n; ++i) {
    if (i + kSlotsAhead < n) tree_->prefetch_slot(r.blocks[i + kSlotsAhead]);
    info.position = i;
    info.access = r.first_access + i;
    if (hbm_size_ >= capacity_ && !make_room_hbm(info, res, /*swap=*/false))
      break;  // everything left is pinned: the rest stays uncached
    NodeId node = tree_->insert(r.blocks[i], parent);
    ++hbm_size_;
    path_.push_back(node);
    policy_->on_access(node, info);
    parent = node;
    ++res.inserted_blocks;
  }

  if (dram_policy_) {
    last_access_.resize(std::max(last_access_.size(), tree_->id_limit()));
    for (size_t j = 0; j < path_.size(); ++j) last_access_[path_[j]] = r.first_access + j;
  }
  policy_->on_request_end(r, path_);
  if (dram_policy_) dram_policy_->on_request_end(r, path_);
  for (size_t j = path_.size(); j-- > 0;)
    if (tree_->unpin(path_[j])) policy_of(path_[j]).on_evictable(path_[j]);
  return res;
}

}  // namespace kvpolicy
