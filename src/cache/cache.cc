#include "kvpolicy/cache/cache.h"

#include <algorithm>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

namespace {
// Large capacities reserve up to 4 M nodes at once; the tree grows past that as needed.
constexpr size_t kMaxReservedNodes = size_t{1} << 22;
}  // namespace

PrefixCache::PrefixCache(size_t capacity_blocks, const PolicySpec& spec, PolicyContext ctx,
                         size_t dram_capacity_blocks, const PolicySpec& dram_spec) {
  if (capacity_blocks == 0) throw ConfigError("cache capacity must be at least one block");
  tree_ = std::make_unique<PrefixTree>(
      std::min(capacity_blocks + dram_capacity_blocks, kMaxReservedNodes));
  walk_ = std::make_unique<RequestWalk>(*tree_, capacity_blocks, dram_capacity_blocks);
  ctx.tree = tree_.get();
  ctx.capacity_blocks = capacity_blocks;
  policy_ = make_policy(spec, ctx);
  if (dram_capacity_blocks > 0) {
    ctx.capacity_blocks = dram_capacity_blocks;
    dram_policy_ = make_policy(dram_spec, ctx);
  }
  walk_->attach(*policy_, dram_policy_.get());
}

PrefixCache::PrefixCache(size_t capacity_blocks, std::unique_ptr<Policy> policy,
                         std::unique_ptr<PrefixTree> tree)
    : tree_(std::move(tree)), policy_(std::move(policy)) {
  if (capacity_blocks == 0) throw ConfigError("cache capacity must be at least one block");
  walk_ = std::make_unique<RequestWalk>(*tree_, capacity_blocks, 0);
  walk_->attach(*policy_, nullptr);
}

size_t PrefixCache::memory_bytes() const {
  return tree_->memory_bytes() + policy_->memory_bytes() +
         (dram_policy_ ? dram_policy_->memory_bytes() : 0) + walk_->memory_bytes();
}

}  // namespace kvpolicy
