// Serve mode's memory tiers (docs/serve.md, "Memory tiers"): with one worker, requests that never
// overlap and no cached answers, serve mode's HBM and DRAM hits are replay's two-tier hits;
// transfer times are the links' closed form; the tier counters conserve blocks; Little's law and
// completion-once hold with every tier feature on.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <numeric>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/links.h"
#include "kvpolicy/serve/serve.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/sim/sweep.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/hints.h"
#include "kvpolicy/trace/trace.h"
#include "kvpolicy/trace/trace_io.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

TierSpec tier(const std::string& name, size_t blocks, const std::string& policy = "lru",
              const std::string& admit = "all", const std::string& link = "pcie5") {
  TierSpec t;
  t.name = name;
  t.capacity_blocks = blocks;
  t.policy = parse_policy_spec(policy);
  t.admission = parse_admission(admit, name);
  t.link = find_link(link);
  return t;
}

// Requests far apart (each done before the next arrives), one output token, answers not cached:
// what replay sees.
void space_out(Trace& trace, Time gap_us) {
  for (size_t r = 0; r < trace.size(); ++r) {
    trace.output_tokens[r] = 1;
    trace.time[r] = static_cast<Time>(r) * gap_us;
  }
}

// DRAM policies checked against replay's two-tier mode.
const char* const kDramPolicies[] = {"lru",   "fifo", "lfu", "s3fifo",
                                     "sieve", "gdsf", "arc", "slru"};

// Returns the DRAM hits.
uint64_t expect_equals_replay(const Trace& trace, const Oracle* oracle, const std::string& policy,
                              const std::string& dram_policy, size_t hbm, size_t dram,
                              const std::string& allocation = "chunked") {
  ServeOptions o;
  o.allocation = allocation;
  o.policy = parse_policy_spec(policy);
  o.capacity_blocks = hbm;
  o.cache_outputs = false;
  o.check_victims = true;
  o.tiers = {tier("dram", dram, dram_policy)};
  ReplayOptions ro;
  ro.dram_capacity_blocks = dram;
  ro.dram_policy = parse_policy_spec(dram_policy);
  ro.check_victims = true;
  ReplayResult replayed = replay(trace, oracle, o.policy, hbm, ro);
  ServeResult served = serve(trace, o);
  SCOPED_TRACE(policy + " / dram " + dram_policy + " at " + std::to_string(hbm) + " + " +
               std::to_string(dram) + ", " + allocation + " allocation");
  if (served.tiers.size() != 1) {
    ADD_FAILURE() << "no DRAM tier in the result";
    return 0;
  }
  EXPECT_EQ(served.block_accesses, replayed.block_accesses);
  EXPECT_EQ(served.hbm_hits, replayed.block_hits - replayed.dram_hits);
  EXPECT_EQ(served.tiers[0].hits, replayed.dram_hits);
  EXPECT_EQ(served.block_hits, replayed.block_hits);
  return served.tiers.empty() ? 0 : served.tiers[0].hits;
}

TEST(ServeTiers, TwoTiersWithoutInterferenceEqualReplay) {
  testing::RandomWorkloadOptions wo;
  wo.requests = 400;
  Trace trace = testing::random_workload(wo);
  space_out(trace, 10'000'000);
  Oracle oracle = compute_oracle(trace);
  size_t dram_hits = 0;
  for (const char* policy : {"lru", "fifo", "s3fifo", "sieve", "lfu"})
    // Every DRAM policy: a flat store's entries carry their depth in the prompt, which FIFO's
    // and LFU's tie-breaks and GDSF's cost read.
    for (const char* dram_policy : kDramPolicies)
      for (size_t hbm : {size_t{60}, size_t{120}})
        for (size_t dram : {size_t{30}, size_t{150}}) {
          expect_equals_replay(trace, &oracle, policy, dram_policy, hbm, dram);
          ReplayOptions ro;
          ro.dram_capacity_blocks = dram;
          dram_hits += replay(trace, &oracle, parse_policy_spec(policy), hbm, ro).dram_hits;
        }
  EXPECT_GT(dram_hits, 0u);  // the DRAM tier is exercised
}

TEST(ServeTiers, TwoTiersOnMooncakeEqualReplay) {
  const char* dir = std::getenv("KVPOLICY_DATA");
  std::string path =
      dir ? std::string(dir) + "/mooncake-conversation/conversation_trace.jsonl" : "";
  if (path.empty() || !std::filesystem::exists(path))
    GTEST_SKIP() << "KVPOLICY_DATA unset or mooncake-conversation trace absent";
  Trace trace = read_trace(path, "mooncake", {});
  infer_sessions(trace);
  space_out(trace, 3'600'000'000);  // an hour apart: the longest prefill is done long before
  size_t unique = count_unique_blocks(trace);
  uint64_t dram_hits = 0;
  // Mooncake's prompts take several chunks: chunked allocation evicts for a chunk after the
  // policy heard the whole prompt, which S3-FIFO's queues order differently from replay's
  // interleaved inserts and evictions; LRU's order is the same (docs/serve.md, "Allocation").
  for (const char* policy : {"lru", "s3fifo"})
    for (double share : {0.02, 0.1}) {
      size_t hbm = static_cast<size_t>(share * double(unique));
      dram_hits += expect_equals_replay(trace, nullptr, policy, "lru", hbm, 2 * hbm, "whole");
      if (std::string(policy) == "lru")
        expect_equals_replay(trace, nullptr, policy, "lru", hbm, 2 * hbm, "chunked");
    }
  // Every DRAM policy under LRU (the flat store's entries carry their depth).
  const size_t hbm = static_cast<size_t>(0.02 * double(unique));
  for (const char* dram_policy : kDramPolicies)
    if (std::string(dram_policy) != "lru")
      expect_equals_replay(trace, nullptr, "lru", dram_policy, hbm, 2 * hbm, "whole");
  EXPECT_GT(dram_hits, 0u);
}

TEST(ServeTiers, ALowerTierHitCostsItsTransfer) {
  // A, then B (pushes A's blocks to DRAM), then A again: its 8 blocks come from DRAM.
  Trace t;
  t.name = "abc";
  t.block_tokens = 16;
  std::vector<uint64_t> a{1, 2, 3, 4, 5, 6, 7, 8}, b{11, 12, 13, 14, 15, 16, 17, 18};
  t.add_request(0, a, 128, 1);
  t.add_request(10'000'000, b, 128, 1);
  t.add_request(20'000'000, a, 128, 1);
  CostModel::Options co;
  co.block_tokens = 16;
  CostModel cost = CostModel::linear(1, 0.1, 0, 1, 0, 131072, co);
  LinkSpec link = find_link("pcie4");
  const double read = 10e-6 + 8 * 16 * 131072.0 / 25e9;
  EXPECT_DOUBLE_EQ(link_read_time(link, 8, 16 * 131072.0, 1), read);
  EXPECT_DOUBLE_EQ(link_read_time(link, 8, 16 * 131072.0, 2), 10e-6 + (read - 10e-6) / 2);
  EXPECT_EQ(link_read_time(link, 0, 16 * 131072.0, 1), 0);
  EXPECT_DOUBLE_EQ(cost.transfer_time(8, link), read);
  for (bool overlap : {false, true}) {
    ServeOptions o;
    o.capacity_blocks = 8;
    o.cost_model = &cost;
    o.cache_outputs = false;
    o.tiers = {tier("dram", 16, "lru", "all", "pcie4")};
    o.overlap_transfers = overlap;
    RequestTimeline tl;
    ServeResult r = serve(t, o, &tl);
    ASSERT_EQ(r.tiers[0].hits, 8u);
    double compute = cost.prefill_time(1, 127);
    // A's blocks move up in place of B's, whose demotion (8 blocks written over the same link
    // at the same instant) the read queues behind (docs/serve.md, "Memory tiers").
    const double writes = 8 * 16 * 131072.0 / link.write_bytes_per_s;
    const double wait = writes + read;
    double expected = overlap ? std::max(compute, wait) : compute + wait;
    EXPECT_NEAR(tl.first_token[2] - tl.arrival[2], expected, 1e-12) << "overlap " << overlap;
    EXPECT_NEAR(r.transfer_seconds, wait, 1e-12);
    EXPECT_NEAR(r.tiers[0].link_wait_seconds, writes, 1e-12);
    EXPECT_DOUBLE_EQ(r.tiers[0].bytes_read, 8 * 16 * 131072.0);
  }
}

TEST(ServeTiers, TheRemotePoolIsShared) {
  // Round robin over two workers of 8 blocks: X on worker 0, Z on 1, Y on 0 (X goes to the
  // pool), X again on worker 1, which never held it: all 8 blocks come from the pool.
  Trace t;
  t.name = "pool";
  t.block_tokens = 16;
  std::vector<uint64_t> x{1, 2, 3, 4, 5, 6, 7, 8}, y{21, 22, 23, 24, 25, 26, 27, 28},
      z{11, 12, 13, 14, 15, 16, 17, 18};
  t.add_request(0, x, 128, 1);
  t.add_request(10'000'000, z, 128, 1);
  t.add_request(20'000'000, y, 128, 1);
  t.add_request(30'000'000, x, 128, 1);
  ServeOptions o;
  o.workers = 2;
  o.capacity_blocks = 8;
  o.cache_outputs = false;
  o.check_victims = true;
  o.tiers = {tier("remote", 64, "lru", "all", "rdma-400")};
  RequestTimeline tl;
  ServeResult r = serve(t, o, &tl);
  ASSERT_EQ(tl.worker[3], 1u);
  EXPECT_EQ(r.tiers[0].hits, 8u);
  // X's blocks written by worker 0 for Y, then Z's by worker 1 for X.
  EXPECT_EQ(r.tiers[0].blocks_written, 16u);
  EXPECT_EQ(r.hbm_hits, 0u);
}

TEST(ServeTiers, BlocksMovedBetweenTiersAddUp) {
  testing::RandomWorkloadOptions wo;
  wo.requests = 500;
  wo.seed = 3;
  Trace trace = testing::random_workload(wo);
  space_out(trace, 10'000'000);
  for (const char* ssd_admit : {"all", "presence", "seen>=2@50"}) {
    ServeOptions o;
    o.capacity_blocks = 50;
    o.cache_outputs = false;
    o.check_victims = true;
    o.tiers = {tier("dram", 40, "lru"), tier("ssd", 60, "fifo", ssd_admit, "nvme")};
    ServeResult r = serve(trace, o);
    SCOPED_TRACE(ssd_admit);
    const TierResult &dram = r.tiers[0], &ssd = r.tiers[1];
    // Every HBM victim (all computed: requests never overlap) is offered to DRAM, and every
    // DRAM victim to the SSD, each written, refused by the filter or dropped for want of room.
    EXPECT_EQ(dram.blocks_written + dram.rejected + dram.full, r.evictions);
    EXPECT_EQ(ssd.blocks_written + ssd.rejected + ssd.full, dram.evictions);
    // What a tier holds at the end: written in, less evicted and read out (exclusive), at most
    // its capacity. DRAM admits all, so no block of it is ever orphaned and dropped as a stale
    // copy; the SSD's filters may orphan blocks (tests/cache/tier_store_test.cc counts those).
    EXPECT_LE(dram.evictions + dram.blocks_read, dram.blocks_written);
    EXPECT_LE(dram.blocks_written - dram.evictions - dram.blocks_read, 40u);
    EXPECT_LE(ssd.evictions + ssd.blocks_read, ssd.blocks_written);
    EXPECT_EQ(r.hbm_hits + dram.hits + ssd.hits, r.block_hits);
    EXPECT_EQ(dram.hits, dram.blocks_read);  // no request was preempted and read twice
    EXPECT_DOUBLE_EQ(ssd.bytes_written,
                     double(ssd.blocks_written) * CostModel().kv_bytes_per_block());
    EXPECT_GT(ssd.blocks_written, 0u);
  }
}

TEST(ServeTiers, LittlesLawAndCompletionWithTiers) {
  ConversationParams cp;
  cp.sessions = 150;
  cp.session_rate = 4;
  cp.think_mean_s = 2;
  Trace trace = generate_conversation(cp, 3);
  struct Setup {
    const char* what;
    std::vector<TierSpec> tiers;
    Placement placement;
    WriteMode write;
    bool overlap;
  };
  std::vector<Setup> setups = {
      {"dram exclusive",
       {tier("dram", 600, "s3fifo")},
       Placement::kExclusive,
       WriteMode::kWriteBack,
       false},
      {"dram+ssd+remote inclusive write-through",
       {tier("dram", 900, "lru", "presence"), tier("ssd", 2000, "fifo", "seen>=2", "nvme"),
        tier("remote", 3000, "lru", "all", "rdma-400")},
       Placement::kInclusive,
       WriteMode::kWriteThrough,
       true},
      {"ssd+remote exclusive",
       {tier("ssd", 700, "sieve", "presence", "nvme"), tier("remote", 1500, "lru", "seen>=2")},
       Placement::kExclusive,
       WriteMode::kWriteBack,
       true},
      {"dram inclusive write-back",
       {tier("dram", 1200, "lru")},
       Placement::kInclusive,
       WriteMode::kWriteBack,
       false},
  };
  for (const Setup& s : setups) {
    for (const char* router : {"round_robin", "cache_aware"}) {
      for (uint32_t clients : {0u, 8u}) {
        ServeOptions o;
        o.workers = 3;
        o.router = parse_router_spec(router);
        o.capacity_blocks = 600;
        o.clients = clients;
        o.check_victims = true;
        o.tiers = s.tiers;
        o.placement = s.placement;
        o.write_mode = s.write;
        o.overlap_transfers = s.overlap;
        RequestTimeline t;
        ServeResult r = serve(trace, o, &t);
        SCOPED_TRACE(std::string(s.what) + " / " + router + " clients " + std::to_string(clients));
        double sojourn = 0;
        for (size_t i = 0; i < t.arrival.size(); ++i) {
          sojourn += t.finish[i] - t.arrival[i];
          EXPECT_LE(t.completions[i], 1u);
        }
        EXPECT_NEAR(r.total_sojourn_s, sojourn, 1e-6 * sojourn);
        EXPECT_NEAR(r.mean_in_system * r.makespan_s, sojourn, 1e-6 * sojourn);
        uint64_t done = std::accumulate(t.completions.begin(), t.completions.end(), uint64_t{0});
        EXPECT_EQ(done, r.requests);
        EXPECT_EQ(done + r.rejected, trace.size());
        uint64_t lower = 0;
        for (const TierResult& x : r.tiers) lower += x.hits;
        EXPECT_EQ(r.hbm_hits + lower, r.block_hits);
        EXPECT_GT(lower, 0u);
        // The row reads back as written.
        ServeResult back = parse_serve_result(r.to_json(), "row", 1);
        EXPECT_EQ(back.to_json(), r.to_json());
        EXPECT_EQ(back.key(), r.key());
      }
    }
  }
}

TEST(ServeTiers, OffloadMinimumDropsLowPriorityVictimsAndConservesBlocks) {
  // Half the blocks hinted at 20 (the random rule), requests far apart (all victims computed):
  // every HBM victim is written to DRAM, refused, dropped for room or skipped for its priority.
  // A minimum of 0 (or 20: no priority is below it) changes nothing against off.
  testing::RandomWorkloadOptions wo;
  wo.requests = 500;
  wo.seed = 4;
  Trace trace = testing::random_workload(wo);
  space_out(trace, 10'000'000);
  apply_hint_rules(trace, parse_hint_rules({"random=20:inf:0.5"}), 2);
  std::map<int32_t, ServeResult> rows;
  for (int32_t min : {-1, 0, 20, 30}) {
    ServeOptions o;
    o.capacity_blocks = 50;
    o.cache_outputs = false;
    o.check_victims = true;
    o.tiers = {tier("dram", 40, "lru")};
    o.offload_min_priority = min;
    ServeResult r = serve(trace, o);
    SCOPED_TRACE("minimum " + std::to_string(min));
    const TierResult& dram = r.tiers[0];
    EXPECT_EQ(dram.blocks_written + dram.rejected + dram.full + r.offload_skipped_priority,
              r.evictions);
    EXPECT_DOUBLE_EQ(dram.bytes_written,
                     double(dram.blocks_written) * CostModel().kv_bytes_per_block());
    // The row reads back as written; the minimum is part of the configuration's key.
    ServeResult back = parse_serve_result(r.to_json(), "row", 1);
    EXPECT_EQ(back.to_json(), r.to_json());
    EXPECT_EQ(back.key(), r.key());
    EXPECT_EQ(back.offload_min_priority, min);
    EXPECT_EQ(r.to_json().find("offload_") == std::string::npos, min < 0);
    rows[min] = r;
  }
  for (int32_t min : {0, 20}) {
    EXPECT_EQ(rows[min].offload_skipped_priority, 0u);
    EXPECT_EQ(rows[min].block_hits, rows[-1].block_hits);
    EXPECT_EQ(rows[min].tiers[0].blocks_written, rows[-1].tiers[0].blocks_written);
    EXPECT_NE(rows[min].key(), rows[-1].key());
  }
  EXPECT_GT(rows[30].offload_skipped_priority, 0u);
  EXPECT_LT(rows[30].tiers[0].blocks_written, rows[-1].tiers[0].blocks_written);
}

TEST(ServeTiers, ReplayOffloadMinimumByHand) {
  // Replay's two-tier mode, HBM of 2 blocks: requests of one block each, a (priority 20),
  // b (30), c, d, e (unhinted). By hand: c evicts a, d evicts b, e evicts c (tests/cache/
  // offload_priority_test.cc runs the same sequence through serve mode's cache). A block at the
  // minimum itself is demoted (TensorRT-LLM offloads priority >= minimum).
  Trace t;
  t.block_tokens = 16;
  for (BlockKey k = 1; k <= 5; ++k) {
    std::vector<BlockKey> keys = {k};
    t.add_request_keys(static_cast<Time>(k) * 1'000'000, keys, 16, 1);
  }
  std::vector<std::vector<RetentionHint>> per(5);
  per[0] = {{0, RetentionHint::kToEnd, 20, RetentionHint::kForever}};
  per[1] = {{0, RetentionHint::kToEnd, 30, RetentionHint::kForever}};
  t.set_hints(per);
  struct Case {
    int32_t min;
    uint64_t demotions, skipped;
  };
  for (const Case& c : {Case{-1, 3, 0}, Case{30, 2, 1}, Case{31, 1, 2}, Case{36, 0, 3}}) {
    ReplayOptions ro;
    ro.dram_capacity_blocks = 10;
    ro.check_victims = true;
    ro.offload_min_priority = c.min;
    ReplayResult r = replay(t, nullptr, {"lru", ""}, 2, ro);
    SCOPED_TRACE("minimum " + std::to_string(c.min));
    EXPECT_EQ(r.demotions, c.demotions);
    EXPECT_EQ(r.offload_skipped_priority, c.skipped);
    EXPECT_EQ(r.evictions, c.skipped);  // nothing left DRAM (10 blocks)
  }
}

TEST(ServeTiers, ReplayDropsBelowTheOffloadMinimumToo) {
  // Replay's two-tier mode: a minimum no priority is below changes nothing; 30 drops the
  // blocks hinted at 20 (counted among the evictions), and the row reads back as written.
  testing::RandomWorkloadOptions wo;
  wo.requests = 500;
  wo.seed = 6;
  Trace trace = testing::random_workload(wo);
  apply_hint_rules(trace, parse_hint_rules({"random=20:inf:0.5"}), 2);
  std::map<int32_t, ReplayResult> rows;
  for (int32_t min : {-1, 20, 30}) {
    ReplayOptions ro;
    ro.hints = true;
    ro.dram_capacity_blocks = 40;
    ro.check_victims = true;
    ro.offload_min_priority = min;
    rows[min] = replay(trace, nullptr, {"lru", ""}, 50, ro);
    ReplayResult back = parse_result_json(rows[min].to_json(), "row", 1);
    EXPECT_EQ(back.to_json(), rows[min].to_json());
    EXPECT_EQ(result_key(back), result_key(rows[min]));
  }
  EXPECT_EQ(rows[20].offload_skipped_priority, 0u);
  EXPECT_EQ(rows[20].block_hits, rows[-1].block_hits);
  EXPECT_EQ(rows[20].demotions, rows[-1].demotions);
  EXPECT_NE(result_key(rows[20]), result_key(rows[-1]));
  EXPECT_GT(rows[30].offload_skipped_priority, 0u);
  EXPECT_LT(rows[30].demotions, rows[-1].demotions);
}

TEST(ServeTiers, WithoutTiersTheRowIsUnchanged) {
  ConversationParams cp;
  cp.sessions = 20;
  Trace trace = generate_conversation(cp, 1);
  ServeOptions o;
  o.capacity_blocks = 300;
  ServeResult r = serve(trace, o);
  std::string row = r.to_json();
  for (const char* field : {"\"tiers\"", "hbm_hits", "tier_placement", "\"transfer_seconds\""})
    EXPECT_EQ(row.find(field), std::string::npos) << field;
}

TEST(ServeTiers, BadTierConfigurationsGetOneClearError) {
  Trace trace = generate_conversation(ConversationParams{}, 1);
  ServeOptions o;
  o.capacity_blocks = 300;
  o.tiers = {tier("ssd", 100), tier("dram", 100)};
  EXPECT_THROW(serve(trace, o), ConfigError);
  o.tiers = {tier("dram", 100)};
  o.placement = Placement::kExclusive;
  o.write_mode = WriteMode::kWriteThrough;
  EXPECT_THROW(serve(trace, o), ConfigError);
  // The minimum priority for offload: 0-100, and only for blocks HBM evicts (write-back).
  o.placement = Placement::kInclusive;
  o.offload_min_priority = 30;
  EXPECT_THROW(serve(trace, o), ConfigError);
  o.write_mode = WriteMode::kWriteBack;
  o.offload_min_priority = 101;
  EXPECT_THROW(serve(trace, o), ConfigError);
  EXPECT_THROW(parse_admission("seen>=0", "--dram-admit"), ConfigError);
  EXPECT_THROW(parse_admission("sometimes", "--dram-admit"), ConfigError);
  EXPECT_THROW(find_link("pcie9"), ConfigError);
  EXPECT_THROW(find_link("custom:-1"), ConfigError);
  EXPECT_DOUBLE_EQ(find_link("custom:12.5:50").read_bytes_per_s, 12.5e9);
}

// The router's view of the lower tiers (ClusterView::lower_tier_prefix_blocks): dynamo credits
// DRAM blocks after a worker's HBM prefix when HBM is small and DRAM holds what it dropped, and
// only then (docs/routers.md, "dynamo").
TEST(ServeTiers, DynamoSeesTheWorkersLowerTiers) {
  ConversationParams cp;
  cp.sessions = 60;
  cp.session_rate = 6;
  cp.think_mean_s = 2;
  Trace trace = generate_conversation(cp, 11);
  auto credited = [&](const std::string& router, bool with_dram) {
    ServeOptions o;
    o.workers = 2;
    o.router = parse_router_spec(router);
    o.capacity_blocks = 400;
    if (with_dram) o.tiers = {tier("dram", 20000)};
    ServeResult r = serve(trace, o);
    for (auto& [name, value] : r.router_stats)
      if (name == "tier_credited_decisions") return value;
    ADD_FAILURE() << "no tier_credited_decisions";
    return -1.0;
  };
  EXPECT_GT(credited("dynamo", true), 0);
  EXPECT_EQ(credited("dynamo", false), 0);
  EXPECT_EQ(credited("dynamo:host_cache_hit_weight=0,disk_cache_hit_weight=0", true), 0);
}

}  // namespace
}  // namespace kvpolicy
