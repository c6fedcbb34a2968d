// S3-FIFO on hand-made sequences (libCacheSim's rules), victims worked out in the comments
// (capacity 10: small holds 1 block, main 9, ghost 9 keys); its ghost queue against a plain
// FIFO model; and its memory.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <list>

#include "../../src/policy/s3fifo_ghost.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/generators.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using Path = std::vector<uint64_t>;
using testing::ScriptedCache;

TEST(S3Fifo, SmallMainGhostAndClock) {
  ScriptedCache c("s3fifo", 10);
  for (uint64_t b = 1; b <= 10; ++b) c.request({b});  // small: 1; main: 2..10 (small was full)
  c.request({11});  // main is not over its size: evict small's 1 (into the ghost)
  c.request({11});
  c.request({11});  // 11 reaches the promotion threshold (2 hits)
  c.request({12});  // small: 11 promoted; main now over size: evict its head 2
  c.request({1});   // evict small's 12 (ghost); 1 is a ghost hit and goes to main
  c.request({13});  // main over size: evict 3
  c.request({4});   // hit: 4 gets one clock credit
  c.request({14});  // evict small's 13
  c.request({12});  // evict small's 14; 12 is a ghost hit: main
  c.request({15});  // main over size: 4 spends its credit and moves back; evict 5
  EXPECT_EQ(c.victims(), (std::vector<Path>{{1}, {2}, {12}, {3}, {13}, {14}, {5}}));
  for (uint64_t b : {1, 4, 6, 7, 8, 9, 10, 11, 12, 15}) EXPECT_TRUE(c.cached({b})) << b;
}

TEST(S3Fifo, InteriorHeadOfSmallIsPassedToItsTail) {
  ScriptedCache c("s3fifo", 10);
  for (uint64_t b = 1; b <= 10; ++b) c.request({b});
  c.request({11});      // evict 1; small: 11
  c.request({11, 12});  // 11 is pinned, so small has nothing evictable: main's 2 goes
  c.request({13});      // small: 11 (interior, one hit) moves behind 12; evict 12
  c.request({14});      // 11 is now a leaf at the head: evict it
  EXPECT_EQ(c.victims(), (std::vector<Path>{{1}, {2}, {11, 12}, {11}}));
}

TEST(S3Fifo, RejectsBadParameters) {
  EXPECT_THROW(ScriptedCache("s3fifo:small_ratio=0", 10), ConfigError);
  EXPECT_THROW(ScriptedCache("s3fifo:move_threshold=4", 10), ConfigError);
  EXPECT_THROW(ScriptedCache("s3fifo:ghost_ratio=-1", 10), ConfigError);
}

// The ghost against libCacheSim's rules on a std::list: add drops the oldest when full, take
// removes (freeing a place). Long runs cross many sweeps of stale entries; phases where nearly
// every add is taken again keep an old entry alive while the span of sequence numbers grows,
// which forces renumbering. Crowded runs add only keys whose one bucket is the table's first,
// so that most entries wait in the stash.
TEST(S3FifoGhost, MatchesAFifoModel) {
  uint64_t renumbered = 0;
  size_t stashed = 0;
  for (bool crowded : {false, true}) {
    for (size_t cap : {1, 2, 3, 9, 64, 1000}) {
      if (crowded && cap > 64) continue;  // such keys get rare as the table grows
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        SCOPED_TRACE(fmt::format("capacity {}, seed {}, crowded {}", cap, seed, crowded));
        s3fifo::GhostFifo ghost(cap);
        std::vector<BlockKey> pool;
        for (uint64_t i = 1; crowded && pool.size() < 2 * cap + 8; ++i)
          if (ghost.buckets(mix64(i)) == std::array<size_t, 2>{0, 0}) pool.push_back(mix64(i));
        std::list<BlockKey> model;
        std::vector<BlockKey> dropped;
        Rng rng(seed * 7919 + cap);
        uint64_t fresh = 0;
        auto absent_key = [&] {
          if (!crowded) return mix64(++fresh);
          for (;;) {
            BlockKey k = pool[rng.below(pool.size())];
            if (std::find(model.begin(), model.end(), k) == model.end()) return k;
          }
        };
        size_t ops = std::max<size_t>(20000, cap * 60);
        for (size_t op = 0; op < ops; ++op) {
          double take_share = (op / (ops / 8)) % 2 ? 0.95 : 0.4;  // alternate the two regimes
          double u = rng.uniform();
          if (u >= take_share || model.empty()) {
            BlockKey k = absent_key();
            if (model.size() == cap) {
              dropped.push_back(model.front());
              model.pop_front();
            }
            model.push_back(k);
            ghost.add(k);
          } else {
            // Mostly a present key, newest ones most often; sometimes a dropped or unknown one.
            BlockKey k;
            uint64_t pick = rng.below(10);
            if (pick < 7) {
              auto it = model.end();
              std::advance(it,
                           -1 - static_cast<long>(rng.below(std::min<size_t>(model.size(), 4))));
              k = *it;
            } else if (pick < 8) {
              auto it = model.begin();
              std::advance(it, static_cast<long>(rng.below(model.size())));
              k = *it;
            } else if (pick < 9 && !dropped.empty()) {
              k = dropped[dropped.size() - 1 - rng.below(std::min<size_t>(dropped.size(), 3000))];
            } else {
              k = mix64(rng.next() | (uint64_t{1} << 63));  // never added
            }
            auto it = std::find(model.begin(), model.end(), k);
            bool present = it != model.end();
            if (present) model.erase(it);
            ASSERT_EQ(ghost.take(k), present) << "op " << op;
          }
          ASSERT_EQ(ghost.size(), model.size()) << "op " << op;
          stashed = std::max(stashed, ghost.stashed());
        }
        for (BlockKey k : model) ASSERT_TRUE(ghost.take(k));
        EXPECT_EQ(ghost.size(), 0u);
        renumbered += ghost.renumbers();
      }
    }
  }
  EXPECT_GT(renumbered, 0u);  // the take-heavy phases did exercise renumbering
  EXPECT_GT(stashed, 0u);     // and the crowded runs the stash
}

// Twelve keys that all need the first of the ghost's two buckets (8 ways): four wait in the
// stash, and keep their places in the FIFO while adds and takes of other keys force renumbering
// (which moves every number, as the first key added was taken). Then each add drops the oldest.
TEST(S3FifoGhost, StashedEntriesKeepTheirOrder) {
  s3fifo::GhostFifo ghost(13);
  std::vector<BlockKey> crowded;
  for (uint64_t i = 1; crowded.size() < 15; ++i)
    if (ghost.buckets(mix64(i)) == std::array<size_t, 2>{0, 0}) crowded.push_back(mix64(i));
  for (size_t i = 0; i < 12; ++i) ghost.add(crowded[i]);
  ASSERT_TRUE(ghost.take(crowded[0]));
  ghost.add(crowded[12]);
  for (size_t i = 0; i < 1000; ++i) {  // crowded[1..12] stay while the numbers move on
    ghost.add(crowded[13 + i % 2]);
    ASSERT_TRUE(ghost.take(crowded[13 + i % 2]));
  }
  EXPECT_GE(ghost.stashed(), 3u);
  EXPECT_GT(ghost.renumbers(), 0u);
  ghost.add(crowded[13]);  // full now
  for (size_t i = 1; i <= 12; ++i) {
    ghost.add(mix64(uint64_t{1} << 40 | i));
    EXPECT_FALSE(ghost.take(crowded[i])) << i;  // dropped: it was the oldest
    EXPECT_EQ(ghost.size(), 13u);
  }
  EXPECT_TRUE(ghost.take(crowded[13]));
}

TEST(S3FifoGhost, DisabledGhostHoldsNothing) {
  s3fifo::GhostFifo ghost(0);
  ghost.add(42);
  EXPECT_FALSE(ghost.take(42));
  EXPECT_EQ(ghost.size(), 0u);
}

// docs/architecture.md's budget: at most 64 bytes per cached block, tree included. The queues cost
// LRU's list (8 bytes) and main's candidate link (4), and the ghost (0.9 keys per block) at most 12
// bytes a key.
TEST(S3Fifo, FitsTheMemoryBudget) {
  for (size_t cap : {1000, 16451, 200000}) {
    s3fifo::GhostFifo ghost(cap);
    EXPECT_LE(double(ghost.memory_bytes()) / cap, 12.0) << cap;
  }
  Trace t = testing::random_workload({.seed = 5, .requests = 2000});
  const size_t cap = 1500;
  ReplayResult lru = replay(t, nullptr, {"lru", ""}, cap);
  ReplayResult s3 = replay(t, nullptr, {"s3fifo", ""}, cap);
  ASSERT_GT(s3.evictions, 0u);  // the cache was full
  EXPECT_LE(s3.bytes_per_block, 64.0);
  EXPECT_LE(s3.bytes_per_block - lru.bytes_per_block, 4.0 + 0.9 * 12.0);
}

}  // namespace
}  // namespace kvpolicy
