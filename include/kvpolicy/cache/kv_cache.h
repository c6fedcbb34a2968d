// KvCache: the prefix cache as an engine embeds it. Sequences of tokens (or the engine's own
// chained block hashes) in, hits and evictions out, with any online policy of the registry
// deciding what leaves; the same decisions it makes in replay (docs/api.md).
//
// Not thread-safe: one KvCache is used by one thread at a time; distinct instances share nothing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kvpolicy/cache/policy_tree.h"
#include "kvpolicy/policy/walk.h"

namespace kvpolicy {

class KvCache {
 public:
  // Throws ConfigError like PolicyTree's constructor.
  KvCache(const PolicySpec& spec, size_t capacity_blocks, uint32_t block_tokens = 16,
          uint64_t seed = 1);

  // The chained keys of the full blocks of `tokens` (a partial last block is never cached, as in
  // vLLM and SGLang); the same keys `kvpolicy trace import` gives a token column.
  std::vector<BlockKey> block_keys(std::span<const uint32_t> tokens) const;

  // Leading blocks of `keys` that are cached. No side effects.
  size_t match(std::span<const BlockKey> keys) const;
  // One request cycle that tells the policy the cached prefix was used; returns its length.
  size_t lookup(std::span<const BlockKey> keys, const RequestInfo& info = {});
  // One request cycle as replay runs it: the cached prefix is told as hits, the rest inserted in
  // order, evicting as the policy chooses; it stops early when every cached block is pinned.
  AccessResult insert(std::span<const BlockKey> keys, const RequestInfo& info = {});
  // Pins (unpins) every block of `keys`, which must be cached: a running request's blocks are
  // never evicted. Throws Error naming the first block that is not cached (not pinned).
  void pin(std::span<const BlockKey> keys);
  void unpin(std::span<const BlockKey> keys);
  // Evicts up to n unpinned blocks in the policy's order; returns their keys. Options: blocks
  // to spare, all or nothing (PolicyTree::evict).
  std::vector<BlockKey> evict(size_t n, const EvictOptions& options = {}) {
    return tree_.evict(n, options);
  }
  // The engine dropped these blocks (and so every block after them): they leave, told to the
  // policy as removed, not evicted. Keys not cached are skipped; returns the blocks removed.
  size_t remove(std::span<const BlockKey> keys) { return tree_.remove_all(keys, true); }
  // Drops every block and starts the policy afresh (the engine's cache reset).
  void clear() { tree_.clear(); }

  PolicyTreeStats stats() const { return tree_.stats(); }
  PolicyStats policy_stats() const { return tree_.policy_stats(); }
  size_t size() const { return tree_.size(); }
  size_t capacity() const { return tree_.capacity(); }
  uint32_t block_tokens() const { return tree_.block_tokens(); }
  const std::string& policy_label() const { return tree_.policy_label(); }
  const PolicyTree& policy_tree() const { return tree_; }

 private:
  RequestInfo with_blocks(const RequestInfo& info, std::span<const BlockKey> keys) const;

  PolicyTree tree_;
};

}  // namespace kvpolicy
