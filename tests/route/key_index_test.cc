// The approximate tree's open-addressing index against std::unordered_map: random inserts and
// erases (backward-shift deletion keeps every probe run whole), also with keys of only their top
// 12 bits set, which fill no more than every other home slot (long probe runs).
#include "../../src/route/key_index.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace kvpolicy {
namespace {

void random_ops(uint64_t seed, bool colliding) {
  std::mt19937_64 rng(seed);
  KeyIndex index;
  std::unordered_map<BlockKey, uint32_t> truth;
  auto key = [&] {
    uint64_t k = rng() % 3000;
    return colliding ? k << 52 : k * 0x9E37ull + 1;
  };
  for (uint32_t step = 0; step < 200000; ++step) {
    BlockKey k = key();
    if (rng() % 3 == 0) {
      index.erase(k);
      truth.erase(k);
    } else {
      bool fresh;
      uint32_t& v = index.find_or_insert(k, fresh);
      auto [it, inserted] = truth.try_emplace(k, step);
      ASSERT_EQ(fresh, inserted) << "step " << step;
      if (fresh) v = step;
      ASSERT_EQ(v, it->second) << "step " << step;
    }
    ASSERT_EQ(index.size(), truth.size());
    BlockKey probe = key();
    auto it = truth.find(probe);
    ASSERT_EQ(index.find(probe), it == truth.end() ? KeyIndex::kNone : it->second);
  }
  size_t seen = 0;
  index.for_each([&](BlockKey k, uint32_t v) {
    ++seen;
    ASSERT_EQ(truth.at(k), v);
  });
  EXPECT_EQ(seen, truth.size());
}

TEST(KeyIndex, AgreesWithUnorderedMap) { random_ops(1, false); }
TEST(KeyIndex, AgreesWithUnorderedMapWhenKeysCollide) { random_ops(2, true); }

}  // namespace
}  // namespace kvpolicy
