// What the text generators (conversation, agent) share: lengths drawn log-normal, random token
// content, and a session's growing context with its block ids (internal to the generators).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kvpolicy/trace/generators.h"

namespace kvpolicy {

// A length in tokens, log-normal with this mean, at least 1 and at most a million.
inline uint32_t draw_length(Rng& rng, double mean, double sigma) {
  double v = std::round(rng.lognormal_mean(mean, sigma));
  return static_cast<uint32_t>(std::clamp(v, 1.0, 1e6));
}

inline void append_random(Rng& rng, uint32_t count, std::vector<uint32_t>& out) {
  for (uint32_t i = 0; i < count; ++i) out.push_back(static_cast<uint32_t>(rng.next()));
}

// A session's tokens so far; its full blocks are hashed once, as the context grows.
struct TokenContext {
  std::vector<uint32_t> tokens;
  std::vector<uint64_t> full_ids;

  // The context's block ids: every full block, then the partial tail if any.
  void block_ids(uint32_t block_tokens, std::vector<uint64_t>& ids) {
    const uint32_t B = block_tokens;
    for (size_t b = full_ids.size() * B; b + B <= tokens.size(); b += B)
      full_ids.push_back(hash_tokens(tokens.data() + b, B));
    ids.assign(full_ids.begin(), full_ids.end());
    size_t tail = tokens.size() % B;
    if (tail) ids.push_back(hash_tokens(tokens.data() + tokens.size() - tail, tail));
  }
};

}  // namespace kvpolicy
