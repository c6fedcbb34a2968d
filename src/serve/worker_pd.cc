// Prefill/decode disaggregation on the worker's side (docs/serve.md, "Prefill/decode
// disaggregation"): a prefill worker hands a request off after its first token; a decode worker
// allocates the arriving KV's blocks as private blocks (nothing of it joins its prefix cache)
// and decodes to the end; with the decode cache it admits the KV into its prefix tree.
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
      release_hold(r, now);
      lost_hold_.erase(r);
      done_(r, now, true);
      continue;
    }
    if (config_.decode_cache) {
      if (!admit_transferred_cached(r, need, now)) break;
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

uint32_t Worker::hold_prefix(uint32_t r) {
  const uint32_t p = workload_.prompt_blocks[r];
  std::vector<NodeId>& path = held_[r];
  return cache_.hold_computed_prefix(workload_.sequences.prompt(r).first(p), path);
}

void Worker::release_hold(uint32_t r, double now) {
  auto it = held_.find(r);
  if (it == held_.end()) return;
  cache_.release(it->second, 0, static_cast<Time>(now * kMicrosPerSecond));
  held_.erase(it);
}

bool Worker::admit_transferred_cached(uint32_t r, uint32_t need, double now) {
  RequestState& s = requests_[r];
  const uint32_t p = workload_.prompt_blocks[r];
  std::span<const BlockKey> prompt = workload_.sequences.prompt(r).first(p);
  const uint32_t extra = need - p;
  if (!cache_.fits(prompt, extra)) {
    if (!running_.empty()) return false;  // memory frees up as they finish
    // Idle, and other requests' holds pin the memory it needs: they give their holds up and
    // will recompute here instead (a preemption; docs/serve.md).
    bool dropped = false;
    std::vector<uint32_t> others;
    for (const auto& [q, path] : held_)
      if (q != r) others.push_back(q);
    std::sort(others.begin(), others.end());  // the same run, the same order
    for (uint32_t q : others) {
      release_hold(q, now);
      lost_hold_.insert(q);
      dropped = true;
    }
    if (!dropped || !cache_.fits(prompt, extra)) return false;
  }
  kv_waiting_.pop_front();
  if (lost_hold_.erase(r)) {  // its held prefix went: recomputed, as a preempted request
    s.transferred = false;
    queued_prefill_ += prompt_tokens(r) + s.generated;
    waiting_.push_back(r);
    ++result_.preemptions;
    return true;
  }
  // The held prefix is found, the transferred rest is placed and computed: the KV has arrived.
  s.hit_blocks = cache_.admit(workload_.view(r, now, false), extra, s.path);
  cache_.mark_computed(s.path, p, static_cast<Time>(now * kMicrosPerSecond));
  release_hold(r, now);
  s.private_blocks = extra;
  s.prefilling = false;
  s.prefill_left = 0;
  s.transferred = false;  // its prompt is in the tree, as a colocated request's
  running_.push_back(r);
  return true;
}

void Worker::kv_sent(uint32_t r, double now) {
  auto it = sending_.find(r);
  cache_.release(it->second.path, it->second.private_blocks,
                 static_cast<Time>(now * kMicrosPerSecond));
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
