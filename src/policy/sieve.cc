// SIEVE: a FIFO queue with a visited bit per block and a hand that moves from old to new,
// clearing visited bits and evicting the first unvisited evictable leaf it meets.
// Source: Zhang et al., "SIEVE is Simpler than LRU", NSDI'24. Cost: O(1) per access; amortized
// O(1) per eviction (the hand passes each entry once per lap; see below for interior blocks).
#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/order/intrusive_list.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"

namespace kvpolicy {
namespace {

// The queue holds every cached block in insertion order, oldest at the front. A request's new
// blocks are placed deepest-first (each just before its parent when both are new), so the hand
// meets the tail of a prompt before its head, and an evicted leaf's parent is the next entry.
//
// Blocks that are not evictable (interior or pinned) stay in the queue and the hand passes
// over them without touching their visited bit: they were not candidates, and a block that
// was hit while interior keeps that credit for when it becomes a leaf. The hand stays where it
// stopped, as in the paper, so a lap costs at most one pass over the cache.
class Sieve final : public InlinedPolicy<Sieve> {
 public:
  static constexpr PolicyHooks kHooks{};
  explicit Sieve(const PolicyContext& ctx) : tree_(ctx.tree) {}
  void reserve_ids(size_t ids) override {
    visited_.resize(ids, 0);
    queue_.resize(ids);
  }

  void on_request_begin(const RequestView&) override { last_new_ = kNoNode; }
  void on_access(NodeId n, const AccessInfo& info) override {
    if (info.reused()) {
      visited_[n] = 1;
      return;
    }
    visited_[n] = 0;
    // A request inserts root first, so a parent new in this request is the previous new block.
    NodeId parent = tree_->parent(n);
    if (parent != kNoNode && parent == last_new_) {
      queue_.insert_before(n, parent);
    } else {
      queue_.push_back(n);
    }
    last_new_ = n;
  }
  void on_evictable(NodeId) override { ++evictable_; }
  void on_unevictable(NodeId) override { --evictable_; }

  NodeId victim(Time) override {
    if (evictable_ == 0) return kNoNode;
    // Two laps clear every visited bit, so an evictable leaf turns up within them; the bound
    // only guards against a miscounted `evictable_`.
    for (size_t steps = 2 * queue_.size() + 1; steps-- > 0;) {
      if (hand_ == kNoNode) hand_ = queue_.front();
      NodeId n = hand_;
      if (tree_->is_evictable(n)) {
        if (!visited_[n]) return n;  // the hand stays; on_removed moves it on
        visited_[n] = 0;
      }
      hand_ = queue_.next(n);
    }
    return kNoNode;
  }
  // A victim is evictable; a promoted block is pinned, so it was not counted.
  void on_removed(NodeId n, Removal why) override {
    // The entries after the hand are the likely next victims.
    if (hand_ == n) prefetch_next_victims(*tree_, queue_, n);
    if (hand_ == n) hand_ = queue_.next(n);
    queue_.erase(n);
    if (is_victim(why)) --evictable_;
  }
  size_t memory_bytes() const override { return visited_.capacity() + queue_.memory_bytes(); }

 private:
  const PrefixTree* tree_;
  NodeId last_new_ = kNoNode;  // last block the current request inserted
  size_t evictable_ = 0;
  NodeId hand_ = kNoNode;  // next entry to examine; kNoNode = start over at the oldest
  BlockVector<uint8_t> visited_;
  IntrusiveList queue_;
};

const bool registered = register_policy<Sieve>({
    .name = "sieve",
    .summary = "FIFO with a visited bit and a moving hand, over evictable leaves",
    .paper = "Zhang et al., SIEVE is Simpler than LRU, NSDI'24",
});

}  // namespace
}  // namespace kvpolicy
