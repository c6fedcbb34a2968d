// Prefill/decode disaggregation on the worker's side (docs/serve.md, "Prefill/decode
// disaggregation"): a prefill worker hands a request off after its first token; a decode worker
// allocates the arriving KV's blocks as private blocks (nothing of it joins its prefix cache)
// and decodes to the end.
#include <algorithm>

#include "kvpolicy/core/error.h"
#include "worker.h"

namespace kvpolicy::serve_detail {

void Worker::receive_kv(uint32_t r) {
  requests_[r].worker = id_;
  --incoming_kv_;
  kv_waiting_.push_back(r);
}

void Worker::admit_transferred(double now) {
  const uint32_t b = workload_.sequences.block_tokens;
  while (!kv_waiting_.empty() && running_.size() < config_.max_running) {
    uint32_t r = kv_waiting_.front();
    RequestState& s = requests_[r];
    // The context's blocks and the next token's: what its first decode step needs.
    uint32_t need = sequence_blocks(workload_.prompt_blocks[r], s.context + 1, b);
    if (need > cache_.capacity()) {  // larger than this worker's whole memory
      kv_waiting_.pop_front();
      done_(r, now, true);
      continue;
    }
    if (!cache_.fits({}, need)) break;  // waits, first in line, until memory frees up
    kv_waiting_.pop_front();
    for (uint32_t k = 0; k < need; ++k)
      if (!cache_.grow(static_cast<Time>(now * kMicrosPerSecond)))
        throw Error("serve: transferred KV did not fit (a bug: fits() said it did)");
    s.private_blocks = need;
    s.path.clear();
    s.prefilling = false;
    s.prefill_left = 0;
    s.transferred = true;
    running_.push_back(r);
  }
}

void Worker::kv_sent(uint32_t r) {
  auto it = sending_.find(r);
  cache_.release(it->second.path, it->second.private_blocks);
  sending_.erase(it);
}

void Worker::hand_off(uint32_t r, double now) {
  RequestState& s = requests_[r];
  ++result_.requests;
  result_.block_accesses += workload_.prompt_blocks[r];
  result_.block_hits += s.counted_hits;
  for (size_t t = 0; t < tier_hits_.size(); ++t) tier_hits_[t] += s.counted_tier_hits[t];
  // Its blocks stay held until the KV has left (kv_sent); then the prompt's stay in this
  // worker's prefix cache, computed, for later prompts.
  sending_.emplace(r, Sending{std::move(s.path), s.private_blocks});
  s.path.clear();
  s.private_blocks = 0;
  running_.erase(std::find(running_.begin(), running_.end(), r));
  handoff_(r, now);
}

}  // namespace kvpolicy::serve_detail
