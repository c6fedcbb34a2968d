// S3-FIFO: a small probationary FIFO, a main FIFO run as a 2-bit clock, and a ghost FIFO of
// recently evicted keys; evicts unpromoted blocks from small, cold blocks from main.
// Source: Yang et al., "FIFO queues are all you need for cache eviction", SOSP'23; rules as in
// libCacheSim's S3FIFO.c. Cost: O(1) per access; amortized O(1) per eviction.
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
// queue and its 2-bit frequency ride in the links' top bits, so a block costs 8 bytes, as
// LRU's list does; ids are therefore below 2^30. Each queue is a ring (the tail is the head's
// prev), so passing the head to the tail, what a clock hand does, only advances the head.
class TwoQueues {
 public:
  static constexpr uint8_t kNone = 2;
  static constexpr size_t kMaxIds = size_t{1} << 30;

  void resize(size_t ids) {
    if (ids <= links_.size()) return;
    if (ids > kMaxIds) throw ConfigError("s3fifo: more than 2^30 block ids");
    links_.resize(ids, Link{kNil, kNil | uint32_t{kNone} << 30});
  }
  size_t ids() const { return links_.size(); }
  uint8_t which(NodeId n) const { return static_cast<uint8_t>(links_[n].next >> 30); }
  int freq(NodeId n) const { return static_cast<int>(links_[n].prev >> 30); }
  void set_freq(NodeId n, int f) {
    links_[n].prev = (links_[n].prev & kNil) | static_cast<uint32_t>(f) << 30;
  }
  size_t size(int q) const { return size_[q]; }
  NodeId front(int q) const { return head_[q] == kNil ? kNoNode : head_[q]; }
  // The entry after n in its queue; kNoNode after the tail (or for a block in no queue).
  NodeId next(NodeId n) const {
    uint8_t q = which(n);
    if (q == kNone) return kNoNode;
    uint32_t x = next_id(n);
    return x == head_[q] ? kNoNode : x;
  }
  // New members start with frequency 0.
  void push_back(int q, NodeId n) {
    if (head_[q] == kNil) {
      links_[n] = Link{n, n | static_cast<uint32_t>(q) << 30};
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
  void erase(NodeId n) {
    int q = which(n);
    uint32_t p = prev_id(n), x = next_id(n);
    if (x == n) {
      head_[q] = kNil;
    } else {
      links_[p].next = x | (links_[p].next & ~kNil);
      links_[x].prev = p | (links_[x].prev & ~kNil);
      if (head_[q] == n) head_[q] = x;
    }
    links_[n] = Link{kNil | (links_[n].prev & ~kNil), kNil | uint32_t{kNone} << 30};
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
  // always_inline: GCC 12 deems a const function that only prefetches pure and drops calls.
  [[gnu::always_inline]] void prefetch(NodeId n) const { __builtin_prefetch(&links_[n]); }
  size_t memory_bytes() const { return links_.capacity() * sizeof(Link); }

 private:
  static constexpr uint32_t kNil = (uint32_t{1} << 30) - 1;  // id bits of "no block"
  struct Link {
    uint32_t prev;  // id | frequency << 30
    uint32_t next;  // id | queue << 30
  };
  uint32_t prev_id(NodeId n) const { return links_[n].prev & kNil; }
  uint32_t next_id(NodeId n) const { return links_[n].next & kNil; }
  // Links n between p and x, neighbours in queue q.
  void link(int q, NodeId n, uint32_t p, uint32_t x) {
    links_[n] = Link{p, x | static_cast<uint32_t>(q) << 30};
    links_[p].next = n | (links_[p].next & ~kNil);
    links_[x].prev = n | (links_[x].prev & ~kNil);
    ++size_[q];
  }
  BlockVector<Link> links_;
  uint32_t head_[2] = {kNil, kNil};
  size_t size_[2] = {0, 0};
};

// Applied over evictable leaves: both queues hold every cached block, and a block that is not
// evictable (interior or pinned) when it reaches a queue's head is passed to that queue's tail
// unchanged (frequency kept; it was no candidate), except that a small-queue block that earned
// promotion is promoted whatever its state. A request's new blocks enter deepest-first (each
// just before its parent when both are new), so a prompt's tail leaves before its head.
class S3Fifo final : public InlinedPolicy<S3Fifo> {
 public:
  static constexpr int kSmall = 0, kMain = 1;

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
  void on_access(NodeId n, const AccessInfo& info) override {
    if (n >= queues_.ids()) queues_.resize(std::max<size_t>(tree_->id_limit(), size_t{n} + 1));
    if (info.hit) {
      queues_.set_freq(n, std::min(queues_.freq(n) + 1, kMaxFreq));
      return;
    }
    // New here: it enters a queue with frequency 0. So will the rest of the prompt (a miss ends
    // the cached prefix): their ghost lookups are fetched ahead.
    constexpr size_t kAhead = 8;
    for (size_t k = info.position + (last_new_ == kNoNode ? 1 : kAhead);
         k <= info.position + kAhead && k < prompt_.size(); ++k)
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
    } else {
      queues_.push_back(q, n);
    }
    last_new_ = n;
  }
  void on_evictable(NodeId n) override { ++evictable_[queues_.which(n)]; }
  void on_unevictable(NodeId n) override { --evictable_[queues_.which(n)]; }

  NodeId victim(Time) override {
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
  void on_removed(NodeId n) override {
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
  }
  // Evicts the first unpromoted evictable block; returns kNoNode once small has no evictable
  // block left (all promoted). Each pass over an entry moves it, so this ends within |small|.
  NodeId scan_small() {
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
  // evictable_[kMain] > 0, and then ends within four laps.
  NodeId scan_main() {
    for (;;) {
      NodeId x = queues_.front(kMain);
      if (!tree_->is_evictable(x)) {
        queues_.rotate(kMain);
      } else if (int f = queues_.freq(x); f > 0) {
        queues_.rotate(kMain);
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
