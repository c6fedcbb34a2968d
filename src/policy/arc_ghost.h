// ARC's ghost lists B1 and B2 (see arc.cc); internal to src/policy, in a header for its tests.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "kvpolicy/core/types.h"

namespace kvpolicy::arc {

// An LRU list of block keys (no blocks: what was evicted), exact: lookup, removal of any key,
// and removal of the oldest, with no allocation per key. Keys are numbered in arrival order; a
// ring holds the key of each number, and an open-addressing table (linear probing, deletion by
// backward shift) maps each live key to its number. A removed key leaves its number stale in
// the ring, skipped when it becomes the oldest; a full ring is rebuilt with the live keys
// renumbered from 0, doubled only when they fill half of it.
class GhostList {
 public:
  GhostList() { rebuild_table(16); }
  bool contains(BlockKey k) const { return find(k) != kNotFound; }
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  // Adds k as the newest; k must be absent.
  void push(BlockKey k) {
    if (next_ - oldest_ == ring_.size()) rebuild_ring();
    ring_[next_ & (ring_.size() - 1)] = k;
    if (2 * (live_ + 1) > slots_.size()) rebuild_table(2 * slots_.size());
    place(k, next_++);
    ++live_;
  }
  // Removes k if present; says whether it was.
  bool erase(BlockKey k) {
    size_t i = find(k);
    if (i == kNotFound) return false;
    remove_slot(i);
    --live_;
    return true;
  }
  // Removes the oldest key; the list must not be empty.
  void pop_oldest() {
    for (;; ++oldest_) {
      BlockKey k = ring_[oldest_ & (ring_.size() - 1)];
      size_t i = find(k);
      if (i != kNotFound && slots_[i].seq == oldest_) {
        remove_slot(i);
        --live_;
        ++oldest_;
        return;
      }
    }
  }
  size_t memory_bytes() const {
    return ring_.capacity() * sizeof(BlockKey) + slots_.capacity() * sizeof(Slot);
  }

 private:
  static constexpr uint64_t kEmpty = std::numeric_limits<uint64_t>::max();
  static constexpr size_t kNotFound = std::numeric_limits<size_t>::max();
  struct Slot {
    BlockKey key;
    uint64_t seq;  // kEmpty: a free slot
  };

  size_t home(BlockKey k) const { return (k * 0x9e3779b97f4a7c15ULL) >> shift_; }
  size_t find(BlockKey k) const {
    size_t mask = slots_.size() - 1;
    for (size_t i = home(k);; i = (i + 1) & mask) {
      if (slots_[i].seq == kEmpty) return kNotFound;
      if (slots_[i].key == k) return i;
    }
  }
  void place(BlockKey k, uint64_t seq) {
    size_t mask = slots_.size() - 1;
    size_t i = home(k);
    while (slots_[i].seq != kEmpty) i = (i + 1) & mask;
    slots_[i] = {k, seq};
  }
  // Backward-shift deletion: later entries of the probe run move into the hole when their home
  // does not lie (cyclically) after it.
  void remove_slot(size_t hole) {
    size_t mask = slots_.size() - 1;
    for (size_t j = (hole + 1) & mask; slots_[j].seq != kEmpty; j = (j + 1) & mask) {
      size_t h = home(slots_[j].key);
      if (((j - h) & mask) >= ((j - hole) & mask)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].seq = kEmpty;
  }
  void rebuild_table(size_t n) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(n, Slot{0, kEmpty});
    shift_ = 64 - std::countr_zero(n);
    for (const Slot& s : old)
      if (s.seq != kEmpty) place(s.key, s.seq);
  }
  void rebuild_ring() {
    size_t n = ring_.empty() ? 16 : ring_.size();
    if (2 * live_ >= n) n *= 2;
    std::vector<BlockKey> fresh(n);
    uint64_t next = 0;
    for (uint64_t s = oldest_; s != next_; ++s) {
      BlockKey k = ring_[s & (ring_.size() - 1)];
      size_t i = find(k);
      if (i == kNotFound || slots_[i].seq != s) continue;
      slots_[i].seq = next;
      fresh[next++] = k;
    }
    ring_.swap(fresh);
    oldest_ = 0;
    next_ = next;
  }

  std::vector<BlockKey> ring_;  // the key numbered s at s mod its size
  std::vector<Slot> slots_;     // live key -> its number
  int shift_ = 60;
  uint64_t oldest_ = 0, next_ = 0;  // numbers in [oldest_, next_) are in the ring
  size_t live_ = 0;
};

}  // namespace kvpolicy::arc
