// Retention hints: any policy (the inner one) behind strict priority levels, as TensorRT-LLM's
// KV cache keeps them. docs/policies.md, "Retention hints", states the semantics in full.
//
// Each access claims its block for the request's hint at that position (RequestView::hints; none:
// the default priority): the last claim holds. A released block whose priority differs from the
// default is withheld from the inner policy (it never hears the block is evictable) and kept in
// this wrapper's own LRU list of its level; when its duration runs out (counted from the release)
// it drops to the default and is offered to the inner policy. victim(): the oldest of the lowest
// level below the default, else the inner policy's victim, else the oldest of the lowest level
// above it. So a block of priority p leaves only when no evictable block of lower priority is
// cached; the inner policy orders the default level alone.
// Cost: O(1) per access and transition; expiries through a heap, O(log n) each.
#pragma once

#include <array>
#include <bit>
#include <memory>
#include <optional>
#include <queue>
#include <span>
#include <vector>

#include "guarded.h"  // semicolons_to_commas
#include "kvpolicy/core/tree.h"
#include "kvpolicy/policy/policy.h"

namespace kvpolicy {

class Retention final : public Policy {
 public:
  static constexpr int32_t kLevels = 101;  // priorities 0..100

  // `synthetic` > 0 (tests only): a block whose key hashes below it is hinted whatever the
  // request says, with a priority and a duration drawn from the hash.
  Retention(const PolicyContext& ctx, std::unique_ptr<Policy> inner, int32_t default_priority,
            double synthetic = 0)
      : tree_(*ctx.tree),
        inner_(std::move(inner)),
        default_(default_priority),
        synthetic_(synthetic) {}

  // The registered policy `hinted`: the inner policy and the default from its parameters.
  Retention(const PolicyContext& ctx, const Params& p)
      : Retention(ctx,
                  make_policy(PolicySpec{p.get_string("inner"),
                                         semicolons_to_commas(p.get_string("inner_params"))},
                              ctx),
                  static_cast<int32_t>(p.get_int("default_priority")), p.get_double("synthetic")) {}

  void reserve_ids(size_t ids) override {
    inner_->reserve_ids(ids);
    prio_.resize(ids, int8_t(default_));
    state_.resize(ids, 0);
    duration_.resize(ids, RetentionHint::kForever);
    expiry_.resize(ids, RetentionHint::kForever);
    last_.resize(ids);
    prev_.resize(ids, kNoNode);
    next_.resize(ids, kNoNode);
  }

  void on_request_begin(const RequestView& r) override {
    advance(r.time);
    hints_ = r.hints;
    inner_->on_request_begin(r);
  }

  void on_access(NodeId n, const AccessInfo& info) override {
    advance(info.now);
    if (state_[n] & kHeld) unhold(n);
    last_[n] = info;
    if (state_[n] & kInInner) {
      inner_->on_access(n, info);
    } else {  // new to the inner policy, or withheld from it since its release
      AccessInfo fresh = info;
      if (fresh.kind == AccessKind::kReused) fresh.kind = AccessKind::kInserted;
      inner_->on_access(n, fresh);
      state_[n] |= kInInner;
    }
    // A block demoted into this tier keeps no claim: the hints are of the requests' positions.
    RetentionHint h = info.kind == AccessKind::kDemoted ? RetentionHint{.priority = default_}
                                                        : hint_at(n, info.position);
    prio_[n] = int8_t(h.priority);
    duration_[n] = h.duration;
    expiry_[n] = RetentionHint::kForever;
    if (h.priority != default_) {
      state_[n] |= kPending;
    } else {
      state_[n] &= uint8_t(~kPending);
    }
  }

  void on_evictable(NodeId n) override {
    if (state_[n] & kPending) {  // released: the duration counts from now
      state_[n] &= uint8_t(~kPending);
      if (duration_[n] != RetentionHint::kForever) {
        expiry_[n] = now_ > RetentionHint::kForever - duration_[n] ? RetentionHint::kForever
                                                                   : now_ + duration_[n];
      }
    }
    if (hinted(n)) {
      withdraw(n);
      hold(n);
    } else {
      offer(n);
    }
  }

  void on_unevictable(NodeId n) override {
    if (state_[n] & kHeld) unhold(n);
    if (state_[n] & kInnerEvictable) {
      state_[n] &= uint8_t(~kInnerEvictable);
      inner_->on_unevictable(n);
    }
  }

  NodeId victim(Time now) override {
    advance(now);
    int32_t low = lowest_level(0, default_);
    if (low >= 0) return head_[low];
    NodeId v = inner_->victim(now);
    if (v != kNoNode) return v;
    int32_t high = lowest_level(default_ + 1, kLevels);
    if (high >= 0) return head_[high];
    return kNoNode;
  }

  void on_removed(NodeId n, Removal why) override {
    bool known = state_[n] & kInInner;
    if (state_[n] & kHeld) {
      if (is_victim(why)) ++(prio_[n] < default_ ? below_ : above_);
      unhold(n);
    }
    state_[n] = 0;
    prio_[n] = int8_t(default_);
    expiry_[n] = RetentionHint::kForever;
    if (known) inner_->on_removed(n, why);  // a withheld block the inner policy already forgot
  }

  void on_request_end(const RequestView& r, std::span<const NodeId> path) override {
    inner_->on_request_end(r, path);
    hints_ = {};
  }

  size_t memory_bytes() const override {
    return inner_->memory_bytes() + prio_.capacity() + state_.capacity() +
           (duration_.capacity() + expiry_.capacity()) * sizeof(Time) +
           last_.capacity() * sizeof(AccessInfo) +
           (prev_.capacity() + next_.capacity()) * sizeof(NodeId) +
           expiries_.size() * sizeof(Expiry);
  }

  PolicyStats stats() const override {
    PolicyStats s = inner_->stats();
    s.insert(s.end(), {{"hint_evictions_below_default", double(below_)},
                       {"hint_evictions_above_default", double(above_)},
                       {"hint_expiries", double(expired_)}});
    return s;
  }

  // The priority n has now: its claim's while it lasts, else the default.
  int32_t priority(NodeId n) const { return hinted(n) ? prio_[n] : default_; }
  std::optional<int32_t> retention_priority(NodeId n) const override { return priority(n); }
  // A release at the owner's time (serve mode): durations released now count from `now`.
  void on_time(Time now) override {
    advance(now);
    inner_->on_time(now);
  }
  Policy& inner() { return *inner_; }

 private:
  // kHeld: withheld, in this wrapper's lists; kInInner: the inner policy knows the block (heard
  // its access and no removal since); kInnerEvictable: and holds it evictable; kPending: claimed,
  // not yet released (its duration has not started).
  static constexpr uint8_t kHeld = 1, kInInner = 2, kInnerEvictable = 4, kPending = 8;
  struct Expiry {
    Time at;
    NodeId node;
    bool operator>(const Expiry& o) const { return at > o.at; }
  };

  bool hinted(NodeId n) const { return prio_[n] != default_ && expiry_[n] > now_; }

  RetentionHint hint_at(NodeId n, uint32_t position) const {
    RetentionHint h{.priority = default_};
    for (const RetentionHint& r : hints_)
      if (position >= r.first_block && position < r.end_block) h = r;
    if (synthetic_ > 0) {
      uint64_t x = mix64(tree_.key(n) ^ 0x5bd1e995);
      if (double(x >> 11) * 0x1p-53 < synthetic_) {
        h.priority = int32_t((x >> 8) % kLevels);
        h.duration = (x & 1) ? RetentionHint::kForever : Time((x >> 16) % 4) * kMicrosPerSecond;
      }
    }
    return h;
  }

  // Moves time on: blocks whose duration ran out drop to the default and join the inner policy.
  void advance(Time now) {
    now_ = std::max(now_, now);
    while (!expiries_.empty() && expiries_.top().at <= now_) {
      NodeId n = expiries_.top().node;
      Time at = expiries_.top().at;
      expiries_.pop();
      if (n >= state_.size() || !(state_[n] & kHeld) || expiry_[n] != at) continue;  // stale
      unhold(n);
      prio_[n] = int8_t(default_);
      ++expired_;
      offer(n);
    }
  }

  // n is an evictable leaf at the default priority: the inner policy's. One it forgot hears of
  // it again as a block inserted now (its last access, at this time).
  void offer(NodeId n) {
    if (!(state_[n] & kInInner)) {
      AccessInfo again = last_[n];
      again.now = now_;
      if (again.kind == AccessKind::kReused) again.kind = AccessKind::kInserted;
      inner_->on_access(n, again);
      state_[n] |= kInInner;
    }
    if (state_[n] & kInnerEvictable) return;
    state_[n] |= kInnerEvictable;
    inner_->on_evictable(n);
  }

  // n is withheld from now on: the inner policy forgets it (as a block its owner dropped while
  // pinned, which is what it last heard of it), so no victim() of its names it.
  void withdraw(NodeId n) {
    if (!(state_[n] & kInInner)) return;
    if (state_[n] & kInnerEvictable) {
      state_[n] &= uint8_t(~kInnerEvictable);
      inner_->on_unevictable(n);
    }
    inner_->on_removed(n, Removal::kDropped);
    state_[n] &= uint8_t(~kInInner);
  }

  void hold(NodeId n) {
    int32_t l = prio_[n];
    state_[n] |= kHeld;
    prev_[n] = tail_[l];
    next_[n] = kNoNode;
    if (tail_[l] != kNoNode) {
      next_[tail_[l]] = n;
    } else {
      head_[l] = n;
      nonempty_[l / 64] |= uint64_t{1} << (l % 64);
    }
    tail_[l] = n;
    if (expiry_[n] != RetentionHint::kForever) expiries_.push({expiry_[n], n});
  }

  void unhold(NodeId n) {
    int32_t l = prio_[n];
    state_[n] &= uint8_t(~kHeld);
    (prev_[n] != kNoNode ? next_[prev_[n]] : head_[l]) = next_[n];
    (next_[n] != kNoNode ? prev_[next_[n]] : tail_[l]) = prev_[n];
    if (head_[l] == kNoNode) nonempty_[l / 64] &= ~(uint64_t{1} << (l % 64));
  }

  // The lowest level in [from, to) that holds a block, or -1.
  int32_t lowest_level(int32_t from, int32_t to) const {
    for (int32_t w = from / 64; w * 64 < to; ++w) {
      uint64_t bits = nonempty_[w];
      if (w == from / 64) bits &= ~uint64_t{0} << (from % 64);
      if (bits == 0) continue;
      int32_t l = w * 64 + std::countr_zero(bits);
      return l < to ? l : -1;
    }
    return -1;
  }

  const PrefixTree& tree_;
  std::unique_ptr<Policy> inner_;
  int32_t default_;
  double synthetic_;
  Time now_ = 0;
  std::span<const RetentionHint> hints_;

  BlockVector<int8_t> prio_;  // the block's claim
  BlockVector<uint8_t> state_;
  BlockVector<Time> duration_, expiry_;  // expiry: kForever until released, or for no duration
  BlockVector<AccessInfo> last_;         // the block's last access, to tell it again
  // Per level, the withheld evictable blocks in the order they were released (oldest first).
  BlockVector<NodeId> prev_, next_;
  std::array<NodeId, kLevels> head_ = filled(), tail_ = filled();
  std::array<uint64_t, 2> nonempty_{};
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>> expiries_;
  uint64_t below_ = 0, above_ = 0, expired_ = 0;

  static std::array<NodeId, kLevels> filled() {
    std::array<NodeId, kLevels> a;
    a.fill(kNoNode);
    return a;
  }
};

}  // namespace kvpolicy
