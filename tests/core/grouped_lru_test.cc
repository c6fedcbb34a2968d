#include "kvpolicy/core/order/grouped_lru.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <random>
#include <vector>

namespace kvpolicy {
namespace {

std::vector<NodeId> contents(const GroupedLru& l, GroupedLru::Group g) {
  std::vector<NodeId> out;
  for (NodeId n = l.front(g); n != kNoNode; n = l.next(n)) out.push_back(n);
  return out;
}

TEST(GroupedLru, ListsAreIndependentAndOrdered) {
  GroupedLru l;
  l.resize(10);
  l.ensure_groups(3);
  l.push_back(0, 1);
  l.push_back(0, 2);
  l.push_back(2, 3);
  l.push_front(0, 4);
  l.insert_before(0, 5, 2);  // before 2
  l.insert_after(2, 6, 3);   // after 3, the tail of group 2
  EXPECT_EQ(contents(l, 0), (std::vector<NodeId>{4, 1, 5, 2}));
  EXPECT_TRUE(l.empty(1));
  EXPECT_EQ(contents(l, 2), (std::vector<NodeId>{3, 6}));
  EXPECT_EQ(l.size(), 6u);
  EXPECT_EQ(l.size(0), 4u);
  EXPECT_EQ(l.back(2), 6u);

  l.erase(0, 4);  // the head of group 0
  l.push_back(1, 4);
  EXPECT_EQ(contents(l, 0), (std::vector<NodeId>{1, 5, 2}));
  EXPECT_EQ(contents(l, 1), (std::vector<NodeId>{4}));
  EXPECT_EQ(l.pop_front(0), 1u);
  EXPECT_FALSE(l.contains(1));
  l.erase(2, 3);
  EXPECT_EQ(l.front(2), 6u);
  EXPECT_EQ(l.prev(6), kNoNode);
  EXPECT_FALSE(l.contains(3));
  EXPECT_FALSE(l.contains(10));  // out of range
}

TEST(GroupedLru, StampsStayWithTheIdInAndOutOfLists) {
  GroupedLru l;
  l.resize(4);
  l.ensure_groups(1);
  EXPECT_EQ(l.stamp(3), 0u);  // new ids start at 0
  l.set_stamp(3, 77);
  EXPECT_FALSE(l.contains(3));
  l.push_back(0, 3);
  l.push_back(0, 1);
  l.set_stamp(1, 5);
  l.erase(0, 3);
  EXPECT_EQ(l.stamp(3), 77u);
  EXPECT_EQ(l.stamp(1), 5u);
  l.resize(1000);  // growing keeps them
  EXPECT_EQ(l.stamp(3), 77u);
  EXPECT_EQ(contents(l, 0), (std::vector<NodeId>{1}));
  EXPECT_EQ(l.stamp(999), 0u);
}

TEST(GroupedLru, NonEmptyGroupsAreVisitedInOrder) {
  GroupedLru l;
  l.resize(8);
  l.ensure_groups(200);  // several bitmap words
  EXPECT_EQ(l.first_nonempty(), GroupedLru::kNoGroup);
  l.push_back(130, 0);
  l.push_back(3, 1);
  l.push_back(64, 2);
  l.push_back(199, 3);
  std::vector<int> seen;
  for (auto g = l.first_nonempty(); g != GroupedLru::kNoGroup; g = l.next_nonempty(g + 1))
    seen.push_back(g);
  EXPECT_EQ(seen, (std::vector<int>{3, 64, 130, 199}));
  l.erase(64, 2);
  EXPECT_EQ(l.next_nonempty(4), 130);
  l.erase(199, 3);
  EXPECT_EQ(l.next_nonempty(131), GroupedLru::kNoGroup);
  EXPECT_EQ(l.next_nonempty(500), GroupedLru::kNoGroup);
}

// Random operations against one std::list per group.
TEST(GroupedLru, MatchesReferenceListsUnderRandomOperations) {
  constexpr size_t kIds = 300, kGroups = 7;
  GroupedLru l;
  l.resize(kIds);
  l.ensure_groups(kGroups);
  std::vector<std::list<NodeId>> ref(kGroups);
  std::vector<int> where(kIds, -1);
  std::vector<uint32_t> stamps(kIds, 0);
  std::mt19937_64 rng(5);
  auto erase_ref = [&](NodeId n) {
    ref[where[n]].remove(n);
    where[n] = -1;
  };
  for (int step = 0; step < 20000; ++step) {
    NodeId n = static_cast<NodeId>(rng() % kIds);
    auto g = static_cast<GroupedLru::Group>(rng() % kGroups);
    int op = static_cast<int>(rng() % 5);
    if (op == 4) {  // stamps never disturb the links
      stamps[n] = static_cast<uint32_t>(rng());
      l.set_stamp(n, stamps[n]);
    }
    if (where[n] >= 0) {
      if (op < 2) {
        l.erase(static_cast<GroupedLru::Group>(where[n]), n);
        erase_ref(n);
      } else {
        // To the back of g (from wherever it is).
        l.erase(static_cast<GroupedLru::Group>(where[n]), n);
        l.push_back(g, n);
        erase_ref(n);
        ref[g].push_back(n);
        where[n] = g;
      }
    } else if (op == 0) {
      l.push_front(g, n);
      ref[g].push_front(n);
      where[n] = g;
    } else if (op == 1 && !ref[g].empty()) {
      // Before or after a random member of g.
      auto it = ref[g].begin();
      std::advance(it, rng() % ref[g].size());
      if (rng() % 2) {
        l.insert_before(g, n, *it);
        ref[g].insert(it, n);
      } else {
        l.insert_after(g, n, *it);
        ref[g].insert(std::next(it), n);
      }
      where[n] = g;
    } else {
      l.push_back(g, n);
      ref[g].push_back(n);
      where[n] = g;
    }
    if (step % 97 == 0) {
      size_t total = 0;
      for (size_t k = 0; k < kGroups; ++k) {
        auto grp = static_cast<GroupedLru::Group>(k);
        ASSERT_EQ(contents(l, grp), std::vector<NodeId>(ref[k].begin(), ref[k].end()));
        ASSERT_EQ(l.size(grp), ref[k].size());
        ASSERT_EQ(l.empty(grp), ref[k].empty());
        // Backward links agree with forward ones.
        std::vector<NodeId> back;
        for (NodeId x = l.back(grp); x != kNoNode; x = l.prev(x)) back.push_back(x);
        std::reverse(back.begin(), back.end());
        ASSERT_EQ(back, contents(l, grp));
        total += ref[k].size();
      }
      ASSERT_EQ(l.size(), total);
      for (NodeId x = 0; x < kIds; ++x) {
        ASSERT_EQ(l.contains(x), where[x] >= 0);
        ASSERT_EQ(l.stamp(x), stamps[x]);
      }
    }
  }
}

}  // namespace
}  // namespace kvpolicy
