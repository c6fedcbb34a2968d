// Insert-only open-addressing map from block keys to 32-bit values, for whole-trace passes.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

// A key's slot holds its key, value and a used mark together: one cache line per probe, and
// whole-trace tables (tens of MiB, touched at random) sit on huge pages.
class KeyMap {
 public:
  explicit KeyMap(size_t expected = 1024) {
    rehash(std::bit_ceil(std::max<size_t>(16, expected * 2)));
  }

  // Returns a reference to the value of `key`, inserting `fresh` if absent.
  uint32_t& get_or_insert(BlockKey key, uint32_t fresh, bool* inserted = nullptr) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    Slot& s = slots_[probe(key)];
    bool is_new = !s.used;
    if (is_new) {
      s = Slot{key, fresh, 1};
      ++size_;
    }
    if (inserted) *inserted = is_new;
    return s.value;
  }
  const uint32_t* find(BlockKey key) const {
    const Slot& s = slots_[probe(key)];
    return s.used ? &s.value : nullptr;
  }
  // Starts loading the slot where key's probe begins: a pass over a trace's keys calls it some
  // keys ahead, so that the misses of several lookups overlap.
  [[gnu::always_inline]] void prefetch(BlockKey key) const {
    __builtin_prefetch(&slots_[mix64(key) & (slots_.size() - 1)]);
  }
  size_t size() const { return size_; }
  template <typename F>
  void for_each_value(F&& f) const {
    for (const Slot& s : slots_)
      if (s.used) f(s.value);
  }

 private:
  struct Slot {
    BlockKey key;
    uint32_t value;
    uint32_t used;
  };
  size_t probe(BlockKey key) const {
    size_t mask = slots_.size() - 1, slot = mix64(key) & mask;
    while (slots_[slot].used && slots_[slot].key != key) slot = (slot + 1) & mask;
    return slot;
  }
  void rehash(size_t slots) {
    BlockVector<Slot> old = std::move(slots_);
    slots_.assign(slots, Slot{0, 0, 0});
    for (const Slot& s : old)
      if (s.used) slots_[probe(s.key)] = s;
  }
  BlockVector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace kvpolicy
