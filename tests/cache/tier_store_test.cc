// The lower tiers of serve mode's cache (docs/serve.md, "Memory tiers"): admission filters
// against hand-computed sequences, chain tails evicted first, and the placement invariants of a
// ServingCache with DRAM and SSD (exclusive: a block in one tier; inclusive: a lower tier keeps
// every block above it that it admitted), with blocks conserved per tier.
#include "kvpolicy/cache/tier_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "kvpolicy/cache/lower_tiers.h"
#include "kvpolicy/cache/serving_cache.h"
#include "kvpolicy/core/error.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

TierStore::Block block(BlockKey key, std::optional<BlockKey> parent = std::nullopt) {
  TierStore::Block b;
  b.key = key;
  b.has_parent = parent.has_value();
  b.parent = parent.value_or(0);
  return b;
}

TEST(TierStore, SeenFilterCountsOffersWithinItsWindow) {
  // Window 3, K = 2: offers a b a c a d b a. Counts within the last three offers, this one
  // included: a1 b1 a2 c1 a2 d1 b1 a1 (by hand: the fourth offer pushes the first a out, the
  // fifth pushes b out, the sixth the second a, the eighth the third a).
  SeenCounter seen(3);
  std::vector<uint32_t> counts;
  for (BlockKey k : {1, 2, 1, 3, 1, 4, 2, 1}) counts.push_back(seen.offer(k));
  EXPECT_EQ(counts, (std::vector<uint32_t>{1, 1, 2, 1, 2, 1, 1, 1}));

  TierStore store("ssd", 10, {"lru", ""}, {}, parse_admission("seen>=2@3", "--ssd-admit"));
  std::vector<bool> admitted;
  for (BlockKey k : {1, 2, 1, 3, 1, 4, 2, 1}) admitted.push_back(store.admits(block(k), false));
  EXPECT_EQ(admitted, (std::vector<bool>{false, false, true, false, true, false, false, false}));
  EXPECT_EQ(store.counters.rejected, 6u);
  EXPECT_EQ(parse_admission("seen>=2@3", "x").label(), "seen>=2@3");
  EXPECT_EQ(parse_admission("seen>=3", "x").label(), "seen>=3");
}

TEST(TierStore, PresenceFilterAdmitsBlocksWhosePrefixIsReachable) {
  TierStore store("dram", 10, {"lru", ""}, {}, parse_admission("presence", "--dram-admit"));
  EXPECT_TRUE(store.admits(block(1), false));      // a first block
  EXPECT_FALSE(store.admits(block(2, 1), false));  // its parent is nowhere: unreachable
  EXPECT_TRUE(store.admits(block(2, 1), true));
  EXPECT_EQ(store.counters.rejected, 1u);
}

TEST(TierStore, ChainTailsAreEvictedFirst) {
  // LRU would name the oldest block, the chain's head; a head is held by its child here.
  TierStore store("dram", 3, {"lru", ""}, {}, {});
  AccessInfo info;
  info.kind = AccessKind::kDemoted;
  store.insert(block(10), info);
  store.insert(block(11, 10), info);
  store.insert(block(12, 11), info);
  store.set_checking(true);
  EXPECT_EQ(store.evict(0)->key, 12u);
  EXPECT_EQ(store.evict(0)->key, 11u);
  // A child stored before its parent holds it as well.
  store.insert(block(21, 20), info);
  store.insert(block(20), info);
  EXPECT_EQ(store.evict(0)->key, 10u);
  EXPECT_EQ(store.evict(0)->key, 21u);
  EXPECT_EQ(store.evict(0)->key, 20u);
  EXPECT_FALSE(store.evict(0).has_value());
  EXPECT_EQ(store.counters.blocks_written, 5u);
  EXPECT_EQ(store.counters.evictions, 5u);
}

std::set<BlockKey> hbm_keys(const ServingCache& c) {
  std::set<BlockKey> out;
  const PrefixTree& t = c.tree();
  for (NodeId n = 0; n < t.id_limit(); ++n)
    if (t.contains(n)) out.insert(t.key(n));
  return out;
}

// Runs a random workload through a cache with DRAM and SSD, calling `check` after each request.
template <typename Check>
void run(Placement placement, WriteMode write, size_t dram, size_t ssd, Check check) {
  testing::RandomWorkloadOptions wo;
  wo.requests = 600;
  wo.seed = 5;
  Trace trace = testing::random_workload(wo);
  ServingCache cache(60, {"lru", ""}, {});
  std::vector<std::unique_ptr<TierStore>> local;
  local.push_back(std::make_unique<TierStore>("dram", dram, PolicySpec{"s3fifo", ""},
                                              PolicyContext{}, AdmissionFilter{}));
  local.push_back(std::make_unique<TierStore>("ssd", ssd, PolicySpec{"lru", ""}, PolicyContext{},
                                              parse_admission("presence", "ssd")));
  cache.set_tiers(std::make_unique<LowerTiers>(
      placement, write, std::move(local),
      std::vector<LinkSpec>{find_link("pcie5"), find_link("nvme")}, nullptr, LinkSpec{}));
  cache.set_checking(true);
  std::vector<NodeId> path;
  for (size_t r = 0; r < trace.size(); ++r) {
    RequestView v = request_view(trace, r);
    if (v.blocks.size() > 60) continue;
    cache.admit(v, 0, path);
    cache.mark_computed(path, static_cast<uint32_t>(path.size()), v.time);
    cache.complete(v, path, 0);
    check(cache);
  }
}

TEST(ServingCacheTiers, ExclusiveKeepsABlockInOneTier) {
  uint64_t lower_reads = 0;
  run(Placement::kExclusive, WriteMode::kWriteBack, 40, 80, [&](ServingCache& c) {
    std::set<BlockKey> hbm = hbm_keys(c);
    auto dram = c.tiers()->tier(0).keys(), ssd = c.tiers()->tier(1).keys();
    std::set<BlockKey> d(dram.begin(), dram.end());
    for (BlockKey k : dram) ASSERT_FALSE(hbm.count(k)) << "in HBM and DRAM: " << k;
    for (BlockKey k : ssd) ASSERT_FALSE(hbm.count(k) || d.count(k)) << "in two tiers: " << k;
    for (size_t t = 0; t < 2; ++t) {
      const TierStore& s = c.tiers()->tier(t);
      // Written in = evicted + taken out (promoted, or a stale copy dropped) + held now.
      ASSERT_EQ(s.counters.blocks_written, s.counters.evictions + s.counters.removed + s.size());
      ASSERT_LE(s.size(), s.capacity());
    }
    lower_reads = c.tiers()->tier(0).counters.blocks_read + c.tiers()->tier(1).counters.blocks_read;
  });
  EXPECT_GT(lower_reads, 0u);
}

TEST(ServingCacheTiers, InclusiveKeepsWhatItAdmittedWhileAboveHasIt) {
  for (WriteMode write : {WriteMode::kWriteThrough, WriteMode::kWriteBack}) {
    run(Placement::kInclusive, write, 120, 300, [&](ServingCache& c) {
      std::set<BlockKey> hbm = hbm_keys(c);
      auto dram = c.tiers()->tier(0).keys(), ssd = c.tiers()->tier(1).keys();
      std::set<BlockKey> d(dram.begin(), dram.end()), s(ssd.begin(), ssd.end());
      const TierStore &dt = c.tiers()->tier(0), &st = c.tiers()->tier(1);
      ASSERT_EQ(dt.counters.full, 0u);  // room enough: nothing admitted was dropped
      ASSERT_EQ(st.counters.full, 0u);
      if (write == WriteMode::kWriteThrough) {
        // DRAM admits all: it holds every (computed) HBM block; the SSD every HBM and DRAM
        // block whose parent was reachable when written.
        for (BlockKey k : hbm) ASSERT_TRUE(d.count(k)) << "HBM block missing from DRAM: " << k;
      }
      for (size_t t = 0; t < 2; ++t) {
        const TierStore& x = c.tiers()->tier(t);
        ASSERT_EQ(x.counters.blocks_written, x.counters.evictions + x.counters.removed + x.size());
      }
    });
  }
}

TEST(ServingCacheTiers, InclusiveSsdKeepsEveryBlockItAdmitted) {
  // Write-through, SSD admits all and is large: every block in HBM or DRAM that the SSD ever
  // admitted is still there.
  testing::RandomWorkloadOptions wo;
  wo.requests = 400;
  Trace trace = testing::random_workload(wo);
  ServingCache cache(60, {"lru", ""}, {});
  std::vector<std::unique_ptr<TierStore>> local;
  local.push_back(std::make_unique<TierStore>("dram", 80, PolicySpec{"lru", ""}, PolicyContext{},
                                              AdmissionFilter{}));
  local.push_back(std::make_unique<TierStore>("ssd", 150, PolicySpec{"fifo", ""}, PolicyContext{},
                                              AdmissionFilter{}));
  cache.set_tiers(std::make_unique<LowerTiers>(
      Placement::kInclusive, WriteMode::kWriteThrough, std::move(local),
      std::vector<LinkSpec>{find_link("pcie5"), find_link("nvme")}, nullptr, LinkSpec{}));
  std::vector<NodeId> path;
  for (size_t r = 0; r < trace.size(); ++r) {
    RequestView v = request_view(trace, r);
    if (v.blocks.size() > 60) continue;
    cache.admit(v, 0, path);
    cache.mark_computed(path, static_cast<uint32_t>(path.size()), v.time);
    cache.complete(v, path, 0);
    auto dram = cache.tiers()->tier(0).keys(), ssd = cache.tiers()->tier(1).keys();
    std::set<BlockKey> s(ssd.begin(), ssd.end());
    for (BlockKey k : hbm_keys(cache)) ASSERT_TRUE(s.count(k)) << "HBM block not on SSD " << k;
    for (BlockKey k : dram) ASSERT_TRUE(s.count(k)) << "DRAM block not on SSD " << k;
  }
}

}  // namespace
}  // namespace kvpolicy
