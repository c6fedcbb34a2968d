// Insert-only open-addressing map from block keys to 32-bit values, for whole-trace passes.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kvpolicy/types.h"

namespace kvpolicy {

class KeyMap {
 public:
  explicit KeyMap(size_t expected = 1024) {
    rehash(std::bit_ceil(std::max<size_t>(16, expected * 2)));
  }

  // Returns a reference to the value of `key`, inserting `fresh` if absent.
  uint32_t& get_or_insert(BlockKey key, uint32_t fresh, bool* inserted = nullptr) {
    if ((size_ + 1) * 2 > keys_.size()) rehash(keys_.size() * 2);
    size_t slot = probe(key);
    bool is_new = !used_[slot];
    if (is_new) {
      used_[slot] = 1;
      keys_[slot] = key;
      values_[slot] = fresh;
      ++size_;
    }
    if (inserted) *inserted = is_new;
    return values_[slot];
  }
  const uint32_t* find(BlockKey key) const {
    size_t slot = probe(key);
    return used_[slot] ? &values_[slot] : nullptr;
  }
  size_t size() const { return size_; }

 private:
  size_t probe(BlockKey key) const {
    size_t slot = mix64(key) & (keys_.size() - 1);
    while (used_[slot] && keys_[slot] != key) slot = (slot + 1) & (keys_.size() - 1);
    return slot;
  }
  void rehash(size_t slots) {
    std::vector<BlockKey> old_keys = std::move(keys_);
    std::vector<uint32_t> old_values = std::move(values_);
    std::vector<uint8_t> old_used = std::move(used_);
    keys_.assign(slots, 0);
    values_.assign(slots, 0);
    used_.assign(slots, 0);
    for (size_t i = 0; i < old_keys.size(); ++i) {
      if (!old_used[i]) continue;
      size_t slot = probe(old_keys[i]);
      used_[slot] = 1;
      keys_[slot] = old_keys[i];
      values_[slot] = old_values[i];
    }
  }
  std::vector<BlockKey> keys_;
  std::vector<uint32_t> values_;
  std::vector<uint8_t> used_;
  size_t size_ = 0;
};

}  // namespace kvpolicy
