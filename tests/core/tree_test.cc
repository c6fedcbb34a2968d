#include "kvpolicy/core/tree.h"

#include <gtest/gtest.h>

#include <random>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

TEST(PrefixTree, InsertFindRemoveKeepsInvariants) {
  PrefixTree tree(4);
  NodeId a = tree.insert(10, kNoNode);
  NodeId b = tree.insert(11, a);
  EXPECT_EQ(tree.find(10), a);
  EXPECT_EQ(tree.find(11), b);
  EXPECT_EQ(tree.find(12), kNoNode);
  EXPECT_EQ(tree.depth(b), 1u);
  EXPECT_FALSE(tree.is_evictable(b));  // pinned on insert
  EXPECT_TRUE(tree.unpin(b));
  EXPECT_FALSE(tree.unpin(a));   // has a child
  EXPECT_EQ(tree.remove(b), a);  // parent becomes an unpinned leaf
  EXPECT_TRUE(tree.is_evictable(a));
  EXPECT_EQ(tree.check_invariants(), "");
}

// Pin counts share a word with the depth and the tier: past their limit the tree refuses with
// an error instead of wrapping to "unpinned" (which would let a held block be evicted).
TEST(PrefixTree, PinLimitIsAnErrorNotAWrap) {
  PrefixTree tree(4);
  NodeId a = tree.insert(10, kNoNode);  // pinned once on insert
  for (uint32_t k = 1; k < 127; ++k) tree.pin(a);
  EXPECT_EQ(tree.pin_count(a), 127u);
  EXPECT_THROW(tree.pin(a), Error);
  EXPECT_EQ(tree.pin_count(a), 127u);
  EXPECT_TRUE(tree.is_pinned(a));
  EXPECT_EQ(tree.tier(a), Tier::kHbm);
  EXPECT_EQ(tree.check_invariants(), "");
}

TEST(PrefixTree, HashTableSurvivesChurnAndGrowth) {
  PrefixTree tree(2);
  std::mt19937_64 rng(7);
  std::vector<std::pair<BlockKey, NodeId>> live;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      BlockKey k = rng() % 5000;  // small key range: many collisions and repeats
      if (tree.find(k) != kNoNode) continue;
      NodeId n = tree.insert(k, kNoNode);
      tree.unpin(n);
      live.push_back({k, n});
    } else {
      size_t i = rng() % live.size();
      tree.remove(live[i].second);
      live[i] = live.back();
      live.pop_back();
    }
  }
  for (auto& [k, n] : live) EXPECT_EQ(tree.find(k), n);
  EXPECT_EQ(tree.size(), live.size());
  EXPECT_EQ(tree.check_invariants(), "");
}

}  // namespace
}  // namespace kvpolicy

namespace kvpolicy {
namespace {

// PrefixTree is public (libkvpolicy): a node id it never handed out is one clear error, not a
// write past its arrays, and the tree is unchanged.
TEST(PrefixTree, NodeIdsAreRangeChecked) {
  PrefixTree t;
  NodeId a = t.insert(10, kNoNode);
  const NodeId bad = a + 1000;
  EXPECT_THROW(t.insert(11, bad), Error);
  EXPECT_THROW(t.pin(bad), Error);
  EXPECT_THROW(t.unpin(bad), Error);
  EXPECT_THROW(t.remove(bad), Error);
  EXPECT_THROW(t.demote(bad), Error);
  EXPECT_THROW(t.promote(bad), Error);
  EXPECT_THROW(t.key(bad), Error);
  EXPECT_THROW(t.parent(kNoNode), Error);
  EXPECT_THROW(t.is_evictable(bad), Error);
  EXPECT_FALSE(t.contains(bad));
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.check_invariants(), "");
  EXPECT_EQ(t.key(a), 10u);
}

}  // namespace
}  // namespace kvpolicy
