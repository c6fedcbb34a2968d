#include "kvpolicy/cache/policy_driver.h"

#include <algorithm>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

PolicyDriver::PolicyDriver(size_t capacity_blocks, const PolicySpec& spec, PolicyContext ctx)
    : tree_(std::make_unique<PrefixTree>(std::min<size_t>(capacity_blocks, size_t{1} << 22))),
      label_(spec.label()) {
  ctx.tree = tree_.get();
  ctx.capacity_blocks = capacity_blocks;
  policy_ = make_policy(spec, ctx);
  reserve_ids();
}

void PolicyDriver::reserve_ids() {
  if (tree_->id_limit() == ids_told_) return;
  ids_told_ = tree_->id_limit();
  policy_->reserve_ids(ids_told_);
  holders_.resize(ids_told_, 0);
}

NodeId PolicyDriver::insert_held(BlockKey key, NodeId parent) {
  NodeId n = tree_->insert(key, parent);  // pinned by the tree: this hold
  reserve_ids();
  holders_[n] = 1;
  ++pinned_;
  return n;
}

void PolicyDriver::remove_quietly(NodeId n) {
  if (holders_[n] > 0) {
    holders_[n] = 0;
    --pinned_;
    tree_->unpin(n);  // down to 0: the tree counts one pin for any number of holds
  }
  NodeId parent = tree_->remove(n);
  if (parent != kNoNode) policy_->on_evictable(parent);
}

void PolicyDriver::drop(NodeId n) {
  hold(n);  // a candidate no more (the policy hears on_unevictable if it was one)
  policy_->on_removed(n, Removal::kDropped);
  remove_quietly(n);
}

PolicyDriver::Evicted PolicyDriver::evict(Time now, bool check, bool ask_twice,
                                          bool read_priority) {
  NodeId v = policy_->victim(now);
  if (v == kNoNode) return {};
  if (check) {
    if (!tree_->contains(v) || !tree_->is_evictable(v))
      throw Error("policy '" + label_ + "' named node " + std::to_string(v) +
                  " as its victim, which is not an evictable block (a policy bug)");
    if (ask_twice && policy_->victim(now) != v)
      throw Error("policy '" + label_ + "' named node " + std::to_string(v) +
                  " as its victim, and another when asked again (a policy bug)");
  }
  Evicted e{v, tree_->key(v), tree_->parent(v), 0, tree_->depth(v)};
  if (e.parent != kNoNode) e.parent_key = tree_->key(e.parent);
  if (read_priority) e.priority = policy_->retention_priority(v).value_or(e.priority);
  policy_->on_removed(v, Removal::kEvicted);
  NodeId parent = tree_->remove(v);
  if (parent != kNoNode) policy_->on_evictable(parent);
  return e;
}

}  // namespace kvpolicy
