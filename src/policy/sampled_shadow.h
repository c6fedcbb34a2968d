// A sampled shadow cache (SHARDS-style spatial sampling, docs/policies.md "auto"): a candidate
// policy replayed on the blocks whose key hashes below a fixed rate R, in a cache of R x k
// blocks. Its hit rate on the sample estimates the candidate's on the real cache at a fraction R
// of a full replay's cost. Every shadow samples the same keys.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kvpolicy/core/tree.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"

namespace kvpolicy {

// Which block keys are in the sample: hash(key) mod 2^24 < R x 2^24.
class KeySampler {
 public:
  explicit KeySampler(double rate);
  bool sampled(BlockKey key) const {
    uint64_t z = key + 0x9e3779b97f4a7c15ULL;  // splitmix64's finaliser: keys' low bits vary
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (z & ((uint64_t{1} << 24) - 1)) < threshold_;
  }
  // The request's sampled blocks, in order: each one's parent is its nearest sampled ancestor
  // (a key names its whole prefix, so that chain is the same in every request).
  void sample(std::span<const BlockKey> blocks, std::vector<BlockKey>& out) const {
    out.clear();
    for (BlockKey k : blocks)
      if (sampled(k)) out.push_back(k);
  }

 private:
  uint64_t threshold_;
};

// One candidate on its own tree of `capacity` blocks, fed the sampled blocks of each request.
class SampledShadow {
 public:
  // `real` is the real cache's context (block size, seed, cost model); the shadow's policy is a
  // fresh instance of `spec` on the shadow's tree.
  SampledShadow(const PolicySpec& spec, const PolicyContext& real, size_t capacity);
  // Replays the request with its blocks replaced by the sampled ones; returns the hits.
  uint32_t access(const RequestView& r, std::span<const BlockKey> sampled);

  uint64_t hits() const { return hits_; }
  uint64_t accesses() const { return accesses_; }
  size_t memory_bytes() const;

 private:
  PrefixTree tree_;
  RequestWalk walk_;
  std::unique_ptr<Policy> policy_;
  uint64_t hits_ = 0, accesses_ = 0;
};

}  // namespace kvpolicy
