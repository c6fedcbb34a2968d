// StampTable (include/kvpolicy/core/order/stamp_table.h) against a std::map of every counter.
#include "kvpolicy/core/order/stamp_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <random>
#include <utility>

namespace kvpolicy {
namespace {

using Entry = std::pair<Time, StampTable::Group>;

void expect_same(const StampTable& t, const std::map<uint32_t, Entry>& ref, uint32_t first,
                 uint32_t end) {
  ASSERT_EQ(t.first(), first);
  ASSERT_EQ(t.size(), end - first);
  ASSERT_TRUE(std::has_single_bit(t.capacity()));
  ASSERT_LE(t.size(), t.capacity());
  for (uint32_t s = first; s != end; ++s) {
    ASSERT_EQ(t.time(s), ref.at(s).first) << "counter " << s;
    ASSERT_EQ(t.group(s), ref.at(s).second) << "counter " << s;
  }
}

TEST(StampTable, StartsAtCounterOneEmpty) {
  StampTable t;
  EXPECT_EQ(t.first(), 1u);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.capacity(), 64u);
  t.push_back(5, 2);
  EXPECT_EQ(t.time(1), 5);
  EXPECT_EQ(t.group(1), 2);
}

TEST(StampTable, MatchesAMapThroughWrapsDropsAndGrowth) {
  // The ring wraps many times, drops go below, inside and past the live counters, and grows
  // (to double or to a larger size) keep every live entry at its counter.
  StampTable t;
  std::map<uint32_t, Entry> ref;
  uint32_t first = 1, end = 1;
  std::mt19937_64 rng(3);
  for (int step = 0; step < 30000; ++step) {
    uint64_t op = rng() % 100;
    if (op < 70) {
      if (t.size() == t.capacity()) t.grow(0);
      Entry e{static_cast<Time>(rng() >> 1), static_cast<StampTable::Group>(rng())};
      t.push_back(e.first, e.second);
      ref[end++] = e;
    } else if (op < 97) {
      // Mostly inside the live span; sometimes below it (no-op) or past its end (empties it).
      uint32_t span = end - first;
      uint32_t to = op == 96 ? first - std::min<uint32_t>(first, 2)
                             : first + static_cast<uint32_t>(rng() % (span + 3));
      t.drop_before(to);
      if (to > first) first = std::min(to, end);
    } else if (t.capacity() < 8192) {  // every grow at least doubles
      size_t at_least = op == 97 ? 0 : rng() % 4096;
      size_t before = t.capacity();
      t.grow(at_least);
      ASSERT_GE(t.capacity(), std::max(at_least, 2 * before));
    }
    if (step % 61 == 0) expect_same(t, ref, first, end);
  }
  expect_same(t, ref, first, end);
}

}  // namespace
}  // namespace kvpolicy
