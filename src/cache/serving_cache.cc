#include "kvpolicy/cache/serving_cache.h"

#include <algorithm>
#include <string>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

ServingCache::ServingCache(size_t capacity_blocks, const PolicySpec& spec, PolicyContext ctx)
    : capacity_(capacity_blocks) {
  if (capacity_blocks == 0) throw ConfigError("a worker needs at least one KV block");
  ctx.serving = true;
  driver_ = std::make_unique<PolicyDriver>(capacity_blocks, spec, ctx);
  tree_ = &driver_->tree();
  policy_ = &driver_->policy();
  reserve_ids();
}

void ServingCache::reserve_ids() {
  computed_.resize(driver_->ids(), 0);
  unallocated_node_.resize(driver_->ids(), 0);
  if (tiers_) last_access_.resize(driver_->ids(), 0);
}

void ServingCache::pin(NodeId n) { driver_->hold(n); }

void ServingCache::unpin(NodeId n) { driver_->release(n); }

uint32_t ServingCache::computed_prefix(std::span<const BlockKey> keys) const {
  uint32_t i = 0;
  for (; i < keys.size(); ++i) {
    NodeId n = tree_->find(keys[i]);
    if (n == kNoNode || !computed_[n]) break;
  }
  return i;
}

uint32_t ServingCache::hold_computed_prefix(std::span<const BlockKey> keys,
                                            std::vector<NodeId>& path) {
  path.clear();
  for (BlockKey key : keys) {
    NodeId n = tree_->find(key);
    if (n == kNoNode || !computed_[n]) break;
    pin(n);
    path.push_back(n);
  }
  return static_cast<uint32_t>(path.size());
}

bool ServingCache::fits(std::span<const BlockKey> prompt, size_t private_blocks) const {
  // Every unpinned block can go (a pinned block's ancestors are pinned too), except those of
  // this prompt, which admission pins.
  size_t missing = 0, unpinned_on_path = 0;
  for (BlockKey key : prompt) {
    NodeId n = tree_->find(key);
    if (n == kNoNode) {
      ++missing;
    } else if (driver_->holders(n) == 0) {
      ++unpinned_on_path;
    }
  }
  size_t available = free_blocks() + (tree_->size() - driver_->pinned()) - unpinned_on_path;
  return missing + private_blocks <= available;
}

bool ServingCache::evict_one(Time now) {
  const bool read_priority = tiers_ && tiers_->offload_min_priority() >= 0;
  PolicyDriver::Evicted e = driver_->evict(now, checking_, /*ask_twice=*/true, read_priority);
  NodeId v = e.node;
  if (v == kNoNode) return false;
  if (tiers_) demote_victim(e, now);
  computed_[v] = 0;
  ++evictions_;
  return true;
}

NodeId ServingCache::place(BlockKey key, NodeId parent, const AccessInfo& info) {
  NodeId n = tree_->find(key);
  if (n != kNoNode) {
    pin(n);
    AccessInfo reused = info;
    reused.kind = AccessKind::kReused;
    policy_->on_access(n, reused);
    return n;
  }
  n = driver_->insert_held(key, parent);
  reserve_ids();
  computed_[n] = 0;
  unallocated_node_[n] = 0;
  policy_->on_access(n, info);
  if (tiers_) tiers_->hbm_added(key);
  return n;
}

uint32_t ServingCache::admit(const RequestView& r, size_t private_blocks,
                             std::vector<NodeId>& path) {
  return admit_chunked(r, static_cast<uint32_t>(r.blocks.size()), private_blocks, path);
}

bool ServingCache::fits_chunked(std::span<const BlockKey> prompt, uint32_t allocate,
                                size_t private_blocks) const {
  // As fits(), but only the first `allocate` blocks need memory (an unallocated block another
  // request placed too); every cached block of the prompt gets pinned.
  size_t need = 0, unpinned_on_path = 0;
  for (uint32_t i = 0; i < prompt.size(); ++i) {
    NodeId n = tree_->find(prompt[i]);
    if (n == kNoNode) {
      need += i < allocate;
    } else if (driver_->holders(n) == 0) {
      ++unpinned_on_path;  // unpinned blocks are allocated
    } else if (unallocated_node_[n]) {
      need += i < allocate;
    }
  }
  return need + private_blocks <= reclaimable() - unpinned_on_path;
}

uint32_t ServingCache::admit_chunked(const RequestView& r, uint32_t allocate, size_t private_blocks,
                                     std::vector<NodeId>& path) {
  if (tiers_) return admit_tiered(r, private_blocks, path, allocate);
  uint32_t hits = computed_prefix(r.blocks);
  path.clear();
  policy_->on_request_begin(r);
  AccessInfo info = AccessInfo::of_request(r);
  info.kind = AccessKind::kInserted;
  NodeId parent = kNoNode;
  for (uint32_t i = 0; i < r.blocks.size(); ++i) {
    info.position = i;
    info.access = r.first_access + i;
    parent = place_prompt_block(r.blocks[i], parent, info, i < allocate, r.time);
    path.push_back(parent);
  }
  reserve_private(private_blocks, r.time);
  policy_->on_request_end(r, path);
  return hits;
}

NodeId ServingCache::place_prompt_block(BlockKey key, NodeId parent, const AccessInfo& info,
                                        bool with_memory, Time now) {
  NodeId found = tree_->find(key);
  bool take = with_memory && (found == kNoNode || unallocated_node_[found]);
  if (take && free_blocks() == 0 && !evict_one(now))
    throw Error("serve: admitted a request that does not fit (a bug: its fits check said it did)");
  NodeId n = place(key, parent, info);
  if (found == kNoNode && !with_memory) {
    unallocated_node_[n] = 1;
    ++unallocated_;
  } else if (take && found != kNoNode) {
    unallocated_node_[n] = 0;
    --unallocated_;
  }
  return n;
}

void ServingCache::reserve_private(size_t blocks, Time now) {
  for (size_t k = 0; k < blocks; ++k)
    if (!grow(now))
      throw Error(
          "serve: admitted a request that does not fit (a bug: its fits check said it did)");
}

size_t ServingCache::unallocated(std::span<const NodeId> path, uint32_t upto) const {
  size_t k = 0;
  for (uint32_t i = 0; i < std::min<size_t>(upto, path.size()); ++i)
    k += unallocated_node_[path[i]];
  return k;
}

void ServingCache::allocate(std::span<const NodeId> path, uint32_t upto, Time now) {
  for (uint32_t i = 0; i < std::min<size_t>(upto, path.size()); ++i) {
    NodeId n = path[i];
    if (!unallocated_node_[n]) continue;
    if (free_blocks() == 0 && !evict_one(now))
      throw Error("serve: a chunk's blocks did not fit (a bug: reclaimable() said they did)");
    unallocated_node_[n] = 0;
    --unallocated_;
  }
}

void ServingCache::mark_computed(std::span<const NodeId> path, uint32_t blocks, Time now) {
  for (uint32_t i = 0; i < std::min<size_t>(blocks, path.size()); ++i) {
    if (tiers_ && !computed_[path[i]]) write_through(path[i], now);
    computed_[path[i]] = 1;
  }
}

bool ServingCache::grow(Time now) {
  if (free_blocks() == 0 && !evict_one(now)) return false;
  ++private_;
  return true;
}

void ServingCache::release(std::span<const NodeId> path, size_t private_blocks, Time now) {
  policy_->on_time(now);
  for (size_t j = path.size(); j-- > 0;) {
    NodeId n = path[j];
    if (unallocated_node_[n] && driver_->holders(n) == 1) {
      // Chunked allocation: placed, never reached by a prefill: no KV to keep cached.
      unallocated_node_[n] = 0;
      --unallocated_;
      driver_->drop(n);
      continue;
    }
    unpin(n);
  }
  private_ -= private_blocks;
}

void ServingCache::complete(const RequestView& r, std::vector<NodeId>& path,
                            size_t private_blocks) {
  if (path.size() >= r.blocks.size() || private_blocks == 0) {  // no answer block to cache
    policy_->on_time(r.time);  // (a cycle tells the policy the time; here nothing else would)
    private_ -= private_blocks;
    for (size_t j = path.size(); j-- > 0;) unpin(path[j]);
    path.clear();
    return;
  }
  policy_->on_request_begin(r);
  AccessInfo info = AccessInfo::of_request(r);
  info.kind = AccessKind::kInserted;
  if (tiers_) {
    cycle_info_ = info;
    tiers_->begin(r);
  }
  NodeId parent = path.empty() ? kNoNode : path.back();
  size_t used = 0;
  for (size_t i = path.size(); i < r.blocks.size() && used < private_blocks; ++i, ++used) {
    info.position = static_cast<uint32_t>(i);
    info.access = r.first_access + i;
    --private_;  // the block moves from the request into the tree (or is dropped as a copy)
    parent = place(r.blocks[i], parent, info);
    if (tiers_ && !computed_[parent]) {
      last_access_[parent] = info.access;
      write_through(parent, r.time);
    }
    computed_[parent] = 1;
    path.push_back(parent);
  }
  private_ -= private_blocks - used;
  policy_->on_request_end(r, path);
  if (tiers_) tiers_->end(r);
  for (size_t j = path.size(); j-- > 0;) unpin(path[j]);
  path.clear();
}

}  // namespace kvpolicy
