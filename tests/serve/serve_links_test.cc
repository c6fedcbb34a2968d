// Serve mode's memory-tier links as FIFO servers (docs/serve.md, "Memory tiers"): a transfer
// starts at max(ready, the link's free time) and holds the link for its bytes over the
// bandwidth; writes (demotions, write-through) hold it too and delay later loads.
#include <gtest/gtest.h>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/links.h"
#include "kvpolicy/serve/serve.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy {
namespace {

constexpr double kBlockBytes = 16 * 131072.0;

// One serve setup for the runs below: a linear cost model (prefill 1 + 0.1 ms a token, decode
// 1 ms a step), 16-token blocks, and a DRAM tier of 64 blocks behind a slow link (1 MB/s reads,
// 0.5 MB/s writes, 1 ms latency).
struct SlowDram {
  CostModel cost = CostModel::linear(1, 0.1, 0, 1, 0, 131072, [] {
    CostModel::Options co;
    co.block_tokens = 16;
    return co;
  }());
  ServeOptions options(uint64_t hbm_blocks) const {
    TierSpec dram;
    dram.name = "dram";
    dram.capacity_blocks = 64;
    dram.link = LinkSpec{"slow", 1e6, 0.5e6, 1e-3};
    ServeOptions o;
    o.capacity_blocks = hbm_blocks;
    o.cost_model = &cost;
    o.cache_outputs = false;
    o.check_victims = true;
    o.overlap_transfers = true;
    o.tiers = {dram};
    return o;
  }
};

TEST(ServeLinks, TheSecondOfTwoSimultaneousLoadsWaitsTheFirstsTransfer) {
  const LinkSpec link = find_link("pcie4");
  for (uint32_t gpus : {1u, 2u}) {
    LinkQueue q(link, kBlockBytes, gpus);
    const double busy = 8 * kBlockBytes / (gpus * link.read_bytes_per_s);
    const double first = q.read(5.0, 8), second = q.read(5.0, 8);
    EXPECT_NEAR(first, 5.0 + busy + link.latency_s, 1e-12);
    EXPECT_NEAR(first - 5.0, link_read_time(link, 8, kBlockBytes, gpus), 1e-12);
    EXPECT_NEAR(second - first, busy, 1e-12);  // it waited exactly the first's transfer
    EXPECT_NEAR(q.read_wait_seconds(), busy, 1e-12);
    EXPECT_NEAR(q.busy_seconds(), 2 * busy, 1e-12);
    // A load after the link went idle does not wait.
    EXPECT_NEAR(q.read(100.0, 1), 100.0 + busy / 8 + link.latency_s, 1e-12);
    EXPECT_NEAR(q.read_wait_seconds(), busy, 1e-12);
    EXPECT_EQ(q.read(200.0, 0), 200.0);  // no block, no transfer
  }
}

TEST(ServeLinks, WritesHoldTheLinkAndDelayLoads) {
  LinkSpec link{"slow", 1e9, 0.5e9, 2e-6};
  LinkQueue q(link, kBlockBytes, 1);
  q.write(1.0, 4);
  const double write = 4 * kBlockBytes / 0.5e9, read = 2 * kBlockBytes / 1e9;
  EXPECT_NEAR(q.free_at(), 1.0 + write, 1e-12);
  EXPECT_NEAR(q.read(1.0, 2), 1.0 + write + read + link.latency_s, 1e-12);
  EXPECT_NEAR(q.read_wait_seconds(), write, 1e-12);
  EXPECT_NEAR(q.write_seconds(), write, 1e-12);
  EXPECT_NEAR(q.busy_seconds(), write + read, 1e-12);
  // A write of a link without write bandwidth costs nothing.
  LinkQueue free_writes(LinkSpec{"r", 1e9, 0, 0}, kBlockBytes, 1);
  free_writes.write(1.0, 4);
  EXPECT_EQ(free_writes.busy_seconds(), 0);
}

TEST(ServeLinks, DemotionsDelayALaterLoadInServe) {
  // HBM of 16 blocks: A and B cached; C (19.99 s) evicts A's 8 blocks to DRAM, whose writes
  // hold the link until 19.99 + 8 w; A again (20 s) is admitted when C's prefill ends, evicts
  // B's 8 (8 more writes) and loads its own 8 from DRAM behind them: its first token comes at
  // 19.99 + 16 w + 8 r + latency (transfers overlapped, and longer than the compute).
  Trace t;
  t.name = "links";
  t.block_tokens = 16;
  std::vector<uint64_t> a{1, 2, 3, 4, 5, 6, 7, 8}, b{11, 12, 13, 14, 15, 16, 17, 18},
      c{21, 22, 23, 24, 25, 26, 27, 28};
  t.add_request(0, a, 128, 1);
  t.add_request(10'000'000, b, 128, 1);
  t.add_request(19'990'000, c, 128, 1);
  t.add_request(20'000'000, a, 128, 1);
  SlowDram setup;
  ServeOptions o = setup.options(16);
  RequestTimeline tl;
  ServeResult r = serve(t, o, &tl);
  ASSERT_EQ(r.tiers.size(), 1u);
  ASSERT_EQ(r.tiers[0].hits, 8u);
  const double w = kBlockBytes / 0.5e6, rd = kBlockBytes / 1e6;
  const double c_end = tl.first_token[2];
  ASSERT_LT(c_end, 19.99 + 8 * w);  // C's prefill ends while A's writes hold the link
  EXPECT_NEAR(tl.first_token[3], 19.99 + 16 * w + 8 * rd + 1e-3, 1e-9);
  EXPECT_NEAR(r.tiers[0].link_write_seconds, 16 * w, 1e-9);
  EXPECT_NEAR(r.tiers[0].link_busy_seconds, 16 * w + 8 * rd, 1e-9);
  EXPECT_NEAR(r.tiers[0].link_wait_seconds, 19.99 + 16 * w - c_end, 1e-9);
  EXPECT_NEAR(r.transfer_seconds, tl.first_token[3] - c_end, 1e-9);
  EXPECT_NEAR(r.tiers[0].link_utilisation, r.tiers[0].link_busy_seconds / r.makespan_s, 1e-12);
}

TEST(ServeLinks, WriteThroughHoldsTheLinkForEveryBlockItWrites) {
  // Write-through: A's 8 blocks are written when its prefill computes them, B's after.
  Trace t;
  t.name = "wt";
  t.block_tokens = 16;
  std::vector<uint64_t> a{1, 2, 3, 4, 5, 6, 7, 8}, b{11, 12, 13, 14, 15, 16, 17, 18};
  t.add_request(0, a, 128, 1);
  t.add_request(1'000'000, b, 128, 1);  // B: 8 more writes, behind A's
  SlowDram setup;
  ServeOptions o = setup.options(64);
  o.placement = Placement::kInclusive;
  o.write_mode = WriteMode::kWriteThrough;
  RequestTimeline tl;
  ServeResult r = serve(t, o, &tl);
  ASSERT_EQ(r.tiers[0].blocks_written, 16u);
  const double w = kBlockBytes / 0.5e6;
  EXPECT_NEAR(r.tiers[0].link_write_seconds, 16 * w, 1e-9);
  EXPECT_NEAR(r.tiers[0].link_busy_seconds, 16 * w, 1e-9);
  // No read, so no load waited; the link's writes run past the makespan (asynchronous).
  EXPECT_NEAR(r.tiers[0].link_utilisation, 16 * w / r.makespan_s, 1e-12);
  EXPECT_EQ(r.tiers[0].link_wait_seconds, 0);
}

TEST(ServeLinks, WriteThroughWritesWhenThePrefillComputesTheBlocks) {
  // Inclusive write-through, HBM of 8 blocks: A's blocks are written at the end of its prefill
  // (a_end), B's at the end of its own; A again (2 s) finds A's blocks in DRAM and loads them
  // behind the 16 writes: they land at a_end + 16 w + 8 r + latency (overlapped, longer than the
  // compute). Writes timed at A's admission instead would land a_end earlier.
  Trace t;
  t.name = "wt-time";
  t.block_tokens = 16;
  std::vector<uint64_t> a{1, 2, 3, 4, 5, 6, 7, 8}, b{11, 12, 13, 14, 15, 16, 17, 18};
  t.add_request(0, a, 128, 1);
  t.add_request(1'000'000, b, 128, 1);
  t.add_request(2'000'000, a, 128, 1);
  SlowDram setup;
  ServeOptions o = setup.options(8);
  o.placement = Placement::kInclusive;
  o.write_mode = WriteMode::kWriteThrough;
  RequestTimeline tl;
  ServeResult r = serve(t, o, &tl);
  ASSERT_EQ(r.tiers[0].hits, 8u);
  const double w = kBlockBytes / 0.5e6, rd = kBlockBytes / 1e6;
  const double a_end = tl.first_token[0];
  ASSERT_GT(a_end, 1e-3);
  // (writes are timed to the microsecond)
  EXPECT_NEAR(tl.first_token[2], a_end + 16 * w + 8 * rd + 1e-3, 1e-6);
}

}  // namespace
}  // namespace kvpolicy
