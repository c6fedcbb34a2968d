// ServingCache with lower tiers (docs/serve.md, "Memory tiers"): the admission that looks past
// the HBM prefix into DRAM, SSD and the remote pool and promotes what it finds, and the
// hand-over of HBM's victims and newly computed blocks. With one lower tier, exclusive and
// write-back, each policy hears the calls replay's two-tier walk makes (policy/walk.h), so the
// hits are replay's when requests do not overlap (tested).
#include <algorithm>

#include "kvpolicy/cache/serving_cache.h"
#include "kvpolicy/core/error.h"

namespace kvpolicy {

void ServingCache::set_tiers(std::unique_ptr<LowerTiers> tiers) {
  tiers_ = std::move(tiers);
  if (!tiers_) return;
  tiers_->attach(tree_);
  tiers_->set_checking(checking_);
  reserve_ids();
}

void ServingCache::demote_victim(const PolicyDriver::Evicted& e, Time now) {
  // A block whose prefill never reached it (its request was preempted) holds no KV to keep.
  if (!computed_[e.node]) {
    tiers_->hbm_removed(e.key);
    return;
  }
  if (e.priority < tiers_->offload_min_priority()) {  // (-1 when off: never)
    tiers_->skip_offload(e.key);
    return;
  }
  TierStore::Block b;
  b.key = e.key;
  b.parent = e.parent_key;
  b.has_parent = e.parent != kNoNode;
  b.position = e.depth;
  b.last_access = last_access_[e.node];
  AccessInfo info = cycle_info_;
  info.now = now;
  tiers_->demote(b, info, swap_);
}

void ServingCache::write_through(NodeId n, Time now) {
  if (tiers_->write_mode() != WriteMode::kWriteThrough) return;
  TierStore::Block b;
  b.key = tree_->key(n);
  NodeId p = tree_->parent(n);
  b.has_parent = p != kNoNode;
  if (b.has_parent) b.parent = tree_->key(p);
  b.position = tree_->depth(n);
  b.last_access = last_access_[n];
  AccessInfo info = cycle_info_;
  info.now = now;  // the end of the iteration that computed it
  tiers_->computed(b, info);
}

uint32_t ServingCache::reusable_prefix(std::span<const BlockKey> keys) {
  const uint32_t hbm_hits = computed_prefix(keys);
  if (!tiers_ || hbm_hits >= keys.size() || tree_->find(keys[hbm_hits]) != kNoNode) return hbm_hits;
  found_.clear();  // admission's buffer: admit_tiered looks up again
  tiers_->lookup(keys, hbm_hits, found_);
  return hbm_hits + static_cast<uint32_t>(found_.size());
}

uint32_t ServingCache::admit_tiered(const RequestView& r, size_t private_blocks,
                                    std::vector<NodeId>& path, uint32_t allocate) {
  const uint32_t hbm_hits = computed_prefix(r.blocks);
  found_.clear();
  // Past the HBM prefix, unless its next block is in HBM uncomputed (being prefilled).
  if (hbm_hits < r.blocks.size() && tree_->find(r.blocks[hbm_hits]) == kNoNode)
    tiers_->lookup(r.blocks, hbm_hits, found_);
  last_tier_hits_.fill(0);
  for (uint8_t t : found_) ++last_tier_hits_[t];
  path.clear();
  cycle_info_ = AccessInfo::of_request(r);
  policy_->on_request_begin(r);
  tiers_->begin(r);
  // The hits are held in their tiers while they move up (replay pins its whole path first).
  for (size_t j = 0; j < found_.size(); ++j) tiers_->tier(found_[j]).pin(r.blocks[hbm_hits + j]);
  const bool exclusive = tiers_->placement() == Placement::kExclusive;
  AccessInfo info = AccessInfo::of_request(r);
  NodeId parent = kNoNode;
  for (uint32_t i = 0; i < r.blocks.size(); ++i) {
    info.position = i;
    info.access = r.first_access + i;
    const BlockKey key = r.blocks[i];
    if (i >= hbm_hits && i - hbm_hits < found_.size()) {
      const size_t t = found_[i - hbm_hits];
      if (free_blocks() == 0) {
        swap_ = exclusive && t == 0 && !tiers_->is_remote(0);
        bool ok = evict_one(r.time);
        swap_ = false;
        if (!ok)
          throw Error("serve: admitted a request that does not fit (a bug: fits() said it did)");
      }
      info.kind = AccessKind::kPromoted;
      tiers_->read(t, key, info);
      if (!exclusive || tiers_->is_remote(t)) tiers_->tier(t).unpin(key);
      NodeId n = driver_->insert_held(key, parent);
      reserve_ids();
      computed_[n] = 1;  // its KV arrives with the transfer the worker charges
      policy_->on_access(n, info);
      tiers_->hbm_added(key);
      parent = n;
    } else {
      // As admit_chunked(): blocks from `allocate` on are placed without memory.
      info.kind = AccessKind::kInserted;
      parent = place_prompt_block(key, parent, info, i < allocate, r.time);
    }
    path.push_back(parent);
  }
  reserve_private(private_blocks, r.time);
  for (size_t j = 0; j < path.size(); ++j) last_access_[path[j]] = r.first_access + j;
  policy_->on_request_end(r, path);
  tiers_->end(r);
  return hbm_hits + static_cast<uint32_t>(found_.size());
}

}  // namespace kvpolicy
