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

// A key's slot holds its key and value together in 12 bytes (key 0 marks an empty slot; the key
// 0 itself lives beside the table): one cache line per probe, and whole-trace tables (tens of
// MiB, touched at random) sit on huge pages. Filled to at most 3/4, so a table of u keys takes
// 16-32 bytes per key (it was 32-64 with 16-byte slots filled to 1/2).
class KeyMap {
 public:
  explicit KeyMap(size_t expected = 1024) {
    rehash(std::bit_ceil(std::max<size_t>(16, expected * 4 / 3 + 1)));
  }

  // Returns a reference to the value of `key`, inserting `fresh` if absent.
  uint32_t& get_or_insert(BlockKey key, uint32_t fresh, bool* inserted = nullptr) {
    if (key == 0) [[unlikely]] {
      bool is_new = !has_zero_;
      if (is_new) has_zero_ = true, zero_value_ = fresh, ++size_;
      if (inserted) *inserted = is_new;
      return zero_value_;
    }
    if ((size_ + 1) * 4 > slots_.size() * 3) rehash(slots_.size() * 2);
    Slot& s = slots_[probe(key)];
    bool is_new = s.empty();
    if (is_new) {
      s = Slot(key, fresh);
      ++size_;
    }
    if (inserted) *inserted = is_new;
    return s.value;
  }
  const uint32_t* find(BlockKey key) const {
    if (key == 0) return has_zero_ ? &zero_value_ : nullptr;
    const Slot& s = slots_[probe(key)];
    return s.empty() ? nullptr : &s.value;
  }
  // Starts loading the slot where key's probe begins: a pass over a trace's keys calls it some
  // keys ahead, so that the misses of several lookups overlap.
  [[gnu::always_inline]] void prefetch(BlockKey key) const {
    __builtin_prefetch(&slots_[mix64(key) & (slots_.size() - 1)]);
  }
  size_t size() const { return size_; }
  size_t memory_bytes() const { return slots_.capacity() * sizeof(Slot); }
  template <typename F>
  void for_each_value(F&& f) const {
    if (has_zero_) f(zero_value_);
    for (const Slot& s : slots_)
      if (!s.empty()) f(s.value);
  }

 private:
  // Three 32-bit words, so the array packs at 12 bytes a slot with the value aligned.
  struct Slot {
    uint32_t lo = 0, hi = 0, value = 0;
    Slot() = default;
    Slot(BlockKey k, uint32_t v)
        : lo(static_cast<uint32_t>(k)), hi(static_cast<uint32_t>(k >> 32)), value(v) {}
    BlockKey key() const { return BlockKey{hi} << 32 | lo; }
    bool empty() const { return (lo | hi) == 0; }
  };
  static_assert(sizeof(Slot) == 12);
  size_t probe(BlockKey key) const {
    size_t mask = slots_.size() - 1, slot = mix64(key) & mask;
    while (!slots_[slot].empty() && slots_[slot].key() != key) slot = (slot + 1) & mask;
    return slot;
  }
  void rehash(size_t slots) {
    BlockVector<Slot> old = std::move(slots_);
    slots_.assign(slots, Slot());
    for (const Slot& s : old)
      if (!s.empty()) slots_[probe(s.key())] = s;
  }
  BlockVector<Slot> slots_;
  size_t size_ = 0;
  bool has_zero_ = false;
  uint32_t zero_value_ = 0;
};

}  // namespace kvpolicy
