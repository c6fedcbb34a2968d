// ARC: on one-block requests (every block a root leaf) kvpolicy's arc must make exactly the
// hits of the textbook algorithm (Megiddo & Modha, FAST'03, Fig. 4), written here on objects;
// the ghost list's own behaviour; and on prefix workloads, p stays within [0, c] and the
// directory within its bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <unordered_map>

#include "../../src/policy/arc_ghost.h"
#include "engine_policies_support.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::registry_policy;
using testing::replay_victims;

// The paper's ARC(c) on keys, its cases I-IV as printed.
class TextbookArc {
 public:
  explicit TextbookArc(size_t c) : c_(c) {}
  bool get(uint64_t x) {
    if (in(t1_, x) || in(t2_, x)) {  // case I
      remove(in(t1_, x) ? t1_ : t2_, x);
      t2_.push_back(x);
      return true;
    }
    if (in(b1_, x)) {  // case II
      double d = b1_.size() >= b2_.size() ? 1 : double(b2_.size()) / double(b1_.size());
      p_ = std::min(double(c_), p_ + d);
      replace(x);
      remove(b1_, x);
      t2_.push_back(x);
      return false;
    }
    if (in(b2_, x)) {  // case III
      double d = b2_.size() >= b1_.size() ? 1 : double(b1_.size()) / double(b2_.size());
      p_ = std::max(0.0, p_ - d);
      replace(x);
      remove(b2_, x);
      t2_.push_back(x);
      return false;
    }
    size_t l1 = t1_.size() + b1_.size();  // case IV
    size_t total = l1 + t2_.size() + b2_.size();
    if (l1 == c_) {
      if (t1_.size() < c_) {
        b1_.pop_front();
        replace(x);
      } else {
        t1_.pop_front();
      }
    } else if (total >= c_) {
      if (total == 2 * c_) b2_.pop_front();
      replace(x);
    }
    t1_.push_back(x);
    return false;
  }
  double p() const { return p_; }

 private:
  static bool in(const std::list<uint64_t>& l, uint64_t x) {
    return std::find(l.begin(), l.end(), x) != l.end();
  }
  static void remove(std::list<uint64_t>& l, uint64_t x) {
    l.erase(std::find(l.begin(), l.end(), x));
  }
  void replace(uint64_t x) {
    if (!t1_.empty() && ((in(b2_, x) && double(t1_.size()) == p_) || double(t1_.size()) > p_)) {
      b1_.push_back(t1_.front());
      t1_.pop_front();
    } else {
      b2_.push_back(t2_.front());
      t2_.pop_front();
    }
  }
  size_t c_;
  double p_ = 0;
  std::list<uint64_t> t1_, t2_, b1_, b2_;  // front = LRU
};

// One-block requests from a skewed popularity with a drifting hot set, so that both ghosts
// are hit and p moves both ways.
Trace flat_workload(uint64_t seed, uint32_t requests, uint64_t objects) {
  Trace t;
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (uint32_t r = 0; r < requests; ++r) {
    x = mix64(x + r);
    double u = double(x >> 11) * 0x1.0p-53;
    uint64_t shift = (r / 2000) * objects / 7;  // the hot set moves every 2,000 requests
    uint64_t id = 1 + (shift + static_cast<uint64_t>(double(objects) * u * u)) % objects;
    if ((x & 7) == 0) id = objects + 1 + (x >> 20) % (objects * 4);  // a scan of one-off keys
    t.add_request(r, std::span<const uint64_t>(&id, 1), 16, 1);
  }
  return t;
}

TEST(Arc, EqualsTheTextbookOnObjects) {
  for (uint64_t seed : {1, 2, 3}) {
    Trace trace = flat_workload(seed, 12000, 1500);
    for (size_t cap : {size_t{1}, size_t{10}, size_t{100}, size_t{400}}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " capacity " + std::to_string(cap));
      auto fast = replay_victims(trace, cap, registry_policy("arc"));
      TextbookArc ref(cap);
      size_t differ = 0, first = trace.size(), hits = 0;
      for (size_t r = 0; r < trace.size(); ++r) {
        bool hit = ref.get(trace.prompt(r)[0]);
        hits += hit;
        if ((fast.hits[r] == 1) != hit && differ++ == 0) first = r;
      }
      EXPECT_EQ(differ, 0u) << "first at request " << first;
      EXPECT_GT(hits, 0u);
    }
  }
}

// ARC must differ from LRU on these workloads, or the comparison above proves little.
TEST(Arc, DiffersFromLru) {
  Trace trace = flat_workload(1, 12000, 1500);
  auto arc = replay_victims(trace, 100, registry_policy("arc"));
  auto lru = replay_victims(trace, 100, registry_policy("lru"));
  EXPECT_NE(arc.victims, lru.victims);
  uint64_t arc_hits = 0, lru_hits = 0;
  for (size_t r = 0; r < trace.size(); ++r) arc_hits += arc.hits[r], lru_hits += lru.hits[r];
  // The one-off scans flush LRU; ARC keeps its frequent blocks in T2.
  EXPECT_GT(arc_hits, lru_hits);
}

TEST(Arc, StatsStayWithinTheDirectoryBounds) {
  for (uint64_t w = 1; w <= 3; ++w) {
    Trace trace = testing::random_workload({.seed = 40 + w, .requests = 400});
    size_t cap = count_unique_blocks(trace) / 8;
    PolicyContext ctx;
    PrefixCache cache(cap, PolicySpec{"arc", ""}, ctx);
    cache.set_checking(true);
    for (size_t r = 0; r < trace.size(); ++r) {
      cache.access(testing::request_view(trace, r));
      std::unordered_map<std::string, double> s;
      for (auto& [k, v] : cache.policy().stats()) s[k] = v;
      ASSERT_GE(s["arc_p"], 0);
      ASSERT_LE(s["arc_p"], double(cap));
      ASSERT_EQ(s["arc_t1"] + s["arc_t2"], double(cache.hbm_size()));
      ASSERT_LE(s["arc_t1"] + s["arc_b1"], double(cap));
      ASSERT_LE(s["arc_t1"] + s["arc_t2"] + s["arc_b1"] + s["arc_b2"], 2.0 * double(cap));
    }
  }
}

TEST(ArcGhost, LruOrderLookupAndRemoval) {
  arc::GhostList g;
  for (uint64_t k = 1; k <= 5; ++k) g.push(k);
  EXPECT_TRUE(g.erase(3));
  EXPECT_FALSE(g.erase(3));
  EXPECT_EQ(g.size(), 4u);
  g.pop_oldest();  // 1
  EXPECT_FALSE(g.contains(1));
  g.push(3);       // back as the newest
  g.pop_oldest();  // 2
  g.pop_oldest();  // 4
  EXPECT_TRUE(g.contains(5));
  EXPECT_TRUE(g.contains(3));
  EXPECT_EQ(g.size(), 2u);
  // Many removals compact the queue without losing order.
  for (uint64_t k = 100; k < 1000; ++k) g.push(k);
  for (uint64_t k = 100; k < 990; ++k) g.erase(k);
  g.pop_oldest();  // 5
  g.pop_oldest();  // 3
  EXPECT_FALSE(g.contains(5));
  EXPECT_FALSE(g.contains(3));
  EXPECT_EQ(g.size(), 10u);
}

}  // namespace
}  // namespace kvpolicy
