// ARC: Adaptive Replacement Cache over the prefix tree's evictable leaves. T1 holds blocks seen
// once since they came in, T2 blocks seen again; ghost lists B1 and B2 keep the keys evicted
// from each, and a hit in a ghost moves the target size p of T1 towards the list that missed.
// Source: Megiddo & Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache", FAST'03
// (docs/policies.md). Cost: O(1) per access and per ghost operation (hash maps); O(log n) per
// eviction and per leaf change (each list's evictable leaves in a heap by last access).
#include <algorithm>
#include <span>
#include <vector>

#include "arc_ghost.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"
#include "leaf_heap.h"

namespace kvpolicy {
namespace {

// What "leaves only" changes from the textbook (c = capacity in blocks):
//  - REPLACE takes the least recent *evictable leaf* of T1 or T2, not the list's LRU block; if
//    the list its rule picks has none, the other list's (the textbook's lists always have one).
//  - The walk evicts before it tells the policy of the block it makes room for, so victim()
//    looks ahead at that block (the current prompt's next one) for the ghost-hit adaptation of
//    p and the "x in B2 and |T1| = p" rule, without committing them; on_access commits them.
//    Evictions with no block coming (the owner's, between requests) see no x.
//  - The textbook's miss cases drop the LRU of B1 (|T1| + |B1| = c) or of B2 (directory
//    full at 2c) before REPLACE; here the evicted key enters its ghost first and the ghosts are
//    trimmed back to |T1| + |B1| <= c and |T1| + |T2| + |B1| + |B2| <= 2c when the new block
//    comes in: the same lists after each request's insertion.
//  - Each list orders its blocks by last access (a request counter), deeper first on ties: the
//    order of lru's list. Its evictable leaves sit in a heap, so that interior and pinned blocks
//    (a list's LRU end is often a prefix whose children sit in the other list) cost nothing.
//  - A block leaving without being the victim (promoted to the tier above) gets no ghost entry.
class Arc final : public InlinedPolicy<Arc> {
 public:
  static constexpr PolicyHooks kHooks{};
  explicit Arc(const PolicyContext& ctx)
      : tree_(*ctx.tree), c_(double(ctx.capacity_blocks)), t1_({ctx.tree}), t2_({ctx.tree}) {}
  void reserve_ids(size_t ids) override {
    t1_.resize(ids);
    t2_.resize(ids);
    if (ids > list_.size()) list_.resize(ids, kNone);
  }

  void on_request_begin(const RequestView& r) override {
    ++clock_;
    has_planned_ = false;
    prompt_ = r.blocks;
    next_ = 0;
    open_ = true;
  }
  void on_request_end(const RequestView&, std::span<const NodeId>) override { open_ = false; }

  void on_access(NodeId n, const AccessInfo& info) override {
    next_ = info.position + 1;
    bool before_eviction = has_planned_;
    has_planned_ = false;
    if (info.reused()) {  // a hit in T1 or T2: to T2's MRU end
      leave(n);
      enter(kT2, n);
      return;
    }
    BlockKey key = tree_.key(n);
    // The textbook adapts p with the ghost sizes before REPLACE: victim() planned it then.
    bool in_b1 = b1_.contains(key);
    if (in_b1 || b2_.contains(key)) {
      p_ = before_eviction && planned_key_ == key ? planned_p_ : adapted(key);
      (in_b1 ? b1_ : b2_).erase(key);
      enter(kT2, n);
    } else {
      enter(kT1, n);
      trim_ghosts();
    }
  }
  void on_evictable(NodeId n) override { heap(n).insert(n); }
  void on_unevictable(NodeId n) override { heap(n).erase(n); }

  // REPLACE(x, p): T1's LRU evictable leaf if |T1| > p (or x in B2 and |T1| = p), else T2's.
  NodeId victim(Time) override {
    const BlockKey* x = coming();
    if (x && !(has_planned_ && planned_key_ == *x)) {
      planned_key_ = *x;
      planned_p_ = adapted(*x);
      has_planned_ = true;
    }
    NodeId a = t1_.top(), b = t2_.top();
    if (a == kNoNode) return b;
    if (b == kNoNode) return a;
    double p = x ? planned_p_ : p_;
    double t1 = double(sizes_[kT1]);
    bool from_t1 = t1 > p || (x && b2_.contains(*x) && t1 == p);
    return from_t1 ? a : b;
  }
  void on_removed(NodeId n, Removal why) override {
    bool victim = is_victim(why);
    uint8_t was = list_[n];
    if (was == kNone) return;
    heap(n).erase(n);
    leave(n);
    if (victim) (was == kT1 ? b1_ : b2_).push(tree_.key(n));
  }
  size_t memory_bytes() const override {
    return t1_.memory_bytes() + t2_.memory_bytes() + list_.capacity() + b1_.memory_bytes() +
           b2_.memory_bytes();
  }
  PolicyStats stats() const override {
    return {{"arc_p", p_},
            {"arc_t1", double(sizes_[kT1])},
            {"arc_t2", double(sizes_[kT2])},
            {"arc_b1", double(b1_.size())},
            {"arc_b2", double(b2_.size())}};
  }

 private:
  // Within a request, the block the walk is about to insert: the prompt's next block.
  const BlockKey* coming() const {
    if (!open_ || next_ >= prompt_.size()) return nullptr;
    return &prompt_[next_];
  }
  // p after a ghost hit on x (unchanged if x is in neither ghost).
  double adapted(BlockKey x) const {
    if (b1_.contains(x))
      return std::min(c_, p_ + std::max(double(b2_.size()) / double(b1_.size()), 1.0));
    if (b2_.contains(x))
      return std::max(0.0, p_ - std::max(double(b1_.size()) / double(b2_.size()), 1.0));
    return p_;
  }
  void trim_ghosts() {
    while (!b1_.empty() && double(sizes_[kT1] + b1_.size()) > c_) b1_.pop_oldest();
    while (double(sizes_[kT1] + sizes_[kT2] + b1_.size() + b2_.size()) > 2 * c_) {
      if (!b2_.empty()) {
        b2_.pop_oldest();
      } else if (!b1_.empty()) {
        b1_.pop_oldest();
      } else {
        break;
      }
    }
  }
  // n (pinned: in no heap) joins list `which` as its most recent block.
  void enter(uint8_t which, NodeId n) {
    list_[n] = which;
    ++sizes_[which];
    (which == kT1 ? t1_ : t2_).stored_key(n) = clock_;
  }
  void leave(NodeId n) {
    if (list_[n] == kNone) return;
    --sizes_[list_[n]];
    list_[n] = kNone;
  }
  LeafHeap<uint32_t, DeeperOnTies<uint32_t>>& heap(NodeId n) { return list_[n] == kT1 ? t1_ : t2_; }

  const PrefixTree& tree_;
  double c_;
  double p_ = 0;  // target size of T1, in blocks
  static constexpr uint8_t kNone = 0, kT1 = 1, kT2 = 2;
  // Per block its list; per list its size and its evictable leaves by last access.
  std::vector<uint8_t> list_;
  size_t sizes_[3] = {0, 0, 0};
  LeafHeap<uint32_t, DeeperOnTies<uint32_t>> t1_, t2_;
  uint32_t clock_ = 0;  // requests seen: a logical access time
  arc::GhostList b1_, b2_;
  std::span<const BlockKey> prompt_;
  size_t next_ = 0;  // the prompt position the walk handles next
  bool open_ = false;
  // p adapted for the coming block, planned by the first victim() for it (before its evictions
  // changed the ghosts), committed by its on_access.
  bool has_planned_ = false;
  BlockKey planned_key_ = 0;
  double planned_p_ = 0;
};

const bool registered = register_policy<Arc>({
    .name = "arc",
    .summary = "Adaptive Replacement Cache: recency list T1 and frequency list T2 with ghost "
               "lists steering T1's target size, over evictable leaves",
    .paper = "Megiddo & Modha, ARC: A Self-Tuning, Low Overhead Replacement Cache, FAST'03",
});

}  // namespace
}  // namespace kvpolicy
