#include "kvpolicy/core/order/os_treap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

namespace kvpolicy {
namespace {

// Brute-force model: members by key; the answer scans the l smallest keys.
struct Model {
  std::map<uint64_t, NodeId> by_key;
  std::vector<Time> p;

  NodeId max_among_oldest(size_t l) const {
    NodeId best = kNoNode;
    size_t i = 0;
    for (auto& [key, n] : by_key) {
      if (i++ == l) break;
      if (best == kNoNode || p[n] > p[best]) best = n;  // strict: the older wins ties
    }
    return best;
  }
};

TEST(OsTreap, SmallHandExample) {
  OsTreap t(3);
  t.resize(8);
  // Keys (recency) 10..14 for nodes 0..4; P values chosen so prefixes have known maxima.
  Time ps[] = {5, 9, 9, 1, 20};
  for (NodeId n = 0; n < 5; ++n) {
    t.set_key(n, 10 + n);
    t.set_p(n, ps[n]);
    t.insert(n);
  }
  EXPECT_EQ(t.size(), 5u);
  EXPECT_EQ(t.oldest(), 0u);
  EXPECT_EQ(t.max_among_oldest(1), 0u);
  EXPECT_EQ(t.max_among_oldest(2), 1u);
  EXPECT_EQ(t.max_among_oldest(3), 1u);  // tie 9 vs 9: the older (node 1) wins
  EXPECT_EQ(t.max_among_oldest(4), 1u);
  EXPECT_EQ(t.max_among_oldest(5), 4u);
  EXPECT_EQ(t.max_among_oldest(100), 4u);
  EXPECT_EQ(t.max_p(), 4u);
  t.set_p(4, 0);  // lowered in place
  EXPECT_EQ(t.max_p(), 1u);
  t.erase(1);
  EXPECT_EQ(t.max_among_oldest(2), 2u);  // oldest two are now nodes 0 and 2
  EXPECT_EQ(t.select(0), 0u);
  EXPECT_EQ(t.select(1), 2u);
  EXPECT_EQ(t.select(3), 4u);
  EXPECT_EQ(t.check_invariants(), "");
}

TEST(OsTreap, MatchesBruteForceUnderRandomOperations) {
  std::mt19937_64 rng(11);
  const NodeId ids = 300;
  OsTreap t(5);
  t.resize(ids);
  Model m;
  m.p.assign(ids, 0);
  uint64_t next_key = 1000;
  for (int step = 0; step < 20000; ++step) {
    NodeId n = rng() % ids;
    int op = rng() % 10;
    if (!t.contains(n)) {
      // Insert with a fresh key (newest) or an old unused one (a parent re-entering).
      uint64_t key = op < 7 ? ++next_key : rng() % 1000;
      if (m.by_key.count(key)) continue;
      Time p = static_cast<Time>(rng() % 50) - 10;  // small range: many ties
      t.set_key(n, key);
      t.set_p(n, p);
      t.insert(n);
      m.by_key[key] = n;
      m.p[n] = p;
    } else if (op < 4) {
      m.by_key.erase(t.key(n));
      t.erase(n);
    } else {
      Time p = static_cast<Time>(rng() % 50) - 10;
      t.set_p(n, p);
      m.p[n] = p;
    }
    ASSERT_EQ(t.size(), m.by_key.size());
    if (!m.by_key.empty()) {
      size_t l = 1 + rng() % (m.by_key.size() + 3);
      ASSERT_EQ(t.max_among_oldest(l), m.max_among_oldest(l)) << "step " << step << " l " << l;
      ASSERT_EQ(t.oldest(), m.by_key.begin()->second);
      size_t r = rng() % m.by_key.size();
      ASSERT_EQ(t.select(r), std::next(m.by_key.begin(), r)->second);
    } else {
      ASSERT_EQ(t.oldest(), kNoNode);
      ASSERT_EQ(t.max_among_oldest(3), kNoNode);
    }
    if (step % 1000 == 0) ASSERT_EQ(t.check_invariants(), "");
  }
  EXPECT_EQ(t.check_invariants(), "");
}

TEST(OsTreap, StaysShallowOnMonotoneInserts) {
  // Recency keys mostly arrive in increasing order; the seeded priorities must still balance.
  OsTreap t(1);
  const NodeId n = 1 << 16;
  t.resize(n);
  for (NodeId i = 0; i < n; ++i) {
    t.set_key(i, i);
    t.set_p(i, i % 97);
    t.insert(i);
  }
  // Expected height of a random treap is about 3 log2 n (48 here); a degenerate one has n.
  EXPECT_LT(t.height(), 80u);
  EXPECT_EQ(t.check_invariants(), "");
  EXPECT_EQ(t.max_among_oldest(97), 96u);
  for (NodeId i = 0; i < n; ++i) t.erase(i);
  EXPECT_TRUE(t.empty());
}

TEST(OsTreap, SameSeedSameShape) {
  // Deterministic: two treaps with the same seed and operations answer identically, and the
  // answer never depends on the seed (only the shape does).
  for (uint64_t seed : {1, 2}) {
    OsTreap a(seed), b(seed + 100);
    a.resize(64);
    b.resize(64);
    for (NodeId i = 0; i < 64; ++i) {
      a.set_key(i, 64 - i);
      b.set_key(i, 64 - i);
      a.set_p(i, (i * 7) % 13);
      b.set_p(i, (i * 7) % 13);
      a.insert(i);
      b.insert(i);
    }
    for (size_t l = 1; l <= 64; ++l) EXPECT_EQ(a.max_among_oldest(l), b.max_among_oldest(l));
  }
}

}  // namespace
}  // namespace kvpolicy
