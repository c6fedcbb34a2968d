// S3-FIFO: a small probationary FIFO, a main FIFO run as a 2-bit clock, and a ghost FIFO of
// recently evicted keys; evicts unpromoted blocks from small, cold blocks from main.
// Source: Yang et al., "FIFO queues are all you need for cache eviction", SOSP'23; rules as in
// libCacheSim's S3FIFO.c. Cost: O(1) per access; amortized O(1) per eviction, plus, when a
// block in main becomes evictable again, a walk back over main's blocks to its place among the
// candidates (see TwoQueues: 1.7 steps on average on Mooncake).
#include <algorithm>
#include <cmath>
#include <vector>

#include "cache_access.h"
#include "kvpolicy/error.h"
#include "kvpolicy/huge_pages.h"
#include "kvpolicy/policy.h"
#include "s3fifo_ghost.h"

namespace kvpolicy {
namespace {

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

// Applied over evictable leaves: both queues hold every cached block, and a block that is not
// evictable (interior or pinned) when it reaches a queue's head is passed to that queue's tail
// unchanged (frequency kept; it was no candidate), except that a small-queue block that earned
// promotion is promoted whatever its state. A request's new blocks enter deepest-first (each
// just before its parent when both are new), so a prompt's tail leaves before its head.
class S3Fifo final : public InlinedPolicy<S3Fifo> {
 public:
  static constexpr int kMain = TwoQueues::kWithCandidates, kSmall = 1 - kMain;

  S3Fifo(const PolicyContext& ctx, const Params& p)
      : tree_(ctx.tree),
        threshold_(static_cast<int>(p.get_int("move_threshold"))),
        ghost_(ghost_size(ctx, p)) {
    double small = p.get_double("small_ratio");
    if (!(small > 0 && small < 1)) throw ConfigError("s3fifo: small_ratio must be in (0, 1)");
    if (threshold_ < 1 || threshold_ > kMaxFreq)
      throw ConfigError("s3fifo: move_threshold must be in 1..3");
    // libCacheSim floors the small size; a cache of under ten blocks still needs one slot.
    small_cap_ = std::max<size_t>(1, static_cast<size_t>(ctx.capacity_blocks * small));
    main_cap_ = ctx.capacity_blocks > small_cap_ ? ctx.capacity_blocks - small_cap_ : 0;
  }

  void on_request_begin(const RequestView& r) override {
    last_new_ = kNoNode;
    prompt_ = r.blocks;
  }
  // A hit raises the block's frequency, kept in its queue link.
  [[gnu::always_inline]] void prefetch_for_access(NodeId n) const {
    if (n < queues_.ids()) queues_.prefetch(n);
  }
  // A new block is looked up in the ghost.
  [[gnu::always_inline]] void prefetch_for_insert(BlockKey key) const { ghost_.prefetch(key); }
  // The hooks, and the ghost's take and add, are always_inline into the replay (InlinedPolicy):
  // with the ghost's one-multiply hash, faster than as calls (measured: docs/experiments.md,
  // S3-FIFO).
  [[gnu::always_inline]] void on_access(NodeId n, const AccessInfo& info) override {
    if (n >= queues_.ids()) queues_.resize(std::max<size_t>(tree_->id_limit(), size_t{n} + 1));
    if (info.hit) {
      queues_.set_freq(n, std::min(queues_.freq(n) + 1, kMaxFreq));
      return;
    }
    // New here: it enters a queue with frequency 0, and so will the rest of the prompt (a miss
    // ends the cached prefix), each after a ghost lookup. The walk fetched the ghost buckets of
    // the blocks up to kNodesAhead past its end (prefetch_for_insert); each new block fetches
    // those of the block kNodesAhead after it.
    if (size_t k = info.position + cache_detail::kNodesAhead; k < prompt_.size())
      ghost_.prefetch(prompt_[k]);
    int q = kSmall;
    if (ghost_.take(tree_->key(n))) {
      q = kMain;  // evicted from small recently and back: it earned main directly
    } else if (!has_evicted_ && queues_.size(kSmall) >= small_cap_) {
      q = kMain;  // libCacheSim: fill main too before the first eviction
    }
    // Insert order only: the parent was the previous new block of this request.
    NodeId parent = tree_->parent(n);
    if (parent != kNoNode && parent == last_new_ && queues_.which(parent) == q) {
      queues_.insert_before(n, parent);
      if (q == kMain) queues_.replace_candidate(parent, n);
    } else {
      queues_.push_back(q, n);
      if (q == kMain) queues_.push_candidate(n);
    }
    last_new_ = n;
  }
  [[gnu::always_inline]] void on_evictable(NodeId n) override {
    int q = queues_.which(n);
    ++evictable_[q];
    if (q == kMain && !queues_.is_candidate(n)) queues_.add_candidate(n);
  }
  void on_unevictable(NodeId n) override { --evictable_[queues_.which(n)]; }

  [[gnu::always_inline]] NodeId victim(Time) override {
    if (evictable_[kSmall] + evictable_[kMain] == 0) return kNoNode;
    for (;;) {
      bool main = queues_.size(kMain) > main_cap_ || queues_.size(kSmall) == 0;
      if (evictable_[main ? kMain : kSmall] == 0) main = !main;
      NodeId v = main ? scan_main() : scan_small();
      if (v != kNoNode) return v;  // else small promoted all its evictable blocks: try main
    }
  }
  // Only a victim is evictable when removed; a pinned DRAM block promoted to HBM leaves this
  // tier's policy without being evicted (no ghost entry).
  [[gnu::always_inline]] void on_removed(NodeId n) override {
    prefetch_next_victims(*tree_, queues_, n);  // the queue's next entries
    int q = queues_.which(n);
    queues_.erase(n);
    if (!tree_->is_evictable(n)) return;
    --evictable_[q];
    if (q == kSmall) ghost_.add(tree_->key(n));
    has_evicted_ = true;
  }
  size_t memory_bytes() const override { return queues_.memory_bytes() + ghost_.memory_bytes(); }

 private:
  static constexpr int kMaxFreq = 3;  // libCacheSim keeps a 2-bit counter in main

  static size_t ghost_size(const PolicyContext& ctx, const Params& p) {
    double ratio = p.get_double("ghost_ratio");
    if (ratio < 0 || ratio > 100) throw ConfigError("s3fifo: ghost_ratio must be in [0, 100]");
    return static_cast<size_t>(std::floor(double(ctx.capacity_blocks) * ratio));
  }

  void move(NodeId n, int to) {
    bool ev = tree_->is_evictable(n);
    if (ev) --evictable_[queues_.which(n)];
    queues_.move_to_back(to, n);
    if (ev) ++evictable_[to];
    if (to == kMain && tree_->is_tier_leaf(n)) queues_.push_candidate(n);
  }
  // Evicts the first unpromoted evictable block; returns kNoNode once small has no evictable
  // block left (all promoted). Each pass over an entry moves it, so this ends within |small|.
  [[gnu::always_inline]] NodeId scan_small() {
    while (evictable_[kSmall] > 0) {
      NodeId x = queues_.front(kSmall);
      if (queues_.freq(x) >= threshold_) {
        move(x, kMain);
        queues_.set_freq(x, 0);  // libCacheSim: a promoted object starts afresh in main
      } else if (!tree_->is_evictable(x)) {
        queues_.rotate(kSmall);
      } else {
        return x;
      }
    }
    return kNoNode;
  }
  // Clock over main: reinserts evictable blocks with credit, spending one unit; needs
  // evictable_[kMain] > 0, and then ends within four laps. It visits only main's candidates
  // (see TwoQueues); a candidate found with children is one no more until it is evictable.
  NodeId scan_main() {
    for (;;) {
      NodeId x = queues_.reach_first_candidate();
      if (!tree_->is_evictable(x)) {
        if (tree_->is_tier_leaf(x)) {
          queues_.pass_candidate();  // pinned
        } else {
          queues_.drop_candidate();
        }
      } else if (int f = queues_.freq(x); f > 0) {
        queues_.pass_candidate();
        queues_.set_freq(x, f - 1);
      } else {
        return x;
      }
    }
  }

  const PrefixTree* tree_;
  int threshold_;
  size_t small_cap_ = 1, main_cap_ = 0;
  bool has_evicted_ = false;
  NodeId last_new_ = kNoNode;
  std::span<const BlockKey> prompt_;  // the current request's keys, for prefetching
  size_t evictable_[2] = {0, 0};
  TwoQueues queues_;
  s3fifo::GhostFifo ghost_;
};

PolicyRegistrar registrar({
    .name = "s3fifo",
    .summary = "small FIFO + main clock + ghost FIFO, over evictable leaves",
    .paper = "Yang et al., FIFO queues are all you need for cache eviction, SOSP'23",
    .params = {{"small_ratio", "0.1", "small FIFO's share of the capacity"},
               {"ghost_ratio", "0.9",
                "ghost FIFO's size as a share of the capacity (8-byte fingerprint entries)"},
               {"move_threshold", "2", "hits in small needed to be promoted to main (1..3)"}},
    .make = [](const PolicyContext& ctx, const Params& p) -> std::unique_ptr<Policy> {
      return std::make_unique<S3Fifo>(ctx, p);
    },
});

}  // namespace
}  // namespace kvpolicy
