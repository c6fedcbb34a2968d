// A count per block key for a tier store's children (tier_store.cc): open addressing, linear
// probing, backward-shift deletion, sized once for the most keys it can hold, so it never grows
// (std::unordered_map's node allocations and lookups were a third of a `serve --dram` run on
// Mooncake; docs/serve.md, "Memory tiers").
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "kvpolicy/core/types.h"

namespace kvpolicy::cache_detail {

class KeyCounts {
 public:
  // Holds up to `max_keys` keys with a nonzero count at once.
  explicit KeyCounts(size_t max_keys)
      : slots_(std::bit_ceil(std::max<size_t>(2 * max_keys + 2, 16))),
        mask_(slots_.size() - 1),
        shift_(64 - std::countr_zero(slots_.size())) {}

  uint32_t get(BlockKey key) const {
    for (size_t s = home(key);; s = (s + 1) & mask_) {
      if (slots_[s].count == 0) return 0;
      if (slots_[s].key == key) return slots_[s].count;
    }
  }
  void increment(BlockKey key) {
    size_t s = home(key);
    for (; slots_[s].count != 0; s = (s + 1) & mask_)
      if (slots_[s].key == key) {
        ++slots_[s].count;
        return;
      }
    slots_[s] = {key, 1};
  }
  // The key's count must be nonzero.
  void decrement(BlockKey key) {
    size_t s = home(key);
    while (slots_[s].key != key || slots_[s].count == 0) s = (s + 1) & mask_;
    if (--slots_[s].count != 0) return;
    // Backward shift: pull later entries of the probe run into the hole.
    size_t hole = s;
    for (size_t j = (hole + 1) & mask_; slots_[j].count != 0; j = (j + 1) & mask_) {
      size_t h = home(slots_[j].key);
      // Entry j may move to the hole if its home is not in (hole, j] cyclically.
      if (((j - h) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        slots_[j].count = 0;
        hole = j;
      }
    }
  }

 private:
  struct Slot {
    BlockKey key = 0;
    uint32_t count = 0;
  };
  size_t home(BlockKey key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_; }
  std::vector<Slot> slots_;
  size_t mask_;
  int shift_;
};

}  // namespace kvpolicy::cache_detail
