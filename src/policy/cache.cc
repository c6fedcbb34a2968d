#include <string>

#include "cache_access.h"
#include "kvpolicy/error.h"

namespace kvpolicy {

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

void cache_detail::throw_not_evictable(NodeId v) {
  throw Error("policy returned node " + std::to_string(v) + " which is not evictable");
}

AccessResult Policy::access_in(PrefixCache& cache, const RequestView& r) {
  return cache.access_with(*this, r);
}

bool PrefixCache::make_room_dram(Time now, AccessResult& res) {
  NodeId v = checked_victim(*dram_policy_, Tier::kDram, now);
  if (v == kNoNode) return false;
  drop(*policy_, v, res);
  return true;
}

bool PrefixCache::demote(NodeId v, const AccessInfo& info, AccessResult& res, bool swap) {
  // A promotion swaps: the promoted block's DRAM place takes the victim.
  if (dram_size() >= dram_capacity_ + (swap ? 1 : 0) && !make_room_dram(info.now, res)) {
    // DRAM is all pinned: drop the victim instead, if no DRAM block hangs below it.
    if (!tree_->is_leaf(v)) return false;
    drop(*policy_, v, res);
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

}  // namespace kvpolicy
