// Block key -> the counter of the key's latest access, forgetting counters that leave a sliding
// window. WA keeps in one the last access of the keys it does not hold in its lists (evicted,
// never cached, or in the other tier).
//
// Two hash tables of 64-byte buckets, five entries each, so that an operation touches one cache
// line: writes go to the newer table, lookups try it first. Once every entry of the older one is
// out of the window, it is emptied and becomes the newer one, so entries expire a table at a
// time, with no rehashing of live ones. Emptying costs nothing: an entry is empty when its
// counter is below the table's `base`, so raising `base` past every entry empties them all.
// Expired entries may still be found until their table is emptied: callers compare the counter
// found with the window's start.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kvpolicy/core/order/zeroed_array.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

class LastAccessMap {
 public:
  // The counter of `key`, 0 if absent.
  uint32_t find(BlockKey key) const {
    uint32_t s = tables_[cur_].find(key);
    return s != 0 ? s : tables_[1 - cur_].find(key);
  }
  // Sets the counter of `key`; `seq` must be at least every `live_from` passed to expire so far
  // (counters only grow).
  void assign(BlockKey key, uint32_t seq) { tables_[cur_].assign(key, seq); }
  // Entries below `live_from` are out of the window: swaps the tables once the older one holds
  // nothing else.
  void expire(uint32_t live_from) {
    Table& old = tables_[1 - cur_];
    if (old.max_seq < live_from && tables_[cur_].size > 0) {
      old.empty(live_from);
      cur_ = 1 - cur_;
    }
  }
  // always_inline: GCC 12 otherwise deems a function that only prefetches pure and drops calls.
  [[gnu::always_inline]] void prefetch_for_write(BlockKey key) const {
    tables_[cur_].prefetch(key);
  }
  [[gnu::always_inline]] void prefetch_for_find(BlockKey key) const {
    tables_[0].prefetch(key);
    tables_[1].prefetch(key);
  }
  size_t memory_bytes() const {
    return (tables_[0].buckets.size() + tables_[1].buckets.size()) * sizeof(Bucket);
  }

 private:
  static constexpr int kWays = 5;
  // Keys in two halves and their counters: five entries in one cache line.
  struct alignas(64) Bucket {
    uint32_t lo[kWays], hi[kWays], seq[kWays];
  };
  static_assert(sizeof(Bucket) == 64);
  struct Table {
    ZeroedArray<Bucket> buckets{1024};
    size_t size = 0;
    int shift = 64 - 10;
    uint32_t base = 1;  // entries with a lower counter are empty
    uint32_t max_seq = 0;

    size_t mask() const { return buckets.size() - 1; }
    // Fibonacci hashing: the top bits of key * 2^64/phi.
    size_t home(BlockKey key) const { return (key * 0x9e3779b97f4a7c15ULL) >> shift; }
    // A key sits in the first bucket from its home with room when it was written (nothing is
    // ever removed but by emptying the whole table), so a bucket with room ends the search.
    uint32_t find(BlockKey key) const {
      const uint32_t lo = static_cast<uint32_t>(key), hi = static_cast<uint32_t>(key >> 32);
      for (size_t b = home(key);; b = (b + 1) & mask()) {
        const Bucket& x = buckets[b];
        bool room = false;
        for (int w = 0; w < kWays; ++w) {
          if (x.seq[w] < base) {
            room = true;
          } else if (x.lo[w] == lo && x.hi[w] == hi) {
            return x.seq[w];
          }
        }
        if (room) return 0;
      }
    }
    void assign(BlockKey key, uint32_t seq) {
      if ((size + 1) * 5 > buckets.size() * kWays * 4) grow();  // load at most 4/5
      if (put(key, seq)) ++size;
      max_seq = std::max(max_seq, seq);
    }
    // Writes the entry; returns whether the key is new.
    bool put(BlockKey key, uint32_t seq) {
      const uint32_t lo = static_cast<uint32_t>(key), hi = static_cast<uint32_t>(key >> 32);
      for (size_t b = home(key);; b = (b + 1) & mask()) {
        Bucket& x = buckets[b];
        int free = -1;
        for (int w = 0; w < kWays; ++w) {
          if (x.seq[w] < base) {
            if (free < 0) free = w;
          } else if (x.lo[w] == lo && x.hi[w] == hi) {
            x.seq[w] = seq;
            return false;
          }
        }
        if (free >= 0) {
          x.lo[free] = lo;
          x.hi[free] = hi;
          x.seq[free] = seq;
          return true;
        }
      }
    }
    [[gnu::always_inline]] void prefetch(BlockKey key) const {
      __builtin_prefetch(&buckets[home(key)]);
    }
    // Doubles the table; the live entries are reinserted with their buckets fetched ahead.
    void grow() {
      ZeroedArray<Bucket> old = std::move(buckets);
      buckets = ZeroedArray<Bucket>(old.size() * 2);
      --shift;
      constexpr size_t kAhead = 8;
      for (size_t b = 0; b < old.size(); ++b) {
        if (b + kAhead < old.size()) {
          const Bucket& y = old[b + kAhead];
          if (y.seq[0] >= base) prefetch((uint64_t{y.hi[0]} << 32) | y.lo[0]);
        }
        const Bucket& x = old[b];
        for (int w = 0; w < kWays; ++w)
          if (x.seq[w] >= base) put((uint64_t{x.hi[w]} << 32) | x.lo[w], x.seq[w]);
      }
    }
    void empty(uint32_t new_base) {  // keeps the capacity: the next window needs about as much
      base = new_base;
      size = 0;
      max_seq = 0;
    }
  };
  Table tables_[2];
  int cur_ = 0;
};

}  // namespace kvpolicy
