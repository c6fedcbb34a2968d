#include "kvpolicy/sim/mrc.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

// Every field the one-pass curve claims to share with a replay.
void expect_same(const ReplayResult& curve, const ReplayResult& replayed) {
  EXPECT_EQ(curve.capacity_blocks, replayed.capacity_blocks);
  EXPECT_EQ(curve.block_hits, replayed.block_hits);
  EXPECT_EQ(curve.token_hits, replayed.token_hits);
  EXPECT_EQ(curve.evictions, replayed.evictions);
  EXPECT_EQ(curve.uncached_blocks, replayed.uncached_blocks);
  EXPECT_EQ(curve.block_accesses, replayed.block_accesses);
  EXPECT_EQ(curve.prompt_tokens, replayed.prompt_tokens);
  EXPECT_EQ(curve.block_hit_rate, replayed.block_hit_rate);
  EXPECT_EQ(curve.token_hit_rate, replayed.token_hit_rate);
  EXPECT_EQ(curve.cost_model, replayed.cost_model);
  // The same hits per request through the same function: bit-identical, not close.
  EXPECT_EQ(curve.ttft_mean_ms, replayed.ttft_mean_ms);
  EXPECT_EQ(curve.ttft_p50_ms, replayed.ttft_p50_ms);
  EXPECT_EQ(curve.ttft_p90_ms, replayed.ttft_p90_ms);
  EXPECT_EQ(curve.ttft_p99_ms, replayed.ttft_p99_ms);
  EXPECT_EQ(curve.tel_ms, replayed.tel_ms);
  EXPECT_EQ(curve.slo_violation_rate, replayed.slo_violation_rate);
}

void expect_curve_equals_replays(const Trace& trace, const std::vector<size_t>& capacities,
                                 const ReplayOptions& opts = {}) {
  auto distances = lru_stack_distances(trace);
  auto curve = lru_curve(trace, distances, capacities, opts);
  ASSERT_EQ(curve.size(), capacities.size());
  for (size_t i = 0; i < capacities.size(); ++i) {
    SCOPED_TRACE("capacity " + std::to_string(capacities[i]));
    expect_same(curve[i], replay(trace, nullptr, {"lru", ""}, capacities[i], opts));
  }
}

TEST(Mrc, LruCurveEqualsReplaysOnRandomWorkloads) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Trace t = testing::random_workload({.seed = seed, .requests = 400});
    size_t unique = count_unique_blocks(t);
    uint32_t longest = testing::longest_prompt(t);
    // Below the longest prompt (replay leaves blocks uncached), around it, and up to everything.
    std::vector<size_t> caps = {1, 2, 3, 5, longest / 2 + 1, longest, longest + 1};
    for (size_t c = 8; c < unique + 20; c += std::max<size_t>(1, unique / 17)) caps.push_back(c);
    caps.push_back(unique);
    caps.push_back(unique * 3);
    expect_curve_equals_replays(t, caps);
  }
}

TEST(Mrc, LruCurveEqualsReplaysWithLongPromptsAndOtherCostModel) {
  // Long conversations and small caches: many requests longer than the capacity.
  Trace t = testing::random_workload(
      {.seed = 21, .requests = 300, .max_new_blocks = 9, .max_session_blocks = 120});
  ReplayOptions opts;
  CostModel cost = CostModel::make("qwen2.5-32b", "h100");
  opts.cost_model = &cost;
  opts.xi_ms = 50;
  opts.slo_ms = 80;
  expect_curve_equals_replays(t, {1, 4, 7, 16, 33, 64, 100, 250, 1000}, opts);
}

TEST(Mrc, UncachedBlocksWhenARequestExceedsTheCapacity) {
  Trace t;
  t.block_tokens = 4;
  std::vector<uint64_t> ids = {1, 2, 3, 4, 5, 6};
  t.add_request(0, ids, 22, 1);  // last block half full: 22 tokens
  t.add_request(1, ids, 22, 1);
  auto d = lru_stack_distances(t);
  // Second request: block 0 is the most recent (distance 1), block 5 the least (6).
  EXPECT_EQ(d, (std::vector<uint32_t>{kColdMiss, kColdMiss, kColdMiss, kColdMiss, kColdMiss,
                                      kColdMiss, 1, 2, 3, 4, 5, 6}));
  std::vector<size_t> caps = {4, 6};
  auto curve = lru_curve(t, d, caps);
  EXPECT_EQ(curve[0].block_hits, 4u);
  EXPECT_EQ(curve[0].uncached_blocks, 4u);  // 2 per request
  EXPECT_EQ(curve[1].token_hits, 22u);      // the last block counts its 2 tokens
  expect_curve_equals_replays(t, {1, 2, 4, 5, 6, 7});
}

TEST(Mrc, ChainedKeysAreRequired) {
  Trace t;
  std::vector<BlockKey> repeated = {11, 12, 11};
  t.add_request_keys(0, repeated, 48, 1);
  EXPECT_THROW(lru_stack_distances(t), Error);
  Trace u;  // key 12 follows 11 once and stands alone once: not a prefix chain
  std::vector<BlockKey> a = {11, 12}, b = {12};
  std::vector<BlockKey> c = {13, 12};
  u.add_request_keys(0, a, 32, 1);
  u.add_request_keys(1, b, 16, 1);
  u.add_request_keys(2, c, 32, 1);
  EXPECT_THROW(lru_stack_distances(u), Error);
}

// A hand-made trace whose LRU hit rates are worked out by hand: prompt A = {1,2,3,4} four
// times, with B = {5,6,7,8} (no shared prefix) in between.
Trace alternating() {
  Trace t;
  std::vector<uint64_t> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  for (int k = 0; k < 4; ++k) {
    t.add_request(2 * k, a, 64, 1);
    t.add_request(2 * k + 1, b, 64, 1);
  }
  return t;
}

TEST(Mrc, TargetHitRateOnAHandMadeTrace) {
  Trace t = alternating();  // 32 accesses, 8 unique: at most 24 hits (75 %)
  auto d = lru_stack_distances(t);
  // Every reuse is at distance 5..8 (the other prompt's 4 blocks in between): block i of a
  // prompt has 4 + i + 1 blocks at least as recent. At 5 blocks only first blocks hit (6 of
  // 32); at 8 everything reused hits.
  EXPECT_EQ(lru_capacity_for_hit_rate(d, 0.75), 8u);
  EXPECT_EQ(lru_capacity_for_hit_rate(d, 0.76), std::nullopt);
  EXPECT_EQ(lru_capacity_for_hit_rate(d, 6.0 / 32), 5u);
  EXPECT_EQ(lru_capacity_for_hit_rate(d, 7.0 / 32), 6u);  // 12 hits at 6
  EXPECT_EQ(lru_capacity_for_hit_rate(d, 12.0 / 32), 6u);
  EXPECT_EQ(lru_capacity_for_hit_rate(d, 13.0 / 32), 7u);
  EXPECT_EQ(lru_capacity_for_hit_rate(d, 0.0), 1u);
  std::vector<size_t> caps = {4, 5, 6, 7, 8};
  auto curve = lru_curve(t, d, caps);
  EXPECT_EQ(curve[0].block_hits, 0u);
  EXPECT_EQ(curve[1].block_hits, 6u);
  EXPECT_EQ(curve[2].block_hits, 12u);
  EXPECT_EQ(curve[3].block_hits, 18u);
  EXPECT_EQ(curve[4].block_hits, 24u);
  EXPECT_THROW(lru_capacity_for_hit_rate(d, 1.5), ConfigError);
}

TEST(Mrc, BisectionFindsTheSmallestCapacityOfAMonotoneCurve) {
  Trace t = alternating();
  // A curve sampled at 2 and 8 only: the search must replay in between and find 6 for 12 hits.
  std::vector<ReplayResult> curve = {replay(t, nullptr, {"lru", ""}, 2),
                                     replay(t, nullptr, {"lru", ""}, 8)};
  TargetSearch s = search_capacity_for_hit_rate(t, nullptr, {"lru", ""}, curve, 12.0 / 32, {}, 0);
  ASSERT_TRUE(s.capacity_blocks);
  EXPECT_EQ(*s.capacity_blocks, 6u);
  EXPECT_DOUBLE_EQ(s.block_hit_rate, 12.0 / 32);
  EXPECT_GT(s.replays, 0u);
  EXPECT_FALSE(s.non_monotone);
  // Out of reach: none of the points gets there.
  TargetSearch none = search_capacity_for_hit_rate(t, nullptr, {"lru", ""}, curve, 0.9, {}, 0);
  EXPECT_FALSE(none.capacity_blocks);
  EXPECT_DOUBLE_EQ(none.block_hit_rate, 0.75);
  // Reached at the first point: bracketed from 0 blocks.
  TargetSearch first = search_capacity_for_hit_rate(t, nullptr, {"lru", ""},
                                                    std::span(curve).subspan(1), 6.0 / 32, {}, 0);
  EXPECT_EQ(first.capacity_blocks, 5u);
}

TEST(Mrc, BisectionAgreesWithTheExactLruAnswerOnRandomWorkloads) {
  Trace t = testing::random_workload({.seed = 5, .requests = 400});
  auto d = lru_stack_distances(t);
  size_t unique = count_unique_blocks(t);
  std::vector<size_t> caps = {unique / 50 + 1, unique / 10, unique / 3, unique};
  auto curve = lru_curve(t, d, caps);
  for (double target : {0.1, 0.2, 0.3}) {
    SCOPED_TRACE(target);
    auto exact = lru_capacity_for_hit_rate(d, target);
    TargetSearch s = search_capacity_for_hit_rate(t, nullptr, {"lru", ""}, curve, target, {}, 0);
    ASSERT_TRUE(exact);
    EXPECT_EQ(s.capacity_blocks, exact);
  }
}

TEST(Mrc, LruCurveEqualsReplaysOnMooncake) {
  const char* dir = std::getenv("KVPOLICY_DATA");
  if (!dir) GTEST_SKIP() << "KVPOLICY_DATA is not set";
  std::string path = std::string(dir) + "/mooncake-conversation/conversation_trace.jsonl";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
  Trace trace = read_trace(path, "mooncake", {});
  size_t unique = count_unique_blocks(trace);
  std::vector<size_t> caps;
  for (double f : {0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0})
    caps.push_back(std::max<size_t>(1, size_t(f * unique)));
  caps.push_back(7);  // far below the longest prompt
  expect_curve_equals_replays(trace, caps);
  auto d = lru_stack_distances(trace);
  auto c30 = lru_capacity_for_hit_rate(d, 0.3);
  ASSERT_TRUE(c30);
  EXPECT_GE(replay(trace, nullptr, {"lru", ""}, *c30).block_hit_rate, 0.3);
  EXPECT_LT(replay(trace, nullptr, {"lru", ""}, *c30 - 1).block_hit_rate, 0.3);
}

}  // namespace
}  // namespace kvpolicy
