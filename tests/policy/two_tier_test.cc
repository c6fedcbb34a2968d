// The HBM + DRAM cache: conservation, per-tier prefix closure, costing of DRAM hits, and the
// exclusive-hierarchy identities that pin its behaviour down.
#include <gtest/gtest.h>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/sim/sim.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::random_workload;
using testing::request_view;

TEST(TwoTier, DramCapacityZeroEqualsOneTier) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Trace t = random_workload({.seed = seed});
    for (size_t cap : {8, 25, 60}) {
      ReplayOptions one, two;
      two.dram_capacity_blocks = 0;
      two.dram_policy = {"fifo", ""};  // unused without DRAM
      auto a = replay(t, nullptr, {"lru", ""}, cap, one);
      auto b = replay(t, nullptr, {"lru", ""}, cap, two);
      EXPECT_EQ(a.block_hits, b.block_hits);
      EXPECT_EQ(a.evictions, b.evictions);
      EXPECT_EQ(b.dram_hits, 0u);
      EXPECT_EQ(b.demotions, 0u);
    }
  }
}

// Demote-on-evict, promote-on-hit LRU tiers hold exactly what one LRU of the summed size holds
// (the exclusive-hierarchy identity), as long as every prompt fits in HBM, where a running
// request's blocks must be. (Belady tiers do not: a DRAM hit must be promoted even when HBM holds
// blocks needed sooner, and HBM may demote a block whose children sit in DRAM.)
TEST(TwoTier, ExclusiveLruTiersEqualOneLruOfTheSum) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Trace t = random_workload({.seed = seed, .max_session_blocks = 10});
    ASSERT_LE(testing::longest_prompt(t), 20u);
    Oracle o = compute_oracle(t);
    for (auto [hbm, dram] : {std::pair<size_t, size_t>{20, 10}, {25, 5}, {20, 30}}) {
      for (const char* p : {"lru"}) {
        ReplayOptions two;
        two.dram_capacity_blocks = dram;
        two.dram_policy = {p, ""};
        auto tiers = replay(t, &o, {p, ""}, hbm, two);
        auto single = replay(t, &o, {p, ""}, hbm + dram);
        EXPECT_EQ(tiers.block_hits, single.block_hits)
            << p << " seed " << seed << " " << hbm << "+" << dram;
      }
    }
  }
}

TEST(TwoTier, ConservationAndClosureEveryRequest) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Trace t = random_workload({.seed = seed});
    Oracle o = compute_oracle(t);
    for (const char* p : {"lru", "belady", "fifo"}) {
      PolicyContext ctx;
      ctx.future = o.view(t);
      PrefixCache cache(12, {p, ""}, ctx, 9, {"lru", ""});
      cache.set_checking(true);
      for (size_t r = 0; r < t.size(); ++r) {
        auto res = cache.access(request_view(t, r));
        ASSERT_LE(cache.hbm_size(), 12u);
        ASSERT_LE(cache.dram_size(), 9u);  // checked between requests: a swap may overlap
        ASSERT_LE(res.dram_hit_blocks, res.hit_blocks);
        // One node per key, and HBM blocks never hang below DRAM blocks.
        ASSERT_EQ(cache.tree().check_invariants(), "") << p << " request " << r;
      }
    }
  }
}

TEST(TwoTier, DramHitIsCountedAndPromoted) {
  Trace t;
  t.block_tokens = 16;
  std::vector<uint64_t> a{1, 2}, b{3, 4};
  t.add_request(0, a, 32, 1);
  t.add_request(1, b, 32, 1);  // pushes a's two blocks down to DRAM
  t.add_request(2, a, 32, 1);  // both found in DRAM
  PrefixCache cache(2, {"lru", ""}, PolicyContext{}, 2, {"lru", ""});
  cache.set_checking(true);
  auto r0 = cache.access(request_view(t, 0));
  EXPECT_EQ(r0.hit_blocks, 0u);
  auto r1 = cache.access(request_view(t, 1));
  EXPECT_EQ(r1.demotions, 2u);
  EXPECT_EQ(cache.dram_size(), 2u);
  auto r2 = cache.access(request_view(t, 2));
  EXPECT_EQ(r2.hit_blocks, 2u);
  EXPECT_EQ(r2.dram_hit_blocks, 2u);
  // Each promotion swaps places with an HBM victim: b2 goes down for a1, then b1 for a2.
  EXPECT_EQ(r2.demotions, 2u);
  EXPECT_EQ(r2.evictions, 0u);
  EXPECT_EQ(cache.tree().tier(cache.tree().find(t.prompt(2)[0])), Tier::kHbm);
  NodeId b1 = cache.tree().find(t.prompt(1)[0]);
  ASSERT_NE(b1, kNoNode);
  EXPECT_EQ(cache.tree().tier(b1), Tier::kDram);
  EXPECT_EQ(cache.tree().tier(cache.tree().find(t.prompt(1)[1])), Tier::kDram);
  EXPECT_EQ(cache.dram_size(), 2u);
}

}  // namespace
}  // namespace kvpolicy
