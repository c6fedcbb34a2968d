// RLT: randomized leaf marking. Marks the blocks requests touch; evicts an unmarked evictable
// leaf chosen uniformly at random; once k blocks are marked a new phase unmarks all.
// Source: "Randomization Boosts KV Caching, Learning Balances Query Load" (RLT, Algorithm 1;
// code fzwark/KVRouting), after the marking algorithm of Fiat et al. 1991.
// Cost: O(1) per access and per eviction; a new phase costs O(evictable leaves + path length).
#include <random>

#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/order/random_set.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"

namespace kvpolicy {
namespace {

// Marks are phase stamps, so unmarking everything is one increment; the evictable leaves are
// kept in two random sets by mark, and a new phase moves the marked ones over.
class Rlt final : public InlinedPolicy<Rlt> {
 public:
  static constexpr PolicyHooks kHooks{};
  Rlt(const PolicyContext& ctx, const Params& p)
      : tree_(ctx.tree), capacity_(ctx.capacity_blocks), rng_(ctx.seed) {
    mark_hits_ = p.get_string("mark") == "both";
  }

  void reserve_ids(size_t ids) override {
    stamp_.resize(ids, 0);
    unmarked_.resize(ids);
    marked_.resize(ids);
  }
  void on_request_begin(const RequestView&) override { last_ = kNoNode; }
  void on_access(NodeId n, const AccessInfo& info) override {
    last_ = n;
    if (!info.reused() || mark_hits_) {
      if (!is_marked(n)) {
        mark(n);
        if (marked_count_ >= capacity_) new_phase();
      }
    }
  }
  // An evictable leaf is in the set of its mark, and only there (mark() and new_phase() move
  // it when its mark changes), so a block leaving is looked for in that set alone.
  void on_evictable(NodeId n) override { set_of(n).insert(n); }
  void on_unevictable(NodeId n) override { set_of(n).erase(n); }
  // A phase ends when every evictable leaf is marked; the draw is spent only when the victim
  // leaves (on_removed), so asking again names the same block.
  NodeId victim(Time) override {
    if (unmarked_.empty()) new_phase();
    // Between requests (an engine's evict(), serve mode's decode growth) the new phase re-marks
    // the last request's path, which may hold the only evictable leaves: they can still go.
    // Within a request its path is pinned, so this never changes a replay.
    RandomSet& from = unmarked_.empty() ? marked_ : unmarked_;
    if (from.empty()) return kNoNode;
    if (!drawn_) ahead_[0] = rng_(), ahead_[1] = rng_(), ahead_[2] = rng_(), drawn_ = true;
    return from.pick(ahead_[0]);
  }
  void on_removed(NodeId n, Removal why) override {
    set_of(n).erase(n);
    if (is_marked(n)) --marked_count_;
    stamp_[n] = 0;
    if (is_victim(why)) spend_draw();
  }
  size_t memory_bytes() const override {
    // Each random set holds a 4-byte position per id plus its members.
    return stamp_.capacity() * 4 + (unmarked_.size() + marked_.size()) * 4 + stamp_.size() * 8;
  }

 private:
  // The draws are made three choices ahead (the same sequence, one per victim), and what the
  // coming victims touch is fetched in stages: the entry the third draw would pick; the block
  // the second picks (its entry fetched a victim ago); and for the block the next draw picks
  // (its node fetched a victim ago), its hash slot, parent and mark. The set changes a little
  // between victims, so a fetch may miss; the choice itself is always made afresh.
  void spend_draw() {
    ahead_[0] = ahead_[1];
    ahead_[1] = ahead_[2];
    ahead_[2] = rng_();
    if (unmarked_.empty()) return;
    NodeId next = unmarked_.pick(ahead_[0]);
    tree_->prefetch_removal(next);
    __builtin_prefetch(&stamp_[next]);
    unmarked_.prefetch(next);
    tree_->prefetch_node_id(unmarked_.pick(ahead_[1]));
    unmarked_.prefetch_pick(ahead_[2]);
  }
  bool is_marked(NodeId n) const { return stamp_[n] == phase_; }
  RandomSet& set_of(NodeId n) { return is_marked(n) ? marked_ : unmarked_; }
  void mark(NodeId n) {  // n is unmarked
    stamp_[n] = phase_;
    ++marked_count_;
    if (unmarked_.contains(n)) {
      unmarked_.erase(n);
      marked_.insert(n);
    }
  }
  // Unmarks every block, then marks the current request's path (the blocks accessed so far:
  // the last one and its ancestors in this policy's tier), which stays in use.
  void new_phase() {
    ++phase_;
    marked_count_ = 0;
    for (NodeId n : marked_.items()) unmarked_.insert(n);
    marked_.clear();
    if (last_ == kNoNode) return;
    Tier tier = tree_->tier(last_);
    for (NodeId n = last_; n != kNoNode && tree_->tier(n) == tier; n = tree_->parent(n)) mark(n);
  }

  const PrefixTree* tree_;
  size_t capacity_;
  bool mark_hits_ = true;
  uint32_t phase_ = 1;  // stamp 0 = never marked
  size_t marked_count_ = 0;
  NodeId last_ = kNoNode;  // last block the current request accessed
  BlockVector<uint32_t> stamp_;
  RandomSet unmarked_, marked_;  // evictable leaves by mark
  std::mt19937_64 rng_;
  uint64_t ahead_[3] = {0, 0, 0};  // the next three choices' draws, once drawn_
  bool drawn_ = false;
};

const bool registered = register_policy<Rlt>({
    .name = "rlt",
    .summary = "random unmarked evictable leaf; marks reset when k blocks are marked",
    .paper = "Randomization Boosts KV Caching, Learning Balances Query Load (RLT), 2025",
    .params = {param_choice("mark", "both", {"insert", "both"},
                            "mark blocks on insert only, or on insert and hit (paper text)")},
    .variants = {"mark=insert"},
    .randomized = true,
});

}  // namespace
}  // namespace kvpolicy
