// SIEVE on hand-made sequences whose victims are worked out in the comments.
#include <gtest/gtest.h>

#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using Path = std::vector<uint64_t>;
using testing::ScriptedCache;

TEST(Sieve, HandSkipsVisitedAndStaysWhereItStopped) {
  ScriptedCache c("sieve", 3);
  c.request({1});
  c.request({2});
  c.request({3});
  c.request({1});  // hit: 1 visited. Queue (old to new): 1* 2 3
  c.request({4});  // hand at 1: clear, move on; 2 unvisited: evict 2. Hand on 3
  c.request({3});  // hit: 3 visited. Queue: 1 3* 4
  c.request({5});  // hand at 3: clear, move on; 4 unvisited: evict 4 (LRU and FIFO would evict 1)
  c.request({6});  // 4 was the newest, so the hand wrapped to 1 (cleared): evict 1, not 5
  EXPECT_EQ(c.victims(), (std::vector<Path>{{2}, {4}, {1}}));
  EXPECT_TRUE(c.cached({3}));
  EXPECT_TRUE(c.cached({5}));
  EXPECT_TRUE(c.cached({6}));
}

TEST(Sieve, ChainLeavesTailFirst) {
  ScriptedCache c("sieve", 4);
  c.request({1, 2, 3});  // queued deepest first: 3 2 1
  c.request({9});
  c.request({8});  // evicts 3, the oldest evictable leaf; its parent 2 is next in the queue
  c.request({7});  // evicts 2
  EXPECT_EQ(c.victims(), (std::vector<Path>{{1, 2, 3}, {1, 2}}));
}

TEST(Sieve, InteriorBlockKeepsItsVisitedBit) {
  ScriptedCache c("sieve", 4);
  c.request({1, 2});  // queue: 2 1
  c.request({1, 2});  // both visited
  c.request({3});
  c.request({4});  // queue: 2* 1* 3 4, full
  c.request({5});  // 2: clear; 1: interior, passed untouched; 3: evict. Hand on 4
  c.request({4});  // hit: 4 visited
  c.request({6});  // 4: clear; 5: evict. Hand past the end: wraps
  c.request({7});  // 2 (cleared): evict; 1 becomes a leaf, hand on it
  c.request({8});  // 1: still visited from request 2: clear; 4 (cleared): evict
  EXPECT_EQ(c.victims(), (std::vector<Path>{{3}, {5}, {1, 2}, {4}}));
  EXPECT_TRUE(c.cached({1}));
}

TEST(Sieve, NothingEvictableReturnsNoVictim) {
  ScriptedCache c("sieve", 2);
  AccessResult a = c.request({1, 2, 3, 4});  // the path is pinned: only two blocks fit
  EXPECT_EQ(a.inserted_blocks, 2u);
  EXPECT_TRUE(c.victims().empty());
  a = c.request({5});  // now 2 is an evictable leaf
  EXPECT_EQ(a.inserted_blocks, 1u);
  EXPECT_EQ(c.victims(), (std::vector<Path>{{1, 2}}));
}

}  // namespace
}  // namespace kvpolicy
