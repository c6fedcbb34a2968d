// S3-FIFO on hand-made sequences (libCacheSim's rules), victims worked out in the comments.
// Capacity 10: small holds 1 block, main 9, ghost 9 keys.
#include <gtest/gtest.h>

#include "kvpolicy/error.h"
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

}  // namespace
}  // namespace kvpolicy
