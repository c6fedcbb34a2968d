// Block key -> node index, open addressing with linear probing and backward-shift deletion (no
// tombstones): the approximate tree's index, where std::unordered_map's node allocation and
// bucket walk on erase were most of a cache-aware router's time (docs/results/bench.md).
#pragma once

#include <cstdint>
#include <vector>

#include "kvpolicy/core/types.h"

namespace kvpolicy {

class KeyIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  KeyIndex() { rehash(16); }

  size_t size() const { return size_; }
  // Starts loading `key`'s home slot: a prompt's keys are looked up one after another, and the
  // table is larger than the caches.
  void prefetch(BlockKey key) const { __builtin_prefetch(&slots_[home(key)]); }
  // The value of `key`, or kNone.
  uint32_t find(BlockKey key) const {
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.value == kNone) return kNone;
      if (s.key == key) return s.value;
    }
  }
  // The slot of `key`'s value, inserted as kNone-to-be-set when absent (`fresh` says so); the
  // caller stores a value other than kNone in it before any other call.
  uint32_t& find_or_insert(BlockKey key, bool& fresh) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.value == kNone) break;
      if (s.key == key) {
        fresh = false;
        return s.value;
      }
    }
    fresh = true;
    ++size_;
    slots_[i].key = key;
    return slots_[i].value;
  }
  void erase(BlockKey key) {
    size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].value == kNone) return;
      if (slots_[i].key == key) break;
    }
    --size_;
    // Backward shift: move later entries of the probe run into the hole when their home allows.
    for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      if (slots_[j].value == kNone) break;
      size_t k = home(slots_[j].key);
      // Move j to i unless k lies cyclically in (i, j].
      bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i].value = kNone;
  }
  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (s.value != kNone) f(s.key, s.value);
  }

 private:
  struct Slot {
    BlockKey key = 0;
    uint32_t value = kNone;
  };
  size_t home(BlockKey key) const {
    // Fibonacci hashing: the top bits of key x 2^64 / phi.
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    size_ = 0;
    for (const Slot& s : old)
      if (s.value != kNone) {
        bool fresh;
        find_or_insert(s.key, fresh) = s.value;
      }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0, size_ = 0;
  unsigned shift_ = 64;
};

}  // namespace kvpolicy
