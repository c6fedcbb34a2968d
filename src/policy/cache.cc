#include "kvpolicy/cache.h"

#include <algorithm>

#include "kvpolicy/error.h"

namespace kvpolicy {

PrefixCache::PrefixCache(size_t capacity_blocks, const PolicySpec& spec, PolicyContext ctx)
    : capacity_(capacity_blocks),
      tree_(std::make_unique<PrefixTree>(std::min<size_t>(capacity_blocks, 1 << 22))) {
  if (capacity_blocks == 0) throw ConfigError("cache capacity must be at least one block");
  ctx.tree = tree_.get();
  ctx.capacity_blocks = capacity_blocks;
  policy_ = make_policy(spec, ctx);
}

PrefixCache::PrefixCache(size_t capacity_blocks, std::unique_ptr<Policy> policy,
                         std::unique_ptr<PrefixTree> tree)
    : capacity_(capacity_blocks), tree_(std::move(tree)), policy_(std::move(policy)) {
  if (capacity_blocks == 0) throw ConfigError("cache capacity must be at least one block");
}

bool PrefixCache::make_room(Time now) {
  NodeId v = policy_->victim(now);
  if (v == kNoNode) return false;
  if (checking_ && (!tree_->contains(v) || !tree_->is_evictable(v)))
    throw Error("policy returned node " + std::to_string(v) + " which is not an evictable leaf");
  policy_->on_removed(v);
  NodeId parent = tree_->remove(v);
  if (parent != kNoNode) policy_->on_evictable(parent);
  return true;
}

AccessResult PrefixCache::access(const RequestView& r) {
  AccessResult res;
  policy_->on_request_begin(r);
  path_.clear();
  AccessInfo info;
  info.now = r.time;
  info.req = r.index;
  info.session = r.session;
  info.turn = r.turn;
  info.category = r.category;
  info.prompt_blocks = static_cast<uint32_t>(r.blocks.size());

  // Longest cached prefix: prefix closure means the first miss ends it.
  uint32_t n = info.prompt_blocks, i = 0;
  info.hit = true;
  for (; i < n; ++i) {
    NodeId node = tree_->find(r.blocks[i]);
    if (node == kNoNode) break;
    if (tree_->pin(node)) policy_->on_unevictable(node);
    path_.push_back(node);
    info.position = i;
    info.access = r.first_access + i;
    policy_->on_access(node, info);
  }
  res.hit_blocks = i;

  info.hit = false;
  NodeId parent = path_.empty() ? kNoNode : path_.back();
  for (; i < n; ++i) {
    if (tree_->size() >= capacity_) {
      if (!make_room(r.time)) break;  // everything left is pinned: the rest stays uncached
      ++res.evictions;
    }
    NodeId node = tree_->insert(r.blocks[i], parent);
    path_.push_back(node);
    info.position = i;
    info.access = r.first_access + i;
    policy_->on_access(node, info);
    parent = node;
    ++res.inserted_blocks;
  }

  policy_->on_request_end(r, path_);
  for (size_t j = path_.size(); j-- > 0;)
    if (tree_->unpin(path_[j])) policy_->on_evictable(path_[j]);
  return res;
}

}  // namespace kvpolicy
