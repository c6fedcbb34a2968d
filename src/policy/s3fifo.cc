// S3-FIFO: a small probationary FIFO, a main FIFO run as a 2-bit clock, and a ghost FIFO of
// recently evicted keys; evicts unpromoted blocks from small, cold blocks from main.
// Source: Yang et al., "FIFO queues are all you need for cache eviction", SOSP'23; rules as in
// libCacheSim's S3FIFO.c. Cost: O(1) per access; amortized O(1) per eviction, plus, when a
// block in main becomes evictable again, a walk back over main's blocks to its place among the
// candidates (see TwoQueues: 1.7 steps on average on Mooncake).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kvpolicy/core/order/two_queues.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"
#include "s3fifo_ghost.h"

namespace kvpolicy {
namespace {

// Applied over evictable leaves: both queues hold every cached block, and a block that is not
// evictable (interior or pinned) when it reaches a queue's head is passed to that queue's tail
// unchanged (frequency kept; it was no candidate), except that a small-queue block that earned
// promotion is promoted whatever its state. A request's new blocks enter deepest-first (each
// just before its parent when both are new), so a prompt's tail leaves before its head.
class S3Fifo final : public InlinedPolicy<S3Fifo> {
 public:
  static constexpr int kMain = TwoQueues::kWithCandidates, kSmall = 1 - kMain;

  static constexpr PolicyHooks kHooks{.prefetch_for_access = true, .prefetch_for_insert = true};
  S3Fifo(const PolicyContext& ctx, const Params& p)
      : tree_(ctx.tree),
        threshold_(static_cast<int>(p.get_int("move_threshold"))),
        fill_main_first_(p.get_bool("fill_main_first")),
        ghost_(ghost_size(ctx, p)) {
    double small = p.get_double("small_ratio");
    // libCacheSim floors the small size; a cache of under ten blocks still needs one slot.
    small_cap_ = std::max<size_t>(1, static_cast<size_t>(ctx.capacity_blocks * small));
    main_cap_ = ctx.capacity_blocks > small_cap_ ? ctx.capacity_blocks - small_cap_ : 0;
  }

  void reserve_ids(size_t ids) override { queues_.resize(ids); }
  void on_request_begin(const RequestView& r) override {
    add_evicted_to_ghost();  // evictions the owner asked for between requests
    chosen_ = kNoNode;
    last_new_ = kNoNode;
    prompt_ = r.blocks;
  }
  // A hit raises the block's frequency, kept in its queue link.
  [[gnu::always_inline]] void prefetch_for_access(NodeId n) const { queues_.prefetch(n); }
  // A new block is looked up in the ghost.
  [[gnu::always_inline]] void prefetch_for_insert(BlockKey key) const { ghost_.prefetch(key); }
  // The hooks, and the ghost's take and add, are always_inline into the replay (InlinedPolicy):
  // with the ghost's one-multiply hash, faster than as calls (measured: docs/experiments.md,
  // S3-FIFO).
  [[gnu::always_inline]] void on_access(NodeId n, const AccessInfo& info) override {
    chosen_ = kNoNode;
    if (info.reused()) {
      queues_.set_freq(n, std::min(queues_.freq(n) + 1, kMaxFreq));
      return;
    }
    // New here: it enters a queue with frequency 0, and so will the rest of the prompt (a miss
    // ends the cached prefix), each after a ghost lookup. The walk fetched the ghost buckets of
    // the blocks up to kNodesAhead past its end (prefetch_for_insert); each new block fetches
    // those of the block kNodesAhead after it.
    if (size_t k = info.position + RequestWalk::kNodesAhead; k < prompt_.size())
      ghost_.prefetch(prompt_[k]);
    int q = kSmall;
    bool ghost_hit = ghost_.take(tree_->key(n));
    // libCacheSim looks the new block up before evicting room for it: the keys those evictions
    // put in the ghost go in after the lookup, so a full ghost never drops the block first.
    add_evicted_to_ghost();
    if (ghost_hit) {
      q = kMain;  // evicted from small recently and back: it earned main directly
    } else if (fill_main_first_ && !has_evicted_ && queues_.size(kSmall) >= small_cap_) {
      q = kMain;  // libCacheSim since Dec. 2024: fill main too before the first eviction
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
    chosen_ = kNoNode;
    int q = queues_.which(n);
    ++evictable_[q];
    if (q == kMain && !queues_.is_candidate(n)) queues_.add_candidate(n);
  }
  void on_unevictable(NodeId n) override {
    chosen_ = kNoNode;
    --evictable_[queues_.which(n)];
  }

  // The scans promote and pass blocks on their way, after which a second scan could pick
  // another queue: the choice is kept until the policy is told anything.
  [[gnu::always_inline]] NodeId victim(Time) override {
    if (chosen_ != kNoNode) return chosen_;
    if (evictable_[kSmall] + evictable_[kMain] == 0) return kNoNode;
    for (;;) {
      bool main = queues_.size(kMain) > main_cap_ || queues_.size(kSmall) == 0;
      if (evictable_[main ? kMain : kSmall] == 0) main = !main;
      chosen_ = main ? scan_main() : scan_small();
      if (chosen_ != kNoNode) return chosen_;  // else small promoted all its evictable blocks
    }
  }
  // A block promoted to HBM leaves this (DRAM) tier's policy without being evicted: it was not
  // counted as evictable (it is pinned) and gets no ghost entry.
  [[gnu::always_inline]] void on_removed(NodeId n, Removal why) override {
    chosen_ = kNoNode;
    prefetch_next_victims(*tree_, queues_, n);  // the queue's next entries
    int q = queues_.which(n);
    queues_.erase(n);
    if (!is_victim(why)) return;
    --evictable_[q];
    if (q == kSmall) evicted_from_small_.push_back(tree_->key(n));
    has_evicted_ = true;
  }
  void on_request_end(const RequestView&, std::span<const NodeId>) override {
    add_evicted_to_ghost();
  }
  size_t memory_bytes() const override {
    return queues_.memory_bytes() + ghost_.memory_bytes() +
           evicted_from_small_.capacity() * sizeof(BlockKey);
  }

 private:
  static constexpr int kMaxFreq = 3;  // libCacheSim keeps a 2-bit counter in main

  static size_t ghost_size(const PolicyContext& ctx, const Params& p) {
    double ratio = p.get_double("ghost_ratio");
    return static_cast<size_t>(std::floor(double(ctx.capacity_blocks) * ratio));
  }

  [[gnu::always_inline]] void add_evicted_to_ghost() {
    for (BlockKey key : evicted_from_small_) ghost_.add(key);
    evicted_from_small_.clear();
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
  bool fill_main_first_;
  size_t small_cap_ = 1, main_cap_ = 0;
  bool has_evicted_ = false;
  NodeId last_new_ = kNoNode;
  NodeId chosen_ = kNoNode;           // the last victim(), until the policy is told anything
  std::span<const BlockKey> prompt_;  // the current request's keys, for prefetching
  std::vector<BlockKey> evicted_from_small_;  // for the ghost, after the next block's lookup
  size_t evictable_[2] = {0, 0};
  TwoQueues queues_;
  s3fifo::GhostFifo ghost_;
};

const bool registered = register_policy<S3Fifo>({
    .name = "s3fifo",
    .summary = "small FIFO + main clock + ghost FIFO, over evictable leaves",
    .paper = "Yang et al., FIFO queues are all you need for cache eviction, SOSP'23",
    .params = {param_double("small_ratio", 0.1,
                            {.min = 0, .max = 1, .min_exclusive = true, .max_exclusive = true},
                            "small FIFO's share of the capacity"),
               param_double("ghost_ratio", 0.9, {.min = 0, .max = 100},
                            "ghost FIFO's size as a share of the capacity (8-byte fingerprint "
                            "entries)"),
               // Up to kMaxFreq, the main queue's 2-bit counter.
               param_int("move_threshold", 2, {.min = 1, .max = 3},
                         "hits in small needed to be promoted to main"),
               param_bool("fill_main_first", true,
                          "before the first eviction a full small sends new blocks to main "
                          "(libCacheSim's S3FIFO.c since Dec. 2024; false: its earlier rule, "
                          "every new block enters small, as in libCacheSim aa0fc40)")},
    .variants = {"ghost_ratio=0", "move_threshold=1", "fill_main_first=false"},
});

}  // namespace
}  // namespace kvpolicy
