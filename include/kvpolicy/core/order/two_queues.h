// Two FIFO queues over dense ids sharing one link array, the first with a clock's candidate
// sub-ring: S3-FIFO's small and main queues (src/policy/s3fifo.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

// Two FIFO queues over dense ids sharing one link array (a block is in one queue). A block's
// queue and its 2-bit frequency ride in the links' top bits; ids are therefore below 2^30. Each
// queue is a ring (the tail is the head's prev), so passing the head to the tail, what a clock
// hand does, only advances the head.
//
// Queue 1 (main) also keeps its candidates: the members that may be evictable, every evictable
// one among them, as a singly linked sub-ring in queue order. Its first candidate is the first
// at or after the queue's head. A clock hand passes the other members unchanged, so it need only
// visit the candidates: on Mooncake, main is mostly prompt prefixes with children, and a lap of
// every member passed about 11 of them per eviction.
class TwoQueues {
 public:
  static constexpr uint8_t kNone = 2;
  static constexpr int kWithCandidates = 1;
  static constexpr size_t kMaxIds = size_t{1} << 30;

  void resize(size_t ids) {
    if (ids <= links_.size()) return;
    if (ids > kMaxIds) throw ConfigError("s3fifo: more than 2^30 block ids");
    links_.resize(ids, Link{kNil, kNil | uint32_t{kNone} << 30, kNil});
  }
  size_t ids() const { return links_.size(); }
  uint8_t which(NodeId n) const { return static_cast<uint8_t>(links_[n].next >> 30); }
  int freq(NodeId n) const { return static_cast<int>(links_[n].prev >> 30); }
  void set_freq(NodeId n, int f) {
    links_[n].prev = (links_[n].prev & kNil) | static_cast<uint32_t>(f) << 30;
  }
  size_t size(int q) const { return size_[q]; }
  NodeId front(int q) const { return head_[q] == kNil ? kNoNode : head_[q]; }
  // The entry a hand visits after n: the next candidate for a candidate, else the next member;
  // kNoNode after the tail (or for a block in no queue).
  NodeId next(NodeId n) const {
    if (is_candidate(n)) {
      uint32_t c = links_[n].candidate;
      return c == first_ ? kNoNode : c;
    }
    uint8_t q = which(n);
    if (q == kNone) return kNoNode;
    uint32_t x = next_id(n);
    return x == head_[q] ? kNoNode : x;
  }
  // New members start with frequency 0.
  void push_back(int q, NodeId n) {
    if (head_[q] == kNil) {
      links_[n] = Link{n, n | static_cast<uint32_t>(q) << 30, kNil};
      head_[q] = n;
      ++size_[q];
    } else {
      link(q, n, prev_id(head_[q]), head_[q]);
    }
  }
  // Places n just before `pos`, in pos's queue (before the head: n becomes the head).
  void insert_before(NodeId n, NodeId pos) {
    int q = which(pos);
    link(q, n, prev_id(pos), pos);
    if (head_[q] == pos) head_[q] = n;
  }
  [[gnu::always_inline]] void erase(NodeId n) {
    if (is_candidate(n)) erase_candidate(n);
    int q = which(n);
    uint32_t p = prev_id(n), x = next_id(n);
    if (x == n) {
      head_[q] = kNil;
    } else {
      links_[p].next = x | (links_[p].next & ~kNil);
      links_[x].prev = p | (links_[x].prev & ~kNil);
      if (head_[q] == n) head_[q] = x;
    }
    links_[n] = Link{kNil | (links_[n].prev & ~kNil), kNil | uint32_t{kNone} << 30, kNil};
    --size_[q];
  }
  // The head goes to the tail, keeping its frequency.
  void rotate(int q) { head_[q] = next_id(head_[q]); }
  void move_to_back(int q, NodeId n) {  // keeps the frequency
    int f = freq(n);
    erase(n);
    push_back(q, n);
    set_freq(n, f);
  }

  bool is_candidate(NodeId n) const { return links_[n].candidate != kNil; }
  // n, just pushed to the back of queue kWithCandidates, becomes its last candidate.
  void push_candidate(NodeId n) {
    if (first_ == kNil) return alone(n);
    pred_hint_ = last_;
    candidate_after(last_, n);
  }
  // n, a member of queue kWithCandidates and no candidate, becomes one at its place in queue
  // order: after the first candidate found walking back from it, or first if the walk reaches
  // the queue's head.
  void add_candidate(NodeId n) {
    if (first_ == kNil) return alone(n);
    for (uint32_t at = n;;) {
      if (at == head_[kWithCandidates]) {
        links_[n].candidate = first_;
        links_[last_].candidate = n;
        first_ = n;
        return;
      }
      at = prev_id(at);
      if (is_candidate(at)) return candidate_after(at, n);
    }
  }
  // n, just inserted before c (its parent, no longer a leaf), takes c's place as a candidate.
  void replace_candidate(NodeId c, NodeId n) {
    if (!is_candidate(c)) return add_candidate(n);
    uint32_t p = candidate_before(c);
    if (p == c) {
      alone(n);
    } else {
      links_[p].candidate = n;
      links_[n].candidate = links_[c].candidate;
      if (first_ == c) first_ = n;
      if (last_ == c) last_ = n;
      pred_hint_ = p;  // n's own, for the request's next new block
    }
    links_[c].candidate = kNil;
  }
  // The hand reaches the first candidate, passing the members before it; kNoNode if none.
  NodeId reach_first_candidate() {
    if (first_ == kNil) return kNoNode;
    head_[kWithCandidates] = first_;
    return first_;
  }
  // The hand passes the first candidate, which stays one (pass) or leaves the candidates (drop).
  void pass_candidate() {
    head_[kWithCandidates] = next_id(first_);
    last_ = first_;
    first_ = links_[first_].candidate;
  }
  void drop_candidate() {
    uint32_t c = first_;
    head_[kWithCandidates] = next_id(c);
    erase_candidate(c);
  }

  // always_inline: GCC 12 deems a const function that only prefetches pure and drops calls.
  [[gnu::always_inline]] void prefetch(NodeId n) const { __builtin_prefetch(&links_[n]); }
  size_t memory_bytes() const { return links_.capacity() * sizeof(Link); }

 private:
  static constexpr uint32_t kNil = (uint32_t{1} << 30) - 1;  // id bits of "no block"
  struct Link {
    uint32_t prev;       // id | frequency << 30
    uint32_t next;       // id | queue << 30
    uint32_t candidate;  // the next candidate; kNil: no candidate
  };
  uint32_t prev_id(NodeId n) const { return links_[n].prev & kNil; }
  uint32_t next_id(NodeId n) const { return links_[n].next & kNil; }
  // Links n between p and x, neighbours in queue q.
  void link(int q, NodeId n, uint32_t p, uint32_t x) {
    links_[n] = Link{p, x | static_cast<uint32_t>(q) << 30, kNil};
    links_[p].next = n | (links_[p].next & ~kNil);
    links_[x].prev = n | (links_[x].prev & ~kNil);
    ++size_[q];
  }

  void alone(NodeId n) {
    links_[n].candidate = n;
    first_ = last_ = n;
  }
  void candidate_after(uint32_t p, NodeId n) {
    links_[n].candidate = links_[p].candidate;
    links_[p].candidate = n;
    if (p == last_) last_ = n;
  }
  // The candidate whose successor is c: the last for the first, else found walking back from c
  // (a request's new blocks ask for the same one in turn: pred_hint_ usually is it).
  uint32_t candidate_before(NodeId c) const {
    if (c == first_) return last_;
    if (pred_hint_ != kNil && links_[pred_hint_].candidate == c) return pred_hint_;
    uint32_t at = prev_id(c);
    while (!is_candidate(at)) at = prev_id(at);
    return at;
  }
  void erase_candidate(NodeId c) {
    uint32_t p = candidate_before(c);
    if (p == c) {
      first_ = last_ = kNil;
    } else {
      links_[p].candidate = links_[c].candidate;
      if (first_ == c) first_ = links_[c].candidate;
      if (last_ == c) last_ = p;
    }
    links_[c].candidate = kNil;
  }

  BlockVector<Link> links_;
  uint32_t head_[2] = {kNil, kNil};
  size_t size_[2] = {0, 0};
  uint32_t first_ = kNil, last_ = kNil;  // the first and last candidates
  uint32_t pred_hint_ = kNil;            // often the candidate before the one asked about
};

}  // namespace kvpolicy
