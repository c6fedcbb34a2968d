// The time and group of each request counter from the oldest one still needed: a ring indexed
// by the counter (power-of-two size), so that a block stamped with the counter of its last
// request (GroupedLru's stamp) finds that request's time and group in one array read.
// 10 bytes a request, in two arrays.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "kvpolicy/core/order/grouped_lru.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

class StampTable {
 public:
  using Group = GroupedLru::Group;

  StampTable() : time_(kInitialCapacity), group_(kInitialCapacity) {}
  // `seq` must be in [first(), first() + size()).
  Time time(uint32_t seq) const { return time_[seq & mask_]; }
  Group group(uint32_t seq) const { return group_[seq & mask_]; }
  uint32_t first() const { return first_; }
  size_t size() const { return end_ - first_; }
  size_t capacity() const { return time_.size(); }
  // Appends the next counter; the caller makes room first (size() < capacity()).
  void push_back(Time t, Group g) {
    time_[end_ & mask_] = t;
    group_[end_ & mask_] = g;
    ++end_;
  }
  // Forgets the counters below `seq` (never the ones not yet appended).
  void drop_before(uint32_t seq) { first_ = std::max(first_, std::min(seq, end_)); }
  // Grows the ring to a power of two of at least twice its size and `at_least`, keeping every
  // entry at its counter.
  void grow(size_t at_least) {
    size_t cap = std::bit_ceil(std::max(at_least, 2 * time_.size()));
    std::vector<Time> t(cap);
    std::vector<Group> g(cap);
    for (uint32_t s = first_; s != end_; ++s) {
      t[s & (cap - 1)] = time(s);
      g[s & (cap - 1)] = group(s);
    }
    time_ = std::move(t);
    group_ = std::move(g);
    mask_ = cap - 1;
  }
  size_t memory_bytes() const {
    return time_.capacity() * sizeof(Time) + group_.capacity() * sizeof(Group);
  }

 private:
  static constexpr size_t kInitialCapacity = 64;

  std::vector<Time> time_;
  std::vector<Group> group_;
  size_t mask_ = kInitialCapacity - 1;
  uint32_t first_ = 1, end_ = 1;  // request counters start at 1 (0 = none)
};

}  // namespace kvpolicy
