// ARC: Adaptive Replacement Cache over the prefix tree's evictable leaves. T1 holds blocks seen
// once since they came in, T2 blocks seen again; ghost lists B1 and B2 keep the keys evicted
// from each, and a hit in a ghost moves the target size p of T1 towards the list that missed.
// Source: Megiddo & Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache", FAST'03
// (docs/policies.md). Cost: O(1) per access and per ghost operation (hash maps); an eviction
// scans each list from its LRU end to its first evictable leaf (pinned and interior blocks
// are passed over, as in lru).
#include <algorithm>
#include <span>

#include "arc_ghost.h"
#include "kvpolicy/core/order/intrusive_list.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"

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
//  - A request's path enters its list deepest first (each block just before its parent), as
//    in lru: on ties the deeper block goes first.
//  - A block leaving without being the victim (promoted to the tier above) gets no ghost entry.
class Arc final : public InlinedPolicy<Arc> {
 public:
  static constexpr PolicyHooks kHooks{};
  explicit Arc(const PolicyContext& ctx) : tree_(*ctx.tree), c_(double(ctx.capacity_blocks)) {}
  void reserve_ids(size_t ids) override {
    t1_.resize(ids);
    t2_.resize(ids);
  }

  void on_request_begin(const RequestView& r) override {
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
      if (t1_.contains(n)) t1_.erase(n);
      if (t2_.contains(n)) t2_.erase(n);
      place(t2_, n, info);
      return;
    }
    BlockKey key = tree_.key(n);
    // The textbook adapts p with the ghost sizes before REPLACE: victim() planned it then.
    bool in_b1 = b1_.contains(key);
    if (in_b1 || b2_.contains(key)) {
      p_ = before_eviction && planned_key_ == key ? planned_p_ : adapted(key);
      (in_b1 ? b1_ : b2_).erase(key);
      place(t2_, n, info);
    } else {
      place(t1_, n, info);
      trim_ghosts();
    }
  }
  void on_evictable(NodeId) override {}
  void on_unevictable(NodeId) override {}

  // REPLACE(x, p): T1's LRU evictable leaf if |T1| > p (or x in B2 and |T1| = p), else T2's.
  NodeId victim(Time) override {
    const BlockKey* x = coming();
    if (x && !(has_planned_ && planned_key_ == *x)) {
      planned_key_ = *x;
      planned_p_ = adapted(*x);
      has_planned_ = true;
    }
    NodeId a = first_evictable(t1_), b = first_evictable(t2_);
    if (a == kNoNode) return b;
    if (b == kNoNode) return a;
    double p = x ? planned_p_ : p_;
    double t1 = double(t1_.size());
    bool from_t1 = t1 > p || (x && b2_.contains(*x) && t1 == p);
    return from_t1 ? a : b;
  }
  void on_removed(NodeId n, Removal why) override {
    bool victim = why == Removal::kEvicted || why == Removal::kDemoted;
    if (t1_.contains(n)) {
      t1_.erase(n);
      if (victim) b1_.push(tree_.key(n));
    } else if (t2_.contains(n)) {
      t2_.erase(n);
      if (victim) b2_.push(tree_.key(n));
    }
  }
  size_t memory_bytes() const override {
    return t1_.memory_bytes() + t2_.memory_bytes() + b1_.memory_bytes() + b2_.memory_bytes();
  }
  PolicyStats stats() const override {
    return {{"arc_p", p_},
            {"arc_t1", double(t1_.size())},
            {"arc_t2", double(t2_.size())},
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
    while (!b1_.empty() && double(t1_.size() + b1_.size()) > c_) b1_.pop_oldest();
    while (double(t1_.size() + t2_.size() + b1_.size() + b2_.size()) > 2 * c_) {
      if (!b2_.empty()) {
        b2_.pop_oldest();
      } else if (!b1_.empty()) {
        b1_.pop_oldest();
      } else {
        break;
      }
    }
  }
  void place(IntrusiveList& list, NodeId n, const AccessInfo& info) {
    NodeId parent = tree_.parent(n);
    if (info.position == 0 || parent == kNoNode || !list.contains(parent)) {
      list.push_back(n);
    } else {
      list.insert_before(n, parent);
    }
  }
  NodeId first_evictable(const IntrusiveList& list) const {
    for (NodeId n = list.front(); n != kNoNode; n = list.next(n))
      if (tree_.is_evictable(n)) return n;
    return kNoNode;
  }

  const PrefixTree& tree_;
  double c_;
  double p_ = 0;  // target size of T1, in blocks
  IntrusiveList t1_, t2_;
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
