// Shared machinery of the learned policies LARU, FPB and HF (docs/policies.md): the
// indexes of evictable leaves by recency and predicted next access P (heap, treap, recency
// list), the predictor plumbing, and their common parameters. Internal to
// src/policy.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/order/indexed_heap.h"
#include "kvpolicy/core/order/intrusive_list.h"
#include "kvpolicy/core/order/key_set.h"
#include "kvpolicy/core/order/os_treap.h"
#include "kvpolicy/core/tree.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/predict/predictor.h"
#include "kvpolicy/predict/registry.h"

namespace kvpolicy::learned {

inline std::vector<ParamSpec> common_params() { return predictor_param_specs(); }
// The oracle and noisy predictors and the audit read the trace's future; the GBM does not.
inline bool predictor_needs_future(const Params& p) {
  const PredictorInfo* info =
      PredictorRegistry::instance().find(split_nested(p.get_string("predictor")).first);
  return (info && info->reads_future) || p.get_bool("audit");
}

inline std::vector<ParamSpec> with(std::vector<ParamSpec> a, std::vector<ParamSpec> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Eviction order among evictable leaves: the larger P first, then the older (smaller recency
// key), the same rule as OsTreap's maxima. Packed to 12 bytes: a heap entry is 16.
#pragma pack(push, 4)
struct Rank {
  Time p;
  uint32_t key;
};
#pragma pack(pop)
static_assert(sizeof(HeapEntry<Rank>) == 16);
struct RankFirst {
  bool operator()(const Rank& a, const Rank& b) const {
    return a.p != b.p ? a.p > b.p : a.key < b.key;
  }
};

// The part LARU, FPB and HF share. Every block has a recency key in LRU's exact order (a
// request's blocks are newer than everything before it; within a request the deeper block is
// older, as lru.cc places a path deepest-first) and a predicted next access P. A request takes
// as many recency keys as it has blocks, so keys fit 32 bits. Each block is predicted once
// after each access (in one batch per request, at its end), and every cached block again at the
// first choice by prediction after the predictor's version() changed (a new GBM model, a new
// noise draw), so requests that choose nothing pay nothing; see predictor.h for when this equals
// predicting the candidates at each eviction.
//
// Evictable leaves are indexed in the ways a policy needs:
// - an indexed heap answers "the largest P of all" (FPB, and LARU while lambda = 1) cheaply;
// - the order-statistic treap answers "the largest P among the l oldest" and "the oldest" for
//   any l (HF with a large c, and LARU once lambda < 1). LARU builds its treap from the heap's
//   members when it first needs it in a phase and drops it when lambda returns to 1, so with
//   good predictions it pays heap costs only (and holds no treap memory until then);
// - a recency list answers "the l oldest" in O(l) for HF's small c (see list_insert).
// Each block's recency key and P are kept once, by one of them: in the heap's slots (FPB,
// LARU), the treap's nodes (HF with a large c), or late_'s slots and p_ (HF's list).
//
// The indexes a policy uses are a template argument (LeafIndex flags), so each policy's code
// holds only its own.
enum LeafIndex : unsigned { kHeap = 1, kTreap = 2, kLazyTreap = 4, kList = 8 };

template <unsigned kIndexes>
class LearnedPolicy : public Policy {
 public:
  LearnedPolicy(const PolicyContext& ctx, const Params& params)
      : tree_(*ctx.tree), treap_active_(kIndexes & kTreap), treap_(ctx.seed) {
    PredictorContext pc;
    pc.block_tokens = ctx.block_tokens;
    pc.seed = ctx.seed;
    pc.future = ctx.future;
    predictor_ = make_predictor(predictor_config(params), pc);
    seen_version_ = predictor_->version();
  }

  void reserve_ids(size_t ids) override {
    flags_.resize(ids, 0);
    if constexpr (kUseHeap) heap_.resize(ids);
    if (treap_active_) treap_.resize(ids);
    if constexpr (kUseList) {
      list_.resize(ids);
      late_.resize(ids);
      p_.resize(ids, 0);
    }
  }

  void on_request_begin(const RequestView& r) override {
    first_key_ = end_key_;
    end_key_ += r.blocks.size();
    if (end_key_ > (uint64_t{1} << 32)) throw Error("learned policies: over 2^32 block accesses");
    demotions_ = 0;
    blocks_ = r.blocks;
    next_pos_ = 0;
    predictor_->on_request_begin(r);
  }

  // The per-block hooks are always_inline into the replay (InlinedPolicy): FPB and LARU run
  // faster so (measured: docs/experiments.md, Learned policies).
  [[gnu::always_inline]] void on_access(NodeId n, const AccessInfo& info) override {
    // A block demoted into this (DRAM) tier is new here; several can be demoted in one request,
    // at any depths, so they are ordered by demotion (the first demoted is the oldest, as HBM
    // evicted it first). Keys must be unique: the treap cannot hold equal keys. A request
    // demotes at most one block per block of its prompt, so both stay in its key range.
    set_key(n, static_cast<uint32_t>(tree_.tier(n) == Tier::kDram ? first_key_ + demotions_++
                                                                  : end_key_ - 1 - info.position));
    predictor_->on_access(n, info);
    flags_[n] |= kMember;
    if (!(flags_[n] & kPending)) {
      flags_[n] |= kPending;
      pending_.push_back(n);
    }
    next_pos_ = info.position + 1;
    note_access(n, info.reused());
  }

  void on_request_end(const RequestView&, std::span<const NodeId>) override { flush(); }

  [[gnu::always_inline]] void on_evictable(NodeId n) override {
    if (flags_[n] & kPending) flush();  // only when driven outside PrefixCache's request cycle
    if (flags_[n] & kLeaf) return;
    flags_[n] |= kLeaf;
    ++leaves_;
    if constexpr (kUseHeap) heap_.push(n);
    if (treap_active_) treap_insert(n);
    if constexpr (kUseList) list_insert(n);
  }
  [[gnu::always_inline]] void on_unevictable(NodeId n) override { leave(n); }
  // The commit of a victim (see policy.h) records the eviction and its decision's predictions.
  [[gnu::always_inline]] void on_removed(NodeId n, Removal why) override {
    leave(n);
    flags_[n] &= ~(kPending | kMember);
    predictor_->on_removed(n);
    if (is_victim(why)) {
      ++evictions_;
      if (decision_scored_ > 0) {
        ++prediction_decisions_;
        candidates_scored_ += decision_scored_;
      }
      decision_scored_ = 0;
    }
    note_removed(n, why);
  }

  size_t memory_bytes() const override {
    return treap_.memory_bytes() + heap_.memory_bytes() + list_.memory_bytes() +
           late_.memory_bytes() + p_.capacity() * sizeof(Time) + flags_.capacity();
  }

  PolicyStats stats() const override {
    PolicyStats s{{"predictor_calls", double(candidates_scored_)},
                  {"predictor_invocations", double(prediction_decisions_)},
                  {"evictions", double(evictions_)},
                  {"treap_builds", double(treap_builds_)}};
    add_stats(s);
    for (auto& kv : predictor_->stats()) s.push_back(kv);
    return s;
  }

 protected:
  // Key of the block the cache is inserting when it asks for a victim (PrefixCache calls
  // victim() before inserting the missing block at position next_pos_), or with `ahead` > 0 of
  // a later block of the prompt. False outside a request or past the prompt's end.
  bool incoming(BlockKey* key, size_t ahead = 0) const {
    if (next_pos_ + ahead >= blocks_.size()) return false;
    *key = blocks_[next_pos_ + ahead];
    return true;
  }
  // Prompt position of the block the cache is inserting (see incoming()).
  size_t incoming_position() const { return next_pos_; }
  // The victim with the largest P among the l least recently used evictable leaves. If it
  // leaves, l predictions are counted as requested: what the paper's sync mode would ask its
  // predictor for.
  NodeId choose(size_t l) {
    if (predictor_->version() != seen_version_) predict_all();  // a new model or noise draw
    decision_scored_ = std::min(l, leaves_);
    if constexpr (kUseHeap) {
      if (l >= leaves_) return heap_.top();
    }
    if constexpr (kUseList) {
      return list_choose(l);
    } else {
      ensure_treap();
      return treap_.max_among_oldest(l);
    }
  }
  NodeId lru() {
    decision_scored_ = 0;
    if constexpr (kUseList) {
      return list_choose(0);
    } else {
      ensure_treap();
      return treap_.oldest();
    }
  }
  size_t evictable() const { return leaves_; }
  // LARU: lambda is back to 1, so the treap is not needed until it drops again.
  void release_treap() {
    if constexpr (kLazyTreap) treap_active_ = false;
  }

  virtual void note_access(NodeId, bool /*reused*/) {}
  virtual void note_removed(NodeId, Removal) {}
  virtual void add_stats(PolicyStats&) const {}

  const PrefixTree& tree_;

 private:
  static constexpr bool kUseHeap = kIndexes & kHeap, kUseList = kIndexes & kList;
  static constexpr bool kLazyTreap = kIndexes & learned::kLazyTreap;
  static constexpr uint8_t kLeaf = 1;     // an evictable leaf (in the indexes)
  static constexpr uint8_t kPending = 2;  // accessed since the last prediction batch
  // Cached in this policy's tier (the tree holds both tiers' blocks; the predictor knows only
  // this tier's).
  static constexpr uint8_t kMember = 4;

  // Where each block's recency key and P are kept (see the class comment).
  uint32_t key(NodeId n) const {
    if constexpr (kUseHeap) return heap_.key(n).key;
    if constexpr (kUseList) return late_.key(n);
    return static_cast<uint32_t>(treap_.key(n));
  }
  Time p(NodeId n) const {
    if constexpr (kUseHeap) return heap_.key(n).p;
    if constexpr (kUseList) return p_[n];
    return treap_.p(n);
  }
  // n is not an evictable leaf (it is being accessed), so in none of the indexes.
  void set_key(NodeId n, uint32_t k) {
    if constexpr (kUseHeap) {
      heap_.stored_key(n).key = k;
    } else if constexpr (kUseList) {
      late_.stored_key(n) = k;
    } else {
      treap_.set_key(n, k);
    }
  }

  void leave(NodeId n) {
    if (!(flags_[n] & kLeaf)) return;
    flags_[n] &= ~kLeaf;
    --leaves_;
    if constexpr (kUseHeap) heap_.erase(n);
    if (treap_active_) treap_.erase(n);
    if constexpr (kUseList) list_erase(n);
  }

  void treap_insert(NodeId n) {
    treap_.set_key(n, key(n));
    treap_.set_p(n, p(n));
    treap_.insert(n);
  }

  // Builds the treap from the heap's members (LARU's lazy treap).
  void ensure_treap() {
    if (treap_active_) return;
    treap_.resize(flags_.size());
    treap_.clear();
    heap_.for_each([&](NodeId n, const Rank&) { treap_insert(n); });
    treap_active_ = true;
    ++treap_builds_;
  }

  // The recency key of a block outside late_ (a member of list_, or one joining it).
  uint32_t listed_key(NodeId n) const { return late_.stored_key(n); }

  // The recency list. list_ holds evictable leaves in key order, oldest first; late_ (a heap
  // by key) holds the leaves that arrived out of order. Nearly all arrive in order: a request's
  // path end becomes a leaf with the newest key (appended), and a parent whose last child was
  // just evicted usually takes that child's place exactly (its key follows the child's when
  // both were last used by the same request, and nothing lies between them). The rest wait in
  // late_ and are merged into list_ when they rank among the l oldest, so list_'s first l
  // members are always the l oldest leaves: the same set the treap would give.
  void list_insert(NodeId n) {
    uint32_t k = listed_key(n);
    if (list_.empty() || k > listed_key(list_.back())) {
      list_.push_back(n);
    } else if (hole_ && (hole_prev_ == kNoNode || listed_key(hole_prev_) < k) &&
               k < listed_key(hole_next_)) {
      list_.insert_before(n, hole_next_);
    } else {
      late_.push(n);
    }
    hole_ = false;
  }
  void list_erase(NodeId n) {
    hole_ = list_.contains(n);
    if (!hole_) return late_.erase(n);
    hole_prev_ = list_.prev(n);
    hole_next_ = list_.next(n);
    hole_ = hole_next_ != kNoNode;  // at the tail, an append does as well
    list_.erase(n);
  }
  // The largest P among the l oldest leaves (ties to the older); the oldest when l = 0.
  NodeId list_choose(size_t l) {
    NodeId best = kNoNode, cur = list_.front();
    Time best_p = 0;
    for (size_t i = 0; i < std::max<size_t>(l, 1); ++i) {
      NodeId x;
      if (!late_.empty() && (cur == kNoNode || late_.top_key() < listed_key(cur))) {
        x = late_.pop();
        cur == kNoNode ? list_.push_back(x) : list_.insert_before(x, cur);
      } else if (cur != kNoNode) {
        x = cur;
        cur = list_.next(cur);
      } else {
        break;
      }
      if (best == kNoNode || p_[x] > best_p) {
        best = x;
        best_p = p_[x];
      }
    }
    hole_ = false;
    return best;
  }

  void set_p(NodeId n, Time p) {
    if constexpr (kUseList) p_[n] = p;
    if (!(flags_[n] & kLeaf)) {  // in no index: only the store changes
      if constexpr (kUseHeap) {
        heap_.stored_key(n).p = p;
      } else if constexpr (!kUseList) {
        treap_.set_p(n, p);
      }
      return;
    }
    if constexpr (kUseHeap) heap_.update_key(n, [&](Rank& r) { r.p = p; });
    if (treap_active_) treap_.set_p(n, p);
  }

  // Predicts the blocks accessed since the last batch. A version change waits for the next
  // choose(): re-predicting every cached block here would cost O(cached) in every request.
  void flush() {
    if (pending_.empty()) return;
    batch_.clear();
    for (NodeId n : pending_)
      if (flags_[n] & kPending) batch_.push_back(n);
    for (NodeId n : pending_) flags_[n] &= ~kPending;
    pending_.clear();
    predict_batch();
  }

  // Predicts every block of this tier (the pending ones with them) under the current version.
  void predict_all() {
    seen_version_ = predictor_->version();
    batch_.clear();
    for (NodeId n = 0; n < flags_.size(); ++n)
      if (flags_[n] & kMember) batch_.push_back(n);
    for (NodeId n : pending_) flags_[n] &= ~kPending;
    pending_.clear();
    predict_batch();
  }

  void predict_batch() {
    out_.resize(batch_.size());
    predictor_->predict(batch_, out_);
    // An unchanged P needs no index update (most of them, when only the noise was redrawn).
    for (size_t i = 0; i < batch_.size(); ++i)
      if (out_[i] != p(batch_[i])) set_p(batch_[i], out_[i]);
  }

  bool treap_active_;
  OsTreap treap_;
  IndexedHeap<Rank, ByKey<RankFirst>> heap_;
  IntrusiveList list_;
  IndexedHeap<uint32_t> late_;  // its slots hold the recency keys of the blocks not in it
  NodeId hole_prev_ = kNoNode, hole_next_ = kNoNode;  // where list_ lost a member last
  bool hole_ = false;    // list_ unchanged since; hole_next_ is a member
  BlockVector<Time> p_;  // predicted next access (list only)
  BlockVector<uint8_t> flags_;
  size_t leaves_ = 0;
  std::unique_ptr<NextAccessPredictor> predictor_;
  uint64_t seen_version_ = 0;
  uint64_t first_key_ = 0, end_key_ = 0;  // the current request's recency keys
  uint32_t demotions_ = 0;                // into this tier in the current request
  std::span<const BlockKey> blocks_;
  size_t next_pos_ = 0;
  std::vector<NodeId> pending_, batch_;
  std::vector<Time> out_;
  size_t decision_scored_ = 0;  // candidates scored by the last victim(), 0 for an LRU choice
  uint64_t candidates_scored_ = 0, prediction_decisions_ = 0, evictions_ = 0, treap_builds_ = 0;
};

}  // namespace kvpolicy::learned
