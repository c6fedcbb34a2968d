// Guarded: any policy (the inner one, typically score-based: LPC, WA, FPB) behind a guard that
// falls back to LRU's victim when the inner's choices go wrong. Source: a rule made here, after
// LARU (LCR paper, Algorithm 1); docs/policies.md states it in full.
// Cost: the inner's, plus O(1) per access, eviction and leaf transition (the recency list;
// O(log n) with trust, which needs the treap: guard_recency.h) and O(1) hash lookups per block
// (the shadow LRU). In serve mode LRU's choice comes from lru.cc's own list, scanned past pinned
// blocks as lru.cc scans it.
//
// At each eviction the guard asks the inner policy for its victim v and takes it, unless
//   1. v is LRU's choice anyway (the least recently used evictable leaf, lru.cc's order), or
//   2. the incoming block is a detected score-induced miss: it was evicted in this phase by a
//      deviation (a victim the inner chose where LRU's choice differed) and a block LRU would
//      have evicted before it (older then) is still cached and unused since: one LRU eviction
//      (which takes that block), and trust lambda /= b (every halve_every such misses);
//   3. trust (trust=true): v is not among the max(floor(lambda n), 1) least recently used evictable
//   leaves
//      (LARU's rule; lambda = 1 accepts every v; phases as LARU's: a new one, with lambda = 1
//      and the detection set emptied, when every block cached at its start has been requested
//      or evicted), or
//   4. budget: taking v could break Psi <= ratio * M_LRU + slack * k, where Psi = M + D, M the
//      guard's misses, M_LRU those of an exact LRU cache of the same capacity replayed beside it
//      (the shadow), and D the debt: the blocks the shadow holds and the guard does not;
// in which cases it takes LRU's choice. Every call is forwarded to the inner policy, which is
// told of every removal (an LRU choice too: every registered policy accepts a removal it did
// not name, as the contract suite checks with guarded around each).
//
// The bound: an LRU eviction never raises Psi by more than it raises M_LRU (D drops by one on
// each miss the shadow would have hit; see docs/policies.md), and a deviation raises it by at
// most 2, taken only if the bound still holds after it. So at every point of the trace
//     misses(guarded) <= ratio * misses(LRU) + slack * k
// whatever the inner policy does (one tier, k at least the longest prompt). With an inner that
// is never behind LRU (Belady, FPB with the oracle) and slack >= 1 no rule fires: guarded equals
// the inner policy exactly. The defaults (slack 0.1, trust off) are the study's choice: a tighter
// bound at the cost of a little of a perfect score's gain, and lambda's gating measured to cost
// good-but-imperfect scores (WA) more than it saves against bad ones (docs/policies.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "guard_options.h"
#include "guard_recency.h"
#include "guard_serve_order.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/tree.h"
#include "kvpolicy/policy/policy.h"
#include "shadow_lru.h"

namespace kvpolicy {

inline std::string semicolons_to_commas(std::string s) {
  std::replace(s.begin(), s.end(), ';', ',');
  return s;
}

class Guarded final : public Policy {
 public:
  // The registered policy: the inner one and the rules from guarded's parameters.
  Guarded(const PolicyContext& ctx, const Params& params)
      : Guarded(ctx,
                make_policy(PolicySpec{params.get_string("inner"),
                                       semicolons_to_commas(params.get_string("inner_params"))},
                            ctx),
                GuardOptions::of(params)) {}
  // Around a policy built elsewhere (auto's selector), with the same rules.
  Guarded(const PolicyContext& ctx, std::unique_ptr<Policy> inner, const GuardOptions& o)
      : tree_(*ctx.tree),
        inner_(std::move(inner)),
        b_(o.b),
        halve_every_(o.halve_every == 0 ? std::max<uint64_t>(1, ctx.capacity_blocks / 32)
                                        : uint64_t(o.halve_every)),
        trust_(o.trust),
        induced_rule_(o.induced),
        detect_(o.induced || o.trust),
        budget_(o.budget),
        check_(o.check),
        ratio_(o.ratio),
        slack_(o.slack * double(ctx.capacity_blocks)),
        allowance_(o.allowance),
        order_(o.trust || o.treap, ctx.seed),
        shadow_(std::max<size_t>(ctx.capacity_blocks, 1), ctx.serving ? ctx.tree : nullptr),
        serving_(ctx.serving) {}

  void reserve_ids(size_t ids) override {
    inner_->reserve_ids(ids);
    order_.resize(ids);
    if (serving_) serve_order_.resize(ids);
    stamp_.resize(ids, 0);
    in_shadow_.resize(ids, 0);
  }

  void on_request_begin(const RequestView& r) override {
    inner_->on_request_begin(r);
    fresh_key_ += kKeyStride;  // this request's demotions: above every key before it
    first_key_ = fresh_key_;
    demotions_ = 0;
    blocks_ = r.blocks;
    next_pos_ = 0;
    shadow_pos_ = 0;
    accessed_ = 0;
    request_path_.clear();
    pos_node_.assign(r.blocks.size(), kNoNode);
    shadow_.begin_request();
    answer_ = false;
    answer_begun_ = false;
  }

  void on_access(NodeId n, const AccessInfo& info) override {
    inner_->on_access(n, info);
    if (order_.contains(n)) order_.erase(n);  // (it is pinned: never a member here)
    bool dram = info.kind == AccessKind::kDemoted;
    // LRU's order, as lru.cc keeps it: a block newer than everything before it, or just below
    // its parent when the parent was accessed in this request (a request's deeper blocks are
    // older); blocks demoted into a DRAM tier in the order HBM evicted them, older than the
    // request's own. Keys come from a counter, not the request's blocks: an owner driving the
    // cache through PolicyTree may not list them, and a flat cache's blocks are all roots.
    order_.set_key(n, dram ? first_key_ + demotions_++ : recency_key(n, info));
    if (serving_) serve_order_.place(tree_, n, info);
    if (info.reused() && stamp_[n] < phase_) --old_count_;  // requested: no longer old
    stamp_[n] = phase_;
    request_path_.push_back(n);
    if (!dram && info.position < pos_node_.size()) pos_node_[info.position] = n;
    if (dram) {
      hbm_tier_ = false;  // this guard runs a DRAM tier: no budget (the bound is HBM's)
      return;
    }
    BlockKey key = tree_.key(n);
    // Serve: a request told from past its first block is an answer written at completion
    // (ServingCache::complete; an admission starts at block 0): the shadow writes it after its
    // prompt, and neither counts it as requested.
    if (serving_ && !answer_begun_) {
      answer_begun_ = true;
      answer_ = info.position > 0;
      if (answer_) {
        shadow_pos_ = std::min<size_t>(info.position, blocks_.size());
        shadow_.begin_answer(blocks_[shadow_pos_ - 1], true);
      }
    }
    if (!info.reused()) {
      held_ += serving_;
      misses_ += !answer_;  // an answer block written is no prompt block missed
      // A score-induced miss that made no eviction (one that did was counted at its commit).
      if (auto it = detect_ ? evicted_.find(key) : evicted_.end(); it != evicted_.end()) {
        if (older_kept(it->second)) lose_trust();
        evicted_.erase(it);
      }
      in_shadow_[n] = shadow_.contains(key);
      both_ += in_shadow_[n];
    }
    ++accessed_;
    next_pos_ = info.position + 1;
    shadow_to(next_pos_);
    fit_shadow(kNoNode);
  }

  void on_evictable(NodeId n) override {
    inner_->on_evictable(n);
    if (!order_.contains(n)) order_.insert(n);
  }
  // Hints live in the inner policy (the retention wrapper goes inside the guard).
  std::optional<int32_t> retention_priority(NodeId n) const override {
    return inner_->retention_priority(n);
  }
  void on_time(Time now) override { inner_->on_time(now); }
  void on_unevictable(NodeId n) override {
    inner_->on_unevictable(n);
    if (order_.contains(n)) order_.erase(n);
  }

  // LRU's choice, unless the inner's passes the rules in the file comment. Asked twice, the
  // same answer: the inner's victim() is a choice too, and only a new phase (which the first
  // call starts and the second finds started) changes state here.
  NodeId victim(Time now) override {
    NodeId lru = lru_choice();
    if (lru == kNoNode) return chosen_ = kNoNode;
    if (old_count_ == 0) new_phase();
    shadow_to(next_pos_);  // (two tiers: positions found in DRAM were not told to this tier)
    NodeId v = inner_->victim(now);
    BlockKey x = 0;
    bool incoming = next_pos_ < blocks_.size();
    if (incoming) x = blocks_[next_pos_];
    chosen_x_ = x;
    if (incoming && induced_rule_ && is_induced(x)) {
      choice_ = Choice::kInduced;
    } else if (v == lru) {
      choice_ = Choice::kAgreed;
    } else if (v == kNoNode || !order_.contains(v)) {
      choice_ = Choice::kLru;  // no victim, or not an evictable leaf: the inner is wrong
    } else if (trust_ && !among_oldest(v)) {
      choice_ = Choice::kDistrusted;
    } else if (budget_ && hbm_tier_ && !within_budget(v, incoming, x)) {
      choice_ = Choice::kOverBudget;
    } else {
      choice_ = Choice::kInner;
      return chosen_ = v;
    }
    return chosen_ = lru;
  }

  void on_removed(NodeId n, Removal why) override {
    order_.remove(n);
    if (serving_) serve_order_.remove(n);
    if (stamp_[n] < phase_) --old_count_;
    // A block leaving HBM (not promoted into it) leaves what the tier and the shadow share.
    if (why != Removal::kPromoted && tree_.tier(n) == Tier::kHbm) {
      if (check_) check_bit(n);
      both_ -= in_shadow_[n];
      if (serving_) shadow_follows(n, why);
      if (n == chosen_ && is_victim(why)) {
        switch (choice_) {
          case Choice::kAgreed:
            ++agreed_;
            break;
          case Choice::kInner:
            ++deviations_;
            if (detect_) evicted_[tree_.key(n)] = order_.key(n);
            break;
          case Choice::kLru:
            ++lru_;
            break;
          case Choice::kInduced:  // detected when chosen; the LRU victim may be the one kept
            ++induced_lru_;
            lose_trust();
            evicted_.erase(chosen_x_);
            break;
          case Choice::kDistrusted:
            ++distrusted_;
            break;
          case Choice::kOverBudget:
            ++over_budget_;
            break;
        }
      }
    }
    chosen_ = kNoNode;
    inner_->on_removed(n, why);
  }

  void on_request_end(const RequestView& r, std::span<const NodeId> path) override {
    inner_->on_request_end(r, path);
    // Blocks this tier never saw (not inserted for want of room, or found in DRAM) missed here.
    // (Serve: an answer's blocks not written were never requested.)
    if (!answer_) {
      misses_ += blocks_.size() - std::min<size_t>(accessed_, blocks_.size());
      shadow_to(blocks_.size());
    }
    shadow_.end_request();
    blocks_ = {};
  }

  size_t memory_bytes() const override {
    return inner_->memory_bytes() + order_.memory_bytes() + serve_order_.memory_bytes() +
           stamp_.capacity() * sizeof(uint32_t) + in_shadow_.capacity() + shadow_.memory_bytes() +
           evicted_.size() * (2 * sizeof(uint64_t) + 16);
  }

  PolicyStats stats() const override {
    PolicyStats s = inner_->stats();
    s.insert(s.end(),
             {{"guard_lambda", lambda_},
              {"guard_phases", double(phase_)},
              {"guard_lambda_halvings", double(halvings_)},
              {"guard_score_induced_misses", double(induced_)},
              {"guard_inner_evictions", double(deviations_)},
              {"guard_agreed_evictions", double(agreed_)},
              {"guard_lru_evictions", double(lru_ + induced_lru_ + distrusted_ + over_budget_)},
              {"guard_induced_fallbacks", double(induced_lru_)},
              {"guard_trust_fallbacks", double(distrusted_)},
              {"guard_budget_fallbacks", double(over_budget_)},
              {"guard_misses", double(misses_)},
              {"guard_lru_misses", double(shadow_.misses())},
              {"guard_debt", double(debt())}});
    return s;
  }

 private:
  // How the last victim was chosen: the inner's (a deviation from LRU's), both agreeing, or
  // LRU's because of rule 2, 3 or 4 (or an inner with no evictable victim).
  enum class Choice { kAgreed, kInner, kLru, kInduced, kDistrusted, kOverBudget };
  bool holds(BlockKey key) const { return held(key) != kNoNode; }
  void check_bit(NodeId n) const {
    if (bool(in_shadow_[n]) != shadow_.contains(tree_.key(n)))
      throw Error("guarded: the shadow-membership bit of node " + std::to_string(n) + " is stale");
  }
  NodeId held(BlockKey key) const {  // this (HBM) tier's node of the block, or kNoNode
    NodeId n = tree_.find(key);
    return n != kNoNode && tree_.tier(n) == Tier::kHbm ? n : kNoNode;
  }
  // held(blocks_[pos]) without a hash lookup when this tier accessed the block (pinned since).
  NodeId held_at(size_t pos, BlockKey key) const {
    NodeId n = pos < pos_node_.size() ? pos_node_[pos] : kNoNode;
    return n == kNoNode ? held(key) : tree_.tier(n) == Tier::kHbm ? n : kNoNode;
  }
  // LRU's choice: the oldest evictable leaf by recency key; in serve mode lru.cc's victim, the
  // order the shadow trims in (guard_serve_order.h).
  NodeId lru_choice() const {
    if (!serving_) return order_.oldest();
    return serve_order_.oldest([&](NodeId n) { return order_.contains(n); });
  }

  // D: blocks the shadow LRU holds and this tier does not.
  int64_t debt() const { return int64_t(shadow_.size()) - both_; }

  // Some block older than the deviation's victim when it left (LRU would have evicted it
  // first) is still cached and unused since: its recency key is below the victim's was. The
  // oldest cached block is an evictable leaf or a block of the current request (pinned, newer),
  // so the oldest evictable leaf answers.
  bool older_kept(uint64_t evicted_key) const {
    NodeId z = order_.oldest();
    return z != kNoNode && order_.key(z) < evicted_key;
  }
  bool is_induced(BlockKey x) const {
    auto it = evicted_.find(x);
    return it != evicted_.end() && older_kept(it->second);
  }
  // v is among the max(floor(lambda n), 1) least recently used evictable leaves.
  bool among_oldest(NodeId v) const {
    size_t n = order_.size();
    size_t l = std::max<size_t>(size_t(std::floor(lambda_ * double(n))), 1);
    return l >= n || order_.key(v) <= order_.key(order_.select(l - 1));
  }
  // Whether evicting v for the incoming block x (if known) keeps
  // M + D <= ratio M_LRU + slack + allowance A (A: blocks requested) once both caches took x.
  bool within_budget(NodeId v, bool incoming, BlockKey x) const {
    double m = double(misses_ + 1), m_lru = double(shadow_.misses());
    double debt_after;
    if (!incoming) {
      debt_after = double(debt() + 1);  // at most one more
    } else {
      bool shadow_has_x = shadow_.contains(x);
      if (check_) check_bit(v);
      int64_t both = both_ - in_shadow_[v];
      int64_t shadow_size = int64_t(shadow_.size());
      if (shadow_has_x) {
        ++both;
      } else {
        m_lru += 1;
        if (shadow_.would_insert()) {
          NodeId w = shadow_.next_victim();
          if (w != kNoNode) {
            BlockKey wk = shadow_.key(w);
            if (wk != tree_.key(v) && holds(wk)) --both;
            --shadow_size;
          }
          ++both;  // x, in both
          ++shadow_size;
        }
      }
      debt_after = double(shadow_size - both);
    }
    double requested = double(shadow_.accesses() + (incoming ? 1 : 0));
    return m + debt_after <= ratio_ * m_lru + slack_ + allowance_ * requested;
  }

  // Steps the shadow through the current request's blocks up to position `end`.
  void shadow_to(size_t end) {
    end = std::min(end, blocks_.size());
    for (; shadow_pos_ < end; ++shadow_pos_) {
      shadow_.step(
          blocks_[shadow_pos_],
          [&](BlockKey k) {
            if (NodeId n = held(k); n != kNoNode) {
              --both_;
              in_shadow_[n] = 0;
            }
          },
          [&](BlockKey k) {
            if (NodeId n = held_at(shadow_pos_, k); n != kNoNode) {
              ++both_;
              in_shadow_[n] = 1;
            }
          });
    }
  }

  // Serve mode: the shadow has the memory this tier has (shadow_lru.h). `removing` is a block
  // of this tier on its way out, already taken off both_.
  void fit_shadow(NodeId removing) {
    if (!serving_) return;
    shadow_.trim(held_, [&](BlockKey k) { shadow_left(k, removing); });
  }
  void shadow_left(BlockKey k, NodeId removing) {
    if (NodeId m = held(k); m != kNoNode && m != removing) {
      --both_;
      in_shadow_[m] = 0;
    }
  }
  // Serve mode: this tier lost n; a block dropped unused (never computed) leaves the shadow too.
  void shadow_follows(NodeId n, Removal why) {
    --held_;
    if (why == Removal::kDropped)
      if (shadow_.drop(tree_.key(n), [&](BlockKey k) { shadow_left(k, n); })) return;
    fit_shadow(n);
  }

  void lose_trust() {
    ++induced_;
    if (++induced_in_phase_ % halve_every_ == 0) {
      lambda_ /= b_;
      ++halvings_;
    }
  }

  // LARU's phase: O := every cached block, lambda := 1, the detection set emptied. The current
  // request's blocks count as requested in it (as laru.cc does).
  void new_phase() {
    ++phase_;
    old_count_ = tree_.size();
    for (NodeId n : request_path_) {
      if (stamp_[n] < phase_ && tree_.contains(n)) --old_count_;
      stamp_[n] = phase_;
    }
    lambda_ = 1;
    evicted_.clear();
    induced_in_phase_ = 0;
  }

  const PrefixTree& tree_;
  std::unique_ptr<Policy> inner_;
  double b_;
  uint64_t halve_every_;
  bool trust_, induced_rule_;
  // Score-induced misses are detected only for the rules that use them (2 and 3): the log of
  // deviations holds a key per inner eviction of a phase, the guard's largest cost otherwise.
  bool detect_;
  bool budget_;
  bool check_;
  double ratio_, slack_, allowance_;

  GuardServeOrder serve_order_;  // serve mode: every block of the tier in lru.cc's order
  GuardRecency order_;  // evictable leaves by recency key (LRU's order); keys of all blocks
  // Keys: each request's demotions count up from first_key_, each fresh block takes the next
  // multiple of the stride and its descendants in the request count down from it (a request's
  // demotions and depths stay below half the stride: 2^19).
  static constexpr uint64_t kKeyStride = uint64_t{1} << 20;
  uint64_t recency_key(NodeId n, const AccessInfo& info) {
    NodeId parent = tree_.parent(n);
    if (info.position > 0 && parent != kNoNode && order_.key(parent) > first_key_ + kKeyStride / 2)
      return order_.key(parent) - 1;
    return fresh_key_ += kKeyStride;
  }
  uint64_t first_key_ = 0, fresh_key_ = 0;
  uint32_t demotions_ = 0;
  std::span<const BlockKey> blocks_;
  size_t next_pos_ = 0, accessed_ = 0;

  // Phases and trust.
  double lambda_ = 1;
  uint32_t phase_ = 0;
  size_t old_count_ = 0;
  BlockVector<uint32_t> stamp_;
  std::vector<NodeId> request_path_;
  std::vector<NodeId> pos_node_;  // the current request's node at each position this tier saw
  // The deviations of this phase: each evicted block's key, and its recency key then.
  std::unordered_map<BlockKey, uint64_t> evicted_;
  uint64_t induced_in_phase_ = 0;

  // The budget.
  ShadowLru shadow_;
  size_t shadow_pos_ = 0;
  int64_t both_ = 0;  // blocks both this tier and the shadow hold
  // Per block of this tier: whether the shadow holds its key (kept at each change of either, so
  // removals and the budget need no shadow lookup).
  BlockVector<uint8_t> in_shadow_;
  bool hbm_tier_ = true;
  uint64_t misses_ = 0;
  // Serve mode (PolicyContext::serving): the shadow follows this tier's size, held_ blocks, and
  // the current request writes an answer rather than reading a prompt.
  bool serving_ = false, answer_ = false, answer_begun_ = false;
  size_t held_ = 0;

  Choice choice_ = Choice::kLru;
  NodeId chosen_ = kNoNode;
  BlockKey chosen_x_ = 0;  // the incoming block of the last choice
  uint64_t induced_ = 0, halvings_ = 0, deviations_ = 0, agreed_ = 0, lru_ = 0, induced_lru_ = 0,
           distrusted_ = 0, over_budget_ = 0;
};

}  // namespace kvpolicy
