#include "kvpolicy/cache/kv_cache.h"

#include <string>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/token_blocks.h"

namespace kvpolicy {

KvCache::KvCache(const PolicySpec& spec, size_t capacity_blocks, uint32_t block_tokens,
                 uint64_t seed)
    : tree_(spec, capacity_blocks, block_tokens, seed) {}

std::vector<BlockKey> KvCache::block_keys(std::span<const uint32_t> tokens) const {
  const uint32_t B = tree_.block_tokens();
  std::vector<BlockKey> keys;
  keys.reserve(tokens.size() / B);
  BlockKey key = kRootKey;
  for (size_t b = 0; b + B <= tokens.size(); b += B) {
    key = chain_key(key, token_block_id(tokens.data() + b, B));
    keys.push_back(key);
  }
  return keys;
}

size_t KvCache::match(std::span<const BlockKey> keys) const {
  size_t i = 0;
  while (i < keys.size() && tree_.contains(keys[i])) ++i;
  return i;
}

RequestInfo KvCache::with_blocks(const RequestInfo& info, std::span<const BlockKey> keys) const {
  RequestInfo r = info;
  if (r.blocks.empty()) r.blocks.assign(keys.begin(), keys.end());
  return r;
}

size_t KvCache::lookup(std::span<const BlockKey> keys, const RequestInfo& info) {
  size_t n = match(keys);
  tree_.begin_request(with_blocks(info, keys));
  for (size_t i = 0; i < n; ++i) tree_.hit(keys[i]);
  tree_.end_request();
  return n;
}

AccessResult KvCache::insert(std::span<const BlockKey> keys, const RequestInfo& info) {
  AccessResult res;
  uint64_t evictions = tree_.stats().evictions;
  tree_.begin_request(with_blocks(info, keys));
  size_t i = 0;
  for (; i < keys.size() && tree_.contains(keys[i]); ++i) tree_.hit(keys[i]);
  res.hit_blocks = static_cast<uint32_t>(i);
  for (; i < keys.size(); ++i) {
    if (tree_.insert(keys[i], i ? std::optional(keys[i - 1]) : std::nullopt, true) ==
        Inserted::kRefused)
      break;
    ++res.inserted_blocks;
  }
  tree_.end_request();
  res.evictions = static_cast<uint32_t>(tree_.stats().evictions - evictions);
  return res;
}

void KvCache::pin(std::span<const BlockKey> keys) {
  size_t n = match(keys);
  if (n < keys.size())
    throw Error("pin: block " + std::to_string(n) + " of the sequence is not cached");
  for (BlockKey k : keys) tree_.pin(k);
}

void KvCache::unpin(std::span<const BlockKey> keys) {
  for (BlockKey k : keys) tree_.unpin(k);
}

}  // namespace kvpolicy
