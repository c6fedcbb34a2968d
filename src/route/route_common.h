// What several routers share: a seeded random stream and the least-loaded choice.
#pragma once

#include <cstdint>

#include "kvpolicy/core/types.h"
#include "kvpolicy/route/router.h"

namespace kvpolicy {

// A 64-bit hash or random word scaled to [0, n) by multiply-shift (no modulo bias worth naming
// for n <= 2^32).
inline uint32_t scale_below(uint64_t word, uint32_t n) {
  return static_cast<uint32_t>((static_cast<unsigned __int128>(word) * n) >> 64);
}

// splitmix64: the route layer's own seeded stream (trace's Rng lives in a layer above).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix64(state_);
  }
  // Uniform in [0, n).
  uint32_t below(uint32_t n) { return scale_below(next(), n); }

 private:
  uint64_t state_;
};

// The worker with the fewest requests in flight, ties to the lower index.
inline WorkerId least_in_flight(const ClusterView& cluster) {
  WorkerId best = 0;
  for (WorkerId w = 1; w < cluster.workers(); ++w)
    if (cluster.load(w).in_flight < cluster.load(best).in_flight) best = w;
  return best;
}

}  // namespace kvpolicy
