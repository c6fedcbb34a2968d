// An exact set of 64-bit keys that is inserted into and cleared but never erased from, its
// inserts deferred through a short ring so that each one's slot is prefetched: LARU's set E.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

// LARU's E: the keys of the blocks evicted by prediction in this phase. An insert on nearly
// every eviction, a lookup on every miss, no removal, cleared once per phase. E must be exact
// (a false "yes" is a prediction-induced miss that never happened: an LRU eviction and a
// halving of lambda, which breaks 1-consistency), and a phase can evict many times the cache
// size, so E can hold more keys than the cache holds blocks; its size is the bulk of LARU's
// memory. So: the 8-byte keys alone in one open-addressing array (linear probing, 0 = empty,
// key 0 kept apart), load 1/2 to 3/4, regrown by 1.5x and resized to the last phase at a
// clear. An insert is written kPending inserts later, its slot prefetched now, so evictions do
// not each stall on a cache miss.
class KeySet {
 public:
  KeySet() { slots_.assign(kMinSlots, 0); }

  bool contains(BlockKey k) const {
    if (k == 0) return has_zero_;
    for (uint32_t i = 0; i < pending_n_; ++i)
      if (pending_[i] == k) return true;
    for (size_t i = home(k);; i = next(i)) {
      if (slots_[i] == k) return true;
      if (slots_[i] == 0) return false;
    }
  }
  void insert(BlockKey k) {
    if (k == 0) {
      has_zero_ = true;
      return;
    }
    __builtin_prefetch(&slots_[home(k)], 1);
    if (pending_n_ < kPending) {
      pending_[pending_n_++] = k;
      return;
    }
    place(pending_[oldest_]);  // the oldest pending key, prefetched kPending inserts ago
    pending_[oldest_] = k;
    oldest_ = (oldest_ + 1) % kPending;
  }
  void clear() {
    size_t want = slots_for(size_);
    if (want < slots_.size() / 2) {
      BlockVector<BlockKey>(want, 0).swap(slots_);  // give back what a long phase took
    } else {
      std::fill(slots_.begin(), slots_.end(), 0);
    }
    size_ = 0;
    pending_n_ = oldest_ = 0;
    has_zero_ = false;
  }
  // Starts loading the slot a lookup of k reads first.
  [[gnu::always_inline]] void prefetch(BlockKey k) const { __builtin_prefetch(&slots_[home(k)]); }
  size_t size() const { return size_ + pending_n_ + has_zero_; }  // an upper bound
  size_t memory_bytes() const { return slots_.capacity() * sizeof(BlockKey); }

 private:
  static constexpr size_t kMinSlots = 64;
  static constexpr uint32_t kPending = 8;
  // Slots for n keys at load 0.6, between the 1/2 a regrowth leaves and the 3/4 that triggers it.
  static size_t slots_for(size_t n) { return std::max(kMinSlots, n * 5 / 3 + 1); }
  size_t home(BlockKey k) const {
    // Multiply-shift onto any table size; the multiplier spreads keys that differ in low bits.
    return size_t((unsigned __int128)(k * 0x9e3779b97f4a7c15ULL) * slots_.size() >> 64);
  }
  size_t next(size_t i) const { return i + 1 == slots_.size() ? 0 : i + 1; }
  void place(BlockKey k) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    size_t i = home(k);
    for (; slots_[i] != 0; i = next(i))
      if (slots_[i] == k) return;  // evicted by prediction again in the same phase
    slots_[i] = k;
    ++size_;
  }
  void grow() {
    BlockVector<BlockKey> old(slots_.size() * 3 / 2, 0);
    old.swap(slots_);
    size_ = 0;
    for (BlockKey k : old)
      if (k != 0) place(k);
  }

  BlockVector<BlockKey> slots_;
  size_t size_ = 0;  // keys in slots_
  BlockKey pending_[kPending] = {};
  uint32_t pending_n_ = 0, oldest_ = 0;
  bool has_zero_ = false;
};

}  // namespace kvpolicy
