// Chunked allocation (vLLM v1's KV cache manager and scheduler; docs/serve.md, "Allocation"):
// admission pins the cached prefix and allocates the first chunk's blocks; each later chunk
// allocates what its tokens need, preempting the most recently admitted running request while
// memory is short.
#include <algorithm>

#include "kvpolicy/core/error.h"
#include "worker.h"

namespace kvpolicy::serve_detail {

std::pair<uint32_t, uint32_t> Worker::blocks_through(uint32_t r, uint64_t end) const {
  const uint32_t p = workload_.prompt_blocks[r], b = workload_.sequences.block_tokens;
  uint32_t path =
      end >= prompt_tokens(r) ? p : std::min<uint32_t>(p, static_cast<uint32_t>((end + b - 1) / b));
  return {path, sequence_blocks(p, end, b) - p};
}

bool Worker::never_fits(uint32_t r) const {
  const uint32_t p = workload_.prompt_blocks[r], b = workload_.sequences.block_tokens;
  return sequence_blocks(p, prompt_tokens(r) + requests_[r].generated, b) > cache_.capacity();
}

bool Worker::admit_chunked(uint32_t r, double now, uint32_t budget) {
  if (never_fits(r)) return false;
  RequestState& s = requests_[r];
  const uint32_t p = workload_.prompt_blocks[r], b = workload_.sequences.block_tokens;
  std::span<const BlockKey> prompt = workload_.sequences.prompt(r).first(p);
  uint64_t tokens = prompt_tokens(r) + s.generated;
  // As admit(): at least one token is computed, for the logits of the next one.
  uint64_t cached =
      std::min<uint64_t>(uint64_t{cache_.reusable_prefix(prompt)} * b, prompt_tokens(r));
  cached = std::min(cached, tokens - 1);
  uint64_t chunk = std::min<uint64_t>(tokens - cached, budget);
  auto [path_blocks, private_blocks] = blocks_through(r, cached + chunk);
  if (!cache_.fits_chunked(prompt, path_blocks, private_blocks)) return false;
  s.hit_blocks =
      cache_.admit_chunked(workload_.view(r, now, false), path_blocks, private_blocks, s.path);
  s.private_blocks = private_blocks;
  charge_tier_reads(s, now);
  start_prefill(r, cached, tokens, now);
  return true;
}

bool Worker::allocate_chunk(uint32_t r, uint64_t end, double now,
                            std::vector<uint32_t>& preempted) {
  RequestState& s = requests_[r];
  auto [path_blocks, private_blocks] = blocks_through(r, end);
  uint32_t more = private_blocks > s.private_blocks ? private_blocks - s.private_blocks : 0;
  auto need = [&, path_blocks = path_blocks] {
    return cache_.unallocated(s.path, path_blocks) + more;
  };
  if (need() == 0) return true;  // the chunk's blocks are there already
  while (cache_.reclaimable() < need()) {
    // vLLM v1: the most recently admitted running request is preempted and recomputed.
    uint32_t victim = running_.back();
    preempt(victim, now);
    preempted.push_back(victim);
    if (victim == r) return false;
  }
  Time t = static_cast<Time>(now * kMicrosPerSecond);
  cache_.allocate(s.path, path_blocks, t);
  for (; more > 0; --more, ++s.private_blocks)
    if (!cache_.grow(t))
      throw Error("serve: a chunk's private blocks did not fit (a bug: reclaimable() said so)");
  return true;
}

}  // namespace kvpolicy::serve_detail
