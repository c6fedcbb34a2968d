// KeySet (include/kvpolicy/core/order/key_set.h) against a std::unordered_set: membership
// through pending inserts, duplicates, key 0, probe chains that wrap, growth, and clears that
// shrink the table.
#include "kvpolicy/core/order/key_set.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_set>
#include <vector>

namespace kvpolicy {
namespace {

constexpr size_t kMinBytes = 64 * sizeof(BlockKey);  // the table's least size, 64 slots
constexpr size_t kPending = 8;                       // inserts not yet in the table

// size() is an upper bound: a key repeated among the pending inserts counts each time.
void expect_same(const KeySet& s, const std::unordered_set<BlockKey>& ref) {
  for (BlockKey k : ref) ASSERT_TRUE(s.contains(k)) << "key " << k;
  ASSERT_GE(s.size(), ref.size());
  ASSERT_LE(s.size(), ref.size() + kPending);
}

// Keys whose home slot in the 64-slot table (the top 6 bits of k * 2^64/phi) is `slot`.
std::vector<BlockKey> keys_homed_at(size_t slot, size_t n) {
  std::vector<BlockKey> keys;
  std::mt19937_64 rng(slot);
  while (keys.size() < n) {
    BlockKey k = rng();
    if (k != 0 && ((k * 0x9e3779b97f4a7c15ULL) >> 58) == slot) keys.push_back(k);
  }
  return keys;
}

TEST(KeySet, StartsEmpty) {
  KeySet s;
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.memory_bytes(), kMinBytes);
  for (BlockKey k : {BlockKey{0}, BlockKey{1}, ~BlockKey{0}}) EXPECT_FALSE(s.contains(k));
}

TEST(KeySet, PendingInsertsAreFoundAtOnce) {
  // Each insert is visible right after it, whether it is still in the ring or placed.
  KeySet s;
  std::unordered_set<BlockKey> ref;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 40; ++i) {
    BlockKey k = rng() | 1;
    s.prefetch(k);
    s.insert(k);
    ref.insert(k);
    ASSERT_TRUE(s.contains(k)) << "insert " << i;
    expect_same(s, ref);
    ASSERT_FALSE(s.contains(rng() | 1));
  }
}

TEST(KeySet, KeyZeroIsKeptApart) {
  // 0 marks an empty slot, so key 0 lives in a flag: it must not make empty slots members.
  KeySet s;
  s.insert(0);
  EXPECT_TRUE(s.contains(0));
  EXPECT_EQ(s.size(), 1u);
  EXPECT_FALSE(s.contains(1));
  s.insert(0);
  EXPECT_EQ(s.size(), 1u);
  for (BlockKey k = 1; k <= 100; ++k) s.insert(k);
  EXPECT_TRUE(s.contains(0));
  EXPECT_FALSE(s.contains(101));
  s.clear();
  EXPECT_FALSE(s.contains(0));
  EXPECT_EQ(s.size(), 0u);
}

TEST(KeySet, DuplicatesAreStoredOnce) {
  KeySet s;
  for (int i = 0; i < 10000; ++i) s.insert(42);
  EXPECT_TRUE(s.contains(42));
  EXPECT_LE(s.size(), 1 + kPending);
  EXPECT_EQ(s.memory_bytes(), kMinBytes);  // no growth from repeats
  // Interleaved repeats of a few keys: each placed once.
  std::unordered_set<BlockKey> ref;
  for (int i = 0; i < 5000; ++i) {
    BlockKey k = 1 + i % 7 * 1000;
    s.insert(k);
    ref.insert(k);
  }
  ref.insert(42);
  expect_same(s, ref);
  EXPECT_EQ(s.memory_bytes(), kMinBytes);
}

TEST(KeySet, ProbeChainsWrapAroundTheTable) {
  // Keys homed at the last slot probe past the end to slot 0; absent keys homed there must
  // walk the whole chain and stop at its first empty slot.
  KeySet s;
  std::vector<BlockKey> keys = keys_homed_at(63, 40);
  std::unordered_set<BlockKey> ref;
  for (size_t i = 0; i < 20; ++i) {
    s.insert(keys[i]);
    ref.insert(keys[i]);
  }
  for (size_t i = 0; i < 20; ++i) s.insert(keys[i]);  // flushes the ring, all repeats
  expect_same(s, ref);
  for (size_t i = 20; i < 40; ++i) EXPECT_FALSE(s.contains(keys[i]));
}

TEST(KeySet, MatchesAnUnorderedSetThroughGrowthAndClears) {
  KeySet s;
  std::unordered_set<BlockKey> ref;
  std::mt19937_64 rng(7);
  std::vector<BlockKey> clustered = keys_homed_at(5, 200);
  for (int phase = 0; phase < 300; ++phase) {
    // Mostly short phases, some long ones that grow the table many times over.
    size_t n = phase % 37 == 0 ? 30000 : rng() % 400;
    for (size_t i = 0; i < n; ++i) {
      BlockKey k;
      switch (rng() % 8) {
        case 0:
          k = 0;
          break;
        case 1:
          k = clustered[rng() % clustered.size()];  // long probe chains
          break;
        case 2:
          k = (rng() % 64) << 58;  // keys that differ in their high bits only
          break;
        default:
          k = rng() % 60000;  // repeats within a phase
      }
      s.insert(k);
      ref.insert(k);
      ASSERT_TRUE(s.contains(k));
      if (i % 61 == 0) {
        BlockKey q = rng() % 60000;
        ASSERT_EQ(s.contains(q), ref.count(q) == 1) << "phase " << phase << " key " << q;
      }
    }
    expect_same(s, ref);
    for (int i = 0; i < 300; ++i) {
      BlockKey q = i % 2 ? rng() : rng() % 60000;
      ASSERT_EQ(s.contains(q), ref.count(q) == 1) << "phase " << phase << " key " << q;
    }
    s.clear();
    ref.clear();
    ASSERT_EQ(s.size(), 0u);
    ASSERT_FALSE(s.contains(0));
  }
}

TEST(KeySet, ClearShrinksToTheLastPhase) {
  KeySet s;
  for (BlockKey k = 1; k <= 50000; ++k) s.insert(k);
  size_t grown = s.memory_bytes();
  // Growth keeps the load between 1/2 and 3/4: 4/3 to 2 slots a key.
  EXPECT_GE(grown, (50000 - kPending) * 4 / 3 * sizeof(BlockKey));  // the placed keys
  EXPECT_LE(grown, 2 * 50001 * sizeof(BlockKey));
  s.clear();  // sized for the phase just ended: stays large
  EXPECT_GE(s.memory_bytes(), grown / 2);
  for (BlockKey k = 1; k <= 50000; k += 2) EXPECT_FALSE(s.contains(k));
  for (BlockKey k = 1; k <= 10; ++k) s.insert(k);
  s.clear();  // a short phase: back to the least table
  EXPECT_EQ(s.memory_bytes(), kMinBytes);
  for (BlockKey k = 1; k <= 1000; ++k) s.insert(k * 3);
  for (BlockKey k = 1; k <= 1000; ++k) {
    EXPECT_TRUE(s.contains(k * 3));
    EXPECT_FALSE(s.contains(k * 3 + 1));
  }
}

}  // namespace
}  // namespace kvpolicy
