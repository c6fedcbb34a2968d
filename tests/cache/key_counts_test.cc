// The tier store's per-key child counts (src/cache/key_counts.h) against std::unordered_map
// under random increments and decrements, with keys crowded into few home slots.
#include "../../src/cache/key_counts.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace kvpolicy::cache_detail {
namespace {

TEST(KeyCounts, MatchesAMapUnderRandomChanges) {
  for (uint64_t stride : {uint64_t{1}, uint64_t{1} << 40}) {
    KeyCounts counts(200);
    std::unordered_map<BlockKey, uint32_t> want;
    std::mt19937_64 rng(7);
    uint64_t total = 0;
    for (int step = 0; step < 200000; ++step) {
      BlockKey key = (rng() % 300) * stride;
      bool add = total < 200 && (rng() % 2 == 0 || want.empty());
      if (add) {
        counts.increment(key);
        ++want[key];
        ++total;
      } else if (auto it = want.find(key); it != want.end()) {
        counts.decrement(key);
        if (--it->second == 0) want.erase(it);
        --total;
      }
      ASSERT_EQ(counts.get(key), want.count(key) ? want[key] : 0u) << "step " << step;
    }
    for (uint64_t k = 0; k < 300; ++k)
      EXPECT_EQ(counts.get(k * stride), want.count(k * stride) ? want[k * stride] : 0u);
  }
}

}  // namespace
}  // namespace kvpolicy::cache_detail
