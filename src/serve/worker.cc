#include "worker.h"

#include <algorithm>

namespace kvpolicy::serve_detail {

Worker::Worker(uint32_t id, size_t capacity_blocks, const PolicySpec& policy, PolicyContext ctx,
               const CostModel& cost, const Config& config, const Workload& workload,
               std::vector<RequestState>& requests,
               std::function<void(uint32_t, double, bool)> done)
    : id_(id),
      cache_(capacity_blocks, policy, ctx),
      cost_(cost),
      config_(config),
      workload_(workload),
      requests_(requests),
      done_(std::move(done)) {
  cache_.set_checking(config.check_victims);
}

void Worker::enqueue(uint32_t r) {
  requests_[r].worker = id_;
  waiting_.push_back(r);
  queued_prefill_ += prompt_tokens(r) + requests_[r].generated;
}

bool Worker::admit(uint32_t r, double now) {
  RequestState& s = requests_[r];
  const uint32_t p = workload_.prompt_blocks[r], b = workload_.sequences.block_tokens;
  // A request preempted after producing tokens recomputes them with its prompt.
  uint64_t tokens = prompt_tokens(r) + s.generated;
  uint32_t extra = sequence_blocks(p, tokens, b) - p;
  if (!cache_.fits(workload_.sequences.prompt(r).first(p), extra)) return false;
  s.hit_blocks = cache_.admit(workload_.view(r, now, false), extra, s.path);
  s.private_blocks = extra;
  charge_tier_reads(s, now);
  // At least one token is computed, for the logits of the next one.
  uint64_t cached = std::min<uint64_t>(uint64_t{s.hit_blocks} * b, prompt_tokens(r));
  cached = std::min(cached, tokens - 1);
  start_prefill(r, cached, tokens, now);
  return true;
}

void Worker::start_prefill(uint32_t r, uint64_t cached, uint64_t tokens, double now) {
  RequestState& s = requests_[r];
  s.context = cached;
  s.prefill_left = tokens - cached;
  s.prefilling = true;
  if (s.admitted < 0) s.admitted = now;
  queued_prefill_ -= cached;
  running_.push_back(r);
}

void Worker::charge_tier_reads(RequestState& s, double now) {
  LowerTiers* tiers = cache_.tiers();
  if (!tiers) return;
  auto hits = cache_.last_tier_hits();
  std::copy(hits.begin(), hits.end(), s.tier_hits.begin());
  // Queued on the links behind earlier reads and writes: the iteration waits for the last.
  pending_transfer_s_ = std::max(pending_transfer_s_, tiers->load(hits, now) - now);
}

void Worker::preempt(uint32_t r, double now) {
  RequestState& s = requests_[r];
  cache_.release(s.path, s.private_blocks, static_cast<Time>(now * kMicrosPerSecond));
  s.path.clear();
  s.private_blocks = 0;
  if (s.prefilling) queued_prefill_ -= s.prefill_left;
  s.prefilling = false;
  queued_prefill_ += prompt_tokens(r) + s.generated;
  s.transferred = false;  // P/D: a decode worker recomputes what it loses
  running_.erase(std::find(running_.begin(), running_.end(), r));
  waiting_.push_front(r);  // recompute: first in line again
  ++result_.preemptions;
}

void Worker::complete(uint32_t r, double now) {
  RequestState& s = requests_[r];
  s.finish = now;
  ++s.completions;
  ++result_.requests;
  if (config_.role != Config::Role::kDecode) {  // P/D: the prefill worker counted its hits
    result_.block_accesses += workload_.prompt_blocks[r];
    result_.block_hits += s.counted_hits;
    for (size_t t = 0; t < tier_hits_.size(); ++t) tier_hits_[t] += s.counted_tier_hits[t];
  }
  if (s.transferred) {  // P/D: a decode worker caches nothing of transferred KV
    cache_.release(s.path, s.private_blocks, static_cast<Time>(now * kMicrosPerSecond));
    s.path.clear();
  } else {
    cache_.complete(workload_.view(r, now, true), s.path, s.private_blocks);
  }
  s.private_blocks = 0;
  running_.erase(std::find(running_.begin(), running_.end(), r));
  done_(r, now, false);
}

void Worker::make_room_for_decodes(double now) {
  const uint32_t b = workload_.sequences.block_tokens;
  for (size_t i = 0; i < running_.size(); ++i) {
    uint32_t r = running_[i];
    RequestState& s = requests_[r];
    if (s.prefilling) continue;
    const uint32_t p = workload_.prompt_blocks[r];
    // (P/D: a decode worker holds transferred KV as private blocks, prompt's included.)
    uint32_t need = sequence_blocks(p, s.context + 1, b) - (s.transferred ? 0 : p);
    while (s.private_blocks < need) {
      if (cache_.grow(static_cast<Time>(now * kMicrosPerSecond))) {
        ++s.private_blocks;
        continue;
      }
      // Out of memory: the most recently admitted request gives its blocks back.
      uint32_t victim = running_.back();
      preempt(victim, now);
      if (victim == r) break;
    }
  }
}

double Worker::start_iteration(double now) {
  chunks_.clear();
  decodes_.clear();
  if (config_.role == Config::Role::kDecode) admit_transferred(now);
  const uint64_t preemptions_before = result_.preemptions;
  preemptions_at_start_ = preemptions_before;
  make_room_for_decodes(now);
  uint32_t budget = config_.max_batch_tokens;
  IterationWork work;
  uint64_t decode_context = 0;
  // Running decodes first, one token each; then unfinished prefills; then the queue, FCFS.
  for (uint32_t r : running_) {
    if (requests_[r].prefilling || budget == 0) continue;
    decodes_.push_back(r);
    decode_context += requests_[r].context;
    --budget;
  }
  auto schedule_prefill = [&](uint32_t r) {
    RequestState& s = requests_[r];
    uint32_t tokens = static_cast<uint32_t>(std::min<uint64_t>(s.prefill_left, budget));
    if (tokens == 0) return;
    if (config_.chunked) {
      // The chunk's blocks now; a request preempted for them leaves this iteration's decodes.
      std::vector<uint32_t> preempted;
      bool ok = allocate_chunk(r, s.context + tokens, now, preempted);
      for (uint32_t v : preempted) {
        auto it = std::find(decodes_.begin(), decodes_.end(), v);
        if (it == decodes_.end()) continue;
        decodes_.erase(it);
        decode_context -= requests_[v].context;
        ++budget;
      }
      if (!ok) return;
    }
    chunks_.push_back({r, tokens});
    cost_.add_prefill_chunk(work, tokens, s.context);
    budget -= tokens;
  };
  for (size_t i = 0; i < running_.size(); ++i)  // a chunk may preempt requests after it
    if (requests_[running_[i]].prefilling) schedule_prefill(running_[i]);
  // Chunked allocation admits as vLLM v1 does: nothing in an iteration that preempted, and a
  // request that fits memory alone waits its turn.
  const bool chunked = config_.chunked;
  while (budget > 0 && !waiting_.empty() && running_.size() < config_.max_running) {
    // (An iteration left empty by preemptions admits at once: vLLM's next step would.)
    if (chunked && result_.preemptions != preemptions_before &&
        !(chunks_.empty() && decodes_.empty()))
      break;
    uint32_t r = waiting_.front();
    if (chunked ? !admit_chunked(r, now, budget) : !admit(r, now)) {
      // Memory frees up later (as running requests finish, or P/D's KV leaves the link).
      // (P/D's decode cache: held prefixes are let go when their KV arrives.)
      if (chunked ? !never_fits(r) : !running_.empty() || !sending_.empty() || !held_.empty())
        break;
      // Larger than the whole memory even with nothing else running: it can never run.
      waiting_.pop_front();
      queued_prefill_ -= prompt_tokens(r) + requests_[r].generated;
      done_(r, now, true);
      continue;
    }
    if (!requests_[r].counted) {  // the hits the metrics count: its first admission's
      requests_[r].counted = true;
      requests_[r].counted_hits = requests_[r].hit_blocks;
      requests_[r].counted_tier_hits = requests_[r].tier_hits;
    }
    waiting_.pop_front();
    schedule_prefill(r);
  }
  if (!decodes_.empty())
    cost_.add_decode(work, static_cast<uint32_t>(decodes_.size()), decode_context);
  if (chunks_.empty() && decodes_.empty()) {
    // P/D: preemptions here may have freed the memory transferred KV waits for.
    if (config_.role == Config::Role::kDecode && running_.empty() && !kv_waiting_.empty()) {
      const size_t queued = waiting_.size();  // (decode cache: a request that lost its hold)
      admit_transferred(now);
      if (!running_.empty() || waiting_.size() > queued) return start_iteration(now);
    }
    busy_ = false;
    return -1;
  }
  double seconds = cost_.iteration_time(work);
  compute_seconds_ = seconds;
  if (pending_transfer_s_ > 0) {  // memory tiers: loaded before the pass, or alongside it
    seconds = config_.overlap_transfers ? std::max(seconds, pending_transfer_s_)
                                        : seconds + pending_transfer_s_;
    transfer_seconds_ += pending_transfer_s_;
    pending_transfer_s_ = 0;
  }
  busy_ = true;
  result_.busy_seconds += seconds;
  return seconds;
}

double Worker::plan_stretch(double start, double seconds) {
  stretch_steps_ = 1;
  // An iteration that preempted may leave admission to the next (chunked allocation; a P/D
  // decode worker takes arrived KV before it makes room): no stretch starts there.
  if (!chunks_.empty() || decodes_.size() != running_.size() ||
      result_.preemptions != preemptions_at_start_)
    return start + seconds;
  // Every running request decodes and nothing can be admitted: the next iterations run the same
  // batch (admission retries the same head of the queue against the same memory) until a
  // request completes (k = target - generated) or needs a new block at an iteration's start
  // (make_room_for_decodes: context + k + 1 tokens over its blocks).
  const uint64_t b = workload_.sequences.block_tokens;
  uint64_t steps = UINT64_MAX, context = 0;
  for (uint32_t r : decodes_) {
    const RequestState& s = requests_[r];
    // (P/D: a decode worker holds transferred KV as private blocks, the prompt's included.)
    uint64_t held =
        (uint64_t{s.transferred ? 0 : workload_.prompt_blocks[r]} + s.private_blocks) * b;
    uint64_t room = held > s.context ? held - s.context : 1;
    uint32_t target = target_tokens(r);
    steps = std::min({steps, uint64_t{target > s.generated ? target - s.generated : 1}, room});
    context += s.context;
  }
  stretch_end_.clear();
  stretch_seconds_.clear();
  double now = start + seconds;
  stretch_end_.push_back(now);
  stretch_seconds_.push_back(seconds);
  const uint32_t m = static_cast<uint32_t>(decodes_.size());
  IterationWork work;  // what start_iteration builds for these decodes (add_decode), k steps on
  cost_.add_decode(work, m, context);
  for (uint64_t k = 1; k < steps; ++k) {
    work.decode_context = context + k * m;
    double dt = cost_.iteration_time(work);
    now += dt;
    stretch_end_.push_back(now);
    stretch_seconds_.push_back(dt);
  }
  stretch_steps_ = stretch_end_.size();
  return now;
}

double Worker::cut_stretch(double now) {
  // The first iteration ending after `now` is in progress; the stretch stops with it.
  auto it = std::upper_bound(stretch_end_.begin(), stretch_end_.end(), now);
  if (it == stretch_end_.end()) return stretch_end_.back();  // the stretch's end event is at `now`
  stretch_steps_ = static_cast<uint64_t>(it - stretch_end_.begin()) + 1;
  return *it;
}

void Worker::end_iteration(double now) {
  busy_ = false;
  if (stretch_steps_ > 1) {
    // The stretch's earlier iterations: each decode produced one token per iteration.
    uint64_t skipped = stretch_steps_ - 1;
    for (uint64_t k = 1; k < stretch_steps_; ++k) result_.busy_seconds += stretch_seconds_[k];
    for (uint32_t r : decodes_) {
      requests_[r].generated += static_cast<uint32_t>(skipped);
      requests_[r].context += skipped;
    }
    skipped_iterations_ += skipped;
  }
  stretch_steps_ = 0;
  for (const Chunk& c : chunks_) {
    RequestState& s = requests_[c.request];
    s.context += c.tokens;
    s.prefill_left -= c.tokens;
    queued_prefill_ -= c.tokens;
    const uint32_t p = workload_.prompt_blocks[c.request];
    uint64_t pt = prompt_tokens(c.request);
    uint32_t computed =
        s.context >= pt
            ? p
            : std::min<uint32_t>(
                  p, static_cast<uint32_t>(s.context / workload_.sequences.block_tokens));
    cache_.mark_computed(s.path, computed, static_cast<Time>(now * kMicrosPerSecond));
    if (s.prefill_left > 0) continue;
    // The last chunk's forward pass yields the next token (the first, unless recomputing).
    s.prefilling = false;
    ++s.generated;
    if (s.first_token < 0) s.first_token = now;
    if (s.generated >= target_tokens(c.request)) {
      complete(c.request, now);
    } else if (config_.role == Config::Role::kPrefill) {
      hand_off(c.request, now);  // P/D: the decode pool produces the rest
    }
  }
  for (uint32_t r : decodes_) {
    RequestState& s = requests_[r];
    ++s.generated;
    ++s.context;
    if (s.generated >= target_tokens(r)) complete(r, now);
  }
}

std::array<uint32_t, 2> Worker::lower_tier_prefix(std::span<const BlockKey> prompt) const {
  std::array<uint32_t, 2> out{0, 0};
  const LowerTiers* tiers = cache_.tiers();
  if (!tiers || tiers->count() == 0) return out;
  size_t hbm = cache_.computed_prefix(prompt);
  tiers->lookup(prompt, hbm, tier_found_);
  for (uint8_t t : tier_found_) ++out[tiers->tier(t).name() == "dram" ? 0 : 1];
  return out;
}

const WorkerLoad& Worker::load() {
  load_.waiting = static_cast<uint32_t>(waiting_.size() + kv_waiting_.size() + incoming_kv_);
  load_.running = static_cast<uint32_t>(running_.size());
  load_.in_flight = load_.waiting + load_.running;
  load_.queued_prefill_tokens = queued_prefill_;
  load_.active_blocks = cache_.pinned_blocks() + cache_.private_blocks();
  load_.cached_blocks = cache_.cached_blocks();
  load_.capacity_blocks = cache_.capacity();
  return load_;
}

}  // namespace kvpolicy::serve_detail
