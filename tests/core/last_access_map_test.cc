// LastAccessMap (include/kvpolicy/core/order/last_access_map.h) against a std::unordered_map
// with the same window: a key whose counter is in the window is found with it; any other key
// yields a counter below the window (0 or an expired one).
#include "kvpolicy/core/order/last_access_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

namespace kvpolicy {
namespace {

class Reference {
 public:
  void assign(BlockKey key, uint32_t seq) { map_[key] = seq; }
  // The counter `key` must be found with, or 0 if it must be below live_from.
  uint32_t live(BlockKey key, uint32_t live_from) const {
    auto it = map_.find(key);
    return it != map_.end() && it->second >= live_from ? it->second : 0;
  }

 private:
  std::unordered_map<BlockKey, uint32_t> map_;
};

void expect_find(const LastAccessMap& m, const Reference& ref, BlockKey key, uint32_t live_from) {
  uint32_t got = m.find(key), want = ref.live(key, live_from);
  if (want != 0) {
    EXPECT_EQ(got, want) << "key " << key;
  } else {
    EXPECT_LT(got, live_from) << "key " << key;
  }
}

// Keys whose home bucket (the top bits of key * 2^64/phi in a 1024-bucket table) is `bucket`.
std::vector<BlockKey> keys_homed_at(size_t bucket, size_t n) {
  std::vector<BlockKey> keys;
  std::mt19937_64 rng(bucket);
  while (keys.size() < n) {
    BlockKey k = rng();
    if (((k * 0x9e3779b97f4a7c15ULL) >> 54) == bucket) keys.push_back(k);
  }
  return keys;
}

TEST(LastAccessMap, AbsentKeysAreZero) {
  LastAccessMap m;
  EXPECT_EQ(m.find(0), 0u);
  EXPECT_EQ(m.find(42), 0u);
  m.assign(42, 3);
  EXPECT_EQ(m.find(42), 3u);
  EXPECT_EQ(m.find(0), 0u);
  m.assign(42, 9);  // overwritten, not added
  EXPECT_EQ(m.find(42), 9u);
}

TEST(LastAccessMap, CollidingKeysSpillToTheNextBucketAndWrapAround) {
  // Twelve keys of the last bucket fill it (five ways), then bucket 0, then bucket 1.
  LastAccessMap m;
  std::vector<BlockKey> keys = keys_homed_at(1023, 12);
  for (size_t i = 0; i < keys.size(); ++i) m.assign(keys[i], static_cast<uint32_t>(i + 1));
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(m.find(keys[i]), i + 1) << i;
  // An absent key of the same home searches the whole chain and stops at the first bucket with
  // room.
  EXPECT_EQ(m.find(keys_homed_at(1023, 13).back()), 0u);
}

TEST(LastAccessMap, MatchesAMapThroughGrowthAndTableSwaps) {
  // A sliding window over counters: keys are rewritten (sometimes long after), the window moves
  // on so that the tables swap and are emptied many times, and enough keys live at once for
  // the tables to grow (past 4096 entries).
  LastAccessMap m;
  Reference ref;
  std::mt19937_64 rng(5);
  std::vector<BlockKey> keys(40000);
  for (BlockKey& k : keys) k = rng();
  uint32_t seq = 1, live_from = 1;
  for (int step = 0; step < 400000; ++step) {
    if (step % 50 == 0) ++seq;
    // The window: the last 3000 counters in the first half, the last 30 in the second.
    uint32_t window = step < 200000 ? 3000 : 30;
    if (seq > window && seq - window > live_from) {
      live_from = seq - window;
      m.expire(live_from);
    }
    BlockKey key = keys[rng() % keys.size()];
    if (rng() % 2) {
      m.assign(key, seq);
      ref.assign(key, seq);
    } else {
      expect_find(m, ref, key, live_from);
      if (::testing::Test::HasFailure()) return;
    }
  }
  for (BlockKey key : keys) expect_find(m, ref, key, live_from);
}

TEST(LastAccessMap, ExpiringEmptiesTheOlderTableOnlyWhenAllOfItIsOut) {
  LastAccessMap m;
  m.assign(1, 5);
  m.expire(3);  // the older table is empty: the tables swap, key 1 (5) is now in the older one
  m.assign(2, 6);
  EXPECT_EQ(m.find(1), 5u);
  EXPECT_EQ(m.find(2), 6u);
  m.expire(6);  // key 1 is out, the older table holds nothing else: emptied
  EXPECT_EQ(m.find(1), 0u);
  EXPECT_EQ(m.find(2), 6u);
  m.expire(6);  // key 2 is still in the window: no swap
  m.expire(7);  // the newer table is empty: no swap, so key 2, out of the window, is still held
                // (callers compare what they find with the window)
  EXPECT_LT(m.find(2), 7u);
  m.assign(2, 8);
  EXPECT_EQ(m.find(2), 8u);
}

}  // namespace
}  // namespace kvpolicy
