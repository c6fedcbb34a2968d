// RequestWalk's two-tier paths and checks, out of the hot loop (walk.h).
#include "kvpolicy/policy/walk.h"

#include <string>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

RequestWalk::RequestWalk(PrefixTree& tree, size_t capacity_blocks, size_t dram_capacity_blocks)
    : tree_(tree), capacity_(capacity_blocks), dram_capacity_(dram_capacity_blocks) {}

void RequestWalk::attach(Policy& hbm, Policy* dram) {
  hbm_ = &hbm;
  dram_ = dram;
  ids_told_ = tree_.id_limit();
  hbm.reserve_ids(ids_told_);
  if (dram_) dram_->reserve_ids(ids_told_);
}

void RequestWalk::throw_bad_victim(NodeId v, const char* why) const {
  throw Error("policy returned victim node " + std::to_string(v) + ", which " + why);
}

AccessResult Policy::access_in(RequestWalk& walk, const RequestView& r) {
  return walk.access(*this, r);
}

bool RequestWalk::make_room_dram(Time now, AccessResult& res) {
  NodeId v = checked_victim(*dram_, Tier::kDram, now);
  if (v == kNoNode) return false;
  drop(*hbm_, v, res);
  return true;
}

bool RequestWalk::demote(NodeId v, const AccessInfo& info, AccessResult& res, bool swap) {
  // Below the minimum priority for offload the victim leaves the cache (its priority read
  // before the removal resets it); a block with DRAM blocks below it is demoted whatever it is.
  if (offload_min_priority_ >= 0 && tree_.is_leaf(v) &&
      hbm_->retention_priority(v).value_or(RetentionSettings{}.default_priority) <
          offload_min_priority_) {
    drop(*hbm_, v, res);
    ++res.offload_skipped;
    return true;
  }
  // A promotion swaps: the promoted block's DRAM place takes the victim.
  if (dram_size() >= dram_capacity_ + (swap ? 1 : 0) && !make_room_dram(info.now, res)) {
    // DRAM is all pinned: drop the victim instead, if no DRAM block hangs below it.
    if (!tree_.is_leaf(v)) return false;
    drop(*hbm_, v, res);
    return true;
  }
  hbm_->on_removed(v, Removal::kDemoted);
  NodeId parent = tree_.demote(v);
  --hbm_size_;
  ++res.demotions;
  if (parent != kNoNode) hbm_->on_evictable(parent);
  // To the DRAM policy the block is new; its last access is where it was last used.
  AccessInfo demoted = info;
  demoted.access = last_access_[v];
  demoted.position = tree_.depth(v);
  demoted.kind = AccessKind::kDemoted;
  dram_->on_access(v, demoted);
  if (tree_.is_evictable(v)) dram_->on_evictable(v);
  return true;
}

}  // namespace kvpolicy
