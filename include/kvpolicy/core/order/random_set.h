// Set of dense ids with O(1) insert, erase and uniform random choice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

class RandomSet {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  void resize(size_t ids) {
    if (ids > pos_.size()) pos_.resize(ids, kAbsent);
  }
  bool contains(NodeId n) const { return n < pos_.size() && pos_[n] != kAbsent; }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  void insert(NodeId n) {
    if (contains(n)) return;
    pos_[n] = static_cast<uint32_t>(items_.size());
    items_.push_back(n);
  }
  void erase(NodeId n) {
    if (!contains(n)) return;
    uint32_t i = pos_[n];
    NodeId last = items_.back();
    items_[i] = last;
    pos_[last] = i;
    items_.pop_back();
    pos_[n] = kAbsent;
  }
  template <typename Rng>
  NodeId choose(Rng& rng) const {
    return pick(rng());
  }
  // The member a random 64-bit draw selects (its low 32 bits by Lemire's multiply-shift:
  // unbiased enough for simulation and identical across platforms, unlike
  // std::uniform_int_distribution). The set must not be empty.
  NodeId pick(uint64_t draw) const { return items_[index(draw)]; }
  // Starts loading the entry `draw` would pick now, without waiting for it.
  // always_inline: GCC 12 deems a const function that only prefetches pure and drops calls.
  [[gnu::always_inline]] void prefetch_pick(uint64_t draw) const {
    __builtin_prefetch(&items_[index(draw)]);
  }
  // Starts loading n's position, which erase(n) reads; n below the resize() size.
  [[gnu::always_inline]] void prefetch(NodeId n) const { __builtin_prefetch(&pos_[n]); }
  void clear() {
    for (NodeId n : items_) pos_[n] = kAbsent;
    items_.clear();
  }
  const BlockVector<NodeId>& items() const { return items_; }

 private:
  size_t index(uint64_t draw) const { return ((draw & 0xffffffffULL) * items_.size()) >> 32; }
  BlockVector<NodeId> items_;
  BlockVector<uint32_t> pos_;
};

}  // namespace kvpolicy
