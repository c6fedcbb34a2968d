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
      std::min<uint64_t>(uint64_t{cache_.computed_prefix(prompt)} * b, prompt_tokens(r));
  cached = std::min(cached, tokens - 1);
  uint64_t chunk = std::min<uint64_t>(tokens - cached, budget);
  auto [path_blocks, private_blocks] = blocks_through(r, cached + chunk);
  if (!cache_.fits(prompt.first(path_blocks), private_blocks)) return false;
  s.path.clear();
  s.hit_blocks = cache_.place_prefix(workload_.view(r, now, false), path_blocks, s.path);
  for (uint32_t k = 0; k < private_blocks; ++k)
    if (!cache_.grow(static_cast<Time>(now * kMicrosPerSecond)))
      throw Error("serve: a chunk's private blocks did not fit (a bug: fits() said they did)");
  s.private_blocks = private_blocks;
  s.context = cached;
  s.prefill_left = tokens - cached;
  s.prefilling = true;
  if (s.admitted < 0) s.admitted = now;
  queued_prefill_ -= cached;
  running_.push_back(r);
  return true;
}

bool Worker::allocate_chunk(uint32_t r, uint64_t end, double now,
                            std::vector<uint32_t>& preempted) {
  RequestState& s = requests_[r];
  const uint32_t p = workload_.prompt_blocks[r];
  std::span<const BlockKey> prompt = workload_.sequences.prompt(r).first(p);
  auto [path_blocks, private_blocks] = blocks_through(r, end);
  const uint32_t held = static_cast<uint32_t>(s.path.size());
  path_blocks = std::max(path_blocks, held);
  uint32_t more = private_blocks > s.private_blocks ? private_blocks - s.private_blocks : 0;
  if (path_blocks == held && more == 0) return true;  // the chunk's blocks are there already
  // The held blocks are pinned by this request: fits() need only see the new ones.
  while (!cache_.fits(prompt.subspan(held, path_blocks - held), more)) {
    // vLLM v1: the most recently admitted running request is preempted and recomputed.
    uint32_t victim = running_.back();
    preempt(victim);
    preempted.push_back(victim);
    if (victim == r) return false;
  }
  if (path_blocks > s.path.size())
    cache_.place_prefix(workload_.view(r, now, false), path_blocks, s.path);
  for (; more > 0; --more, ++s.private_blocks)
    if (!cache_.grow(static_cast<Time>(now * kMicrosPerSecond)))
      throw Error("serve: a chunk's private blocks did not fit (a bug: fits() said they did)");
  return true;
}

}  // namespace kvpolicy::serve_detail
