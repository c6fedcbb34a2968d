// PolicyTree's calls for what the owner does to its cache beyond a request's events (the
// engines' seams, docs/engines.md): removals it decided, eviction with protected blocks or all
// or nothing, two-phase eviction confirmed later, and a reset.
#include <algorithm>
#include <unordered_set>

#include "implicit_request.h"
#include "kvpolicy/cache/policy_tree.h"
#include "kvpolicy/core/error.h"

namespace kvpolicy {

void PolicyTree::forget_request_holds(NodeId n) {
  if (!open_ || !held_.holds(n)) return;
  held_.forget(n);
  std::erase(path_, n);
}

// Drops n's subtree, descendants first (the tree keeps no child lists: one pass over the node
// ids finds them, and removing a leaf is the common case that needs none).
void PolicyTree::drop_subtree(NodeId n, std::vector<BlockKey>& gone) {
  std::vector<NodeId> order{n};
  if (tree_->child_count(n) > 0) {
    std::vector<std::vector<NodeId>> children(tree_->id_limit());
    for (NodeId c = 0; c < tree_->id_limit(); ++c)
      if (tree_->contains(c) && tree_->parent(c) != kNoNode)
        children[tree_->parent(c)].push_back(c);
    for (size_t i = 0; i < order.size(); ++i)
      for (NodeId c : children[order[i]]) order.push_back(c);
  }
  for (size_t i = order.size(); i-- > 0;) {  // deepest first: each is a leaf when dropped
    NodeId c = order[i];
    BlockKey key = tree_->key(c);
    forget_request_holds(c);
    external_[c] = 0;
    if (pending_[c]) {  // the policy was told at victims(): only the tree keeps it
      pending_[c] = 0;
      --pending_count_;
      driver_->remove_quietly(c);
    } else {
      driver_->drop(c);
      ++counts_.removed;
    }
    gone.push_back(key);
  }
}

std::vector<BlockKey> PolicyTree::remove(BlockKey key) {
  NodeId n = tree_->find(key);
  if (n == kNoNode) throw Error("remove: block " + std::to_string(key) + " is not cached");
  std::vector<BlockKey> gone;
  drop_subtree(n, gone);
  return gone;
}

size_t PolicyTree::remove_all(std::span<const BlockKey> keys, bool ignore_missing) {
  size_t removed = 0;
  for (BlockKey k : keys) {
    if (ignore_missing && tree_->find(k) == kNoNode) continue;
    removed += remove(k).size();
  }
  return removed;
}

void PolicyTree::hold_excluded(std::span<const BlockKey> exclude, std::vector<NodeId>& held) {
  for (BlockKey k : exclude) {
    NodeId n = tree_->find(k);
    if (n == kNoNode) continue;
    hold(n);
    held.push_back(n);
  }
}

void PolicyTree::release_all(const std::vector<NodeId>& held) {
  for (NodeId n : held) release(n);
}

size_t PolicyTree::evictable(std::span<const BlockKey> exclude) const {
  const size_t size = tree_->size();
  if (shape_ == TreeShape::kFlat) {  // every block stands alone: the held ones are spared
    size_t spared = driver_->pinned();
    std::vector<NodeId> seen;
    for (BlockKey k : exclude) {
      NodeId n = tree_->find(k);
      if (n == kNoNode || driver_->holders(n) > 0) continue;
      seen.push_back(n);
    }
    std::sort(seen.begin(), seen.end());
    spared += std::unique(seen.begin(), seen.end()) - seen.begin();
    return size - spared;
  }
  // A prefix tree: spared are the held and excluded blocks and every ancestor of one. With no
  // held block only the excluded paths count, without a pass over every node id.
  if (driver_->pinned() == 0) {
    std::unordered_set<NodeId> seen;
    for (BlockKey k : exclude)
      for (NodeId n = tree_->find(k); n != kNoNode && seen.insert(n).second; n = tree_->parent(n)) {
      }
    return size - seen.size();
  }
  std::vector<uint8_t> spared(tree_->id_limit(), 0);
  size_t count = 0;
  auto spare_up = [&](NodeId n) {
    for (; n != kNoNode && !spared[n]; n = tree_->parent(n)) {
      spared[n] = 1;
      ++count;
    }
  };
  for (NodeId n = 0; n < tree_->id_limit(); ++n)
    if (tree_->contains(n) && driver_->holders(n) > 0) spare_up(n);
  for (BlockKey k : exclude)
    if (NodeId n = tree_->find(k); n != kNoNode) spare_up(n);
  return size - count;
}

std::vector<BlockKey> PolicyTree::evict(size_t n, const EvictOptions& options) {
  if (options.all_or_nothing && evictable(options.exclude) < n) return {};
  std::vector<NodeId> held;
  hold_excluded(options.exclude, held);
  std::vector<BlockKey> gone;
  for (size_t i = 0; i < n; ++i) {
    std::optional<BlockKey> key = evict_one();
    if (!key) break;
    gone.push_back(*key);
  }
  release_all(held);
  // evictable() promised n: a policy naming fewer broke its contract, and the owner was told
  // all or nothing (its blocks already left, so this cannot be undone).
  if (options.all_or_nothing && gone.size() < n)
    throw Error("policy '" + label_ + "' named " + std::to_string(gone.size()) + " victims of " +
                std::to_string(n) + " evictable blocks (a policy bug)");
  return gone;
}

std::vector<BlockKey> PolicyTree::victims(size_t n, std::span<const BlockKey> exclude) {
  std::vector<NodeId> held;
  hold_excluded(exclude, held);
  std::vector<BlockKey> named;
  for (size_t i = 0; i < n; ++i) {
    NodeId v = policy_->victim(now_);
    if (v == kNoNode) break;
    if (!tree_->contains(v) || !tree_->is_evictable(v))
      throw Error("policy '" + label_ + "' named node " + std::to_string(v) +
                  " as its victim, which is not an evictable block (a policy bug)");
    policy_->on_removed(v, Removal::kEvicted);
    driver_->hold_quietly(v);
    pending_[v] = 1;
    ++pending_count_;
    ++counts_.evictions;
    named.push_back(tree_->key(v));
  }
  release_all(held);
  return named;
}

size_t PolicyTree::commit(std::span<const BlockKey> keys) {
  size_t done = 0;
  for (BlockKey k : keys) {
    NodeId n = tree_->find(k);
    if (n == kNoNode || !pending_[n]) continue;
    std::vector<BlockKey> gone;
    drop_subtree(n, gone);  // a pending block is a leaf: only itself
    ++done;
  }
  return done;
}

size_t PolicyTree::cancel(std::span<const BlockKey> keys) {
  ImplicitRequest cycle(*this);
  size_t done = 0;
  for (BlockKey k : keys) {
    NodeId n = tree_->find(k);
    if (n == kNoNode || !pending_[n]) continue;
    pending_[n] = 0;
    --pending_count_;
    // The quiet hold becomes the request's: released (evictable again) when the request ends.
    held_.add(n);
    policy_->on_access(n, access_info(n, AccessKind::kInserted));
    path_.push_back(n);
    ++done;
  }
  return done;
}

void PolicyTree::clear() {
  if (open_) throw Error("clear: a request is open (end_request first)");
  build();
}

}  // namespace kvpolicy
