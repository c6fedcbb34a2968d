// A KV block's raw id from its tokens: what `trace build`, `trace import` and KvCache chain into
// block keys (chain_key), so the same tokens give the same keys everywhere.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kvpolicy/core/types.h"

namespace kvpolicy {

inline uint64_t token_block_id(const uint32_t* tokens, size_t count) {
  uint64_t h = 0x74657874626c6bULL ^ count;  // "textblk"
  for (size_t i = 0; i < count; ++i) h = mix64(h ^ (uint64_t{tokens[i]} + 0x9e3779b97f4a7c15ULL));
  return h & ((uint64_t{1} << 53) - 1);  // exact in a double, as JSON readers keep it
}

}  // namespace kvpolicy
