#include "kvpolicy/sim/tail.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "kvpolicy/trace/generators.h"

namespace kvpolicy {
namespace {

TEST(Tail, NearestRankPercentiles) {
  std::vector<double> ten(10);
  std::iota(ten.begin(), ten.end(), 1.0);           // 1..10
  EXPECT_EQ(percentile_nearest_rank(ten, 50), 5);   // rank ceil(5) = 5
  EXPECT_EQ(percentile_nearest_rank(ten, 90), 9);   // rank 9, not rounded up to 10
  EXPECT_EQ(percentile_nearest_rank(ten, 95), 10);  // rank ceil(9.5) = 10
  EXPECT_EQ(percentile_nearest_rank(ten, 99), 10);
  EXPECT_EQ(percentile_nearest_rank(ten, 100), 10);
  EXPECT_EQ(percentile_nearest_rank(ten, 0), 1);
  std::vector<double> hundred(100);
  std::iota(hundred.begin(), hundred.end(), 1.0);
  EXPECT_EQ(percentile_nearest_rank(hundred, 90), 90);
  EXPECT_EQ(percentile_nearest_rank(hundred, 99), 99);
  // The textbook example: 15, 20, 35, 40, 50.
  std::vector<double> five = {15, 20, 35, 40, 50};
  EXPECT_EQ(percentile_nearest_rank(five, 30), 20);  // rank ceil(1.5) = 2
  EXPECT_EQ(percentile_nearest_rank(five, 40), 20);  // rank 2
  EXPECT_EQ(percentile_nearest_rank(five, 50), 35);  // rank ceil(2.5) = 3
  EXPECT_EQ(percentile_nearest_rank(std::vector<double>{}, 50), 0);
}

TEST(Tail, TelAndSloOnHandMadeValues) {
  std::vector<double> ttft = {300, 100, 250, 200, 201};
  EXPECT_DOUBLE_EQ(tail_excess_latency(ttft, 200), 100 + 50 + 1);
  EXPECT_DOUBLE_EQ(tail_excess_latency(ttft, 0), 1051);  // xi = 0: the total
  TailMetrics m = tail_metrics(ttft, 200, 200);
  EXPECT_EQ(m.requests, 5u);
  EXPECT_DOUBLE_EQ(m.mean_ms, 1051.0 / 5);
  EXPECT_EQ(m.p50_ms, 201);  // sorted 100 200 201 250 300, rank 3
  EXPECT_EQ(m.p90_ms, 300);  // rank ceil(4.5) = 5
  EXPECT_DOUBLE_EQ(m.tel_ms, 151);
  // Over the SLO means strictly above it: 201, 250, 300.
  EXPECT_DOUBLE_EQ(m.slo_violation_rate, 3.0 / 5);
}

TEST(Tail, RelativeChange) {
  EXPECT_DOUBLE_EQ(relative_change(75, 100), -0.25);
  EXPECT_DOUBLE_EQ(relative_change(0, 0), 0);
  EXPECT_TRUE(std::isnan(relative_change(1, 0)));
}

// Three requests through a large LRU cache with TTFT = 10 ms + 0.1 ms per uncached token.
TEST(Tail, ReplayTtftFromTheCostModel) {
  Trace t;
  t.block_tokens = 16;
  std::vector<uint64_t> a = {1, 2, 3, 4}, b = {1, 2, 3, 4, 5, 6}, c = {7, 8, 9, 10, 11};
  t.add_request(0, a, 64, 10, 0, 1);     // all 64 tokens uncached: 10 + 6.4
  t.add_request(1000, b, 96, 10, 0, 2);  // 4 blocks cached, 32 uncached: 10 + 3.2
  t.add_request(2000, c, 70, 10, 1, 1);  // 70 uncached (partial last block): 10 + 7
  t.add_request(3000, c, 70, 10, 2, 1);  // all 5 blocks cached = 70 tokens: one token, 10.1
  CostModel cost = CostModel::make("linear", "", "a_ms=10,b_ms=0.1");
  ReplayOptions opts;
  opts.cost_model = &cost;
  opts.xi_ms = 15;
  opts.slo_ms = 16;
  std::vector<double> ttft;
  opts.ttft_ms = &ttft;
  ReplayResult r = replay(t, nullptr, PolicySpec{"lru", ""}, 100, opts);
  ASSERT_EQ(ttft.size(), 4u);
  EXPECT_NEAR(ttft[0], 16.4, 1e-9);
  EXPECT_NEAR(ttft[1], 13.2, 1e-9);
  EXPECT_NEAR(ttft[2], 17.0, 1e-9);
  EXPECT_NEAR(ttft[3], 10.1, 1e-9);
  EXPECT_NEAR(r.ttft_mean_ms, (16.4 + 13.2 + 17 + 10.1) / 4, 1e-9);
  EXPECT_NEAR(r.ttft_p50_ms, 13.2, 1e-9);  // sorted 10.1 13.2 16.4 17, rank 2
  EXPECT_NEAR(r.ttft_p90_ms, 17.0, 1e-9);
  EXPECT_NEAR(r.tel_ms, 1.4 + 2.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.slo_violation_rate, 0.5);  // 16.4 and 17 are over 16
  EXPECT_EQ(r.cost_model, cost.label());
  std::string json = r.to_json();
  for (const char* field : {"\"ttft_p50_ms\":", "\"ttft_p90_ms\":", "\"ttft_p95_ms\":",
                            "\"ttft_p99_ms\":", "\"ttft_mean_ms\":", "\"tel_ms\":", "\"xi_ms\":15",
                            "\"slo_ms\":16,", "\"slo_violation_rate\":", "\"block_hit_rate\":"})
    EXPECT_NE(json.find(field), std::string::npos) << field;
  EXPECT_EQ(json.back(), '}');
}

TEST(Tail, ReplayDefaultsToTheDefaultPreset) {
  Trace t;
  t.block_tokens = 16;
  std::vector<uint64_t> a = {1, 2};
  t.add_request(0, a, 32, 1, 0, 1);
  ReplayResult r = replay(t, nullptr, PolicySpec{"lru", ""}, 10);
  EXPECT_EQ(r.cost_model, "llama-3.1-8b@a100-80gb");
  EXPECT_DOUBLE_EQ(r.ttft_p50_ms, CostModel().prefill_time(32, 0) * 1e3);
}

TEST(Tail, StudyRelativeChangesMatchItsRuns) {
  ConversationParams p;
  p.sessions = 60;
  p.session_rate = 0.5;
  p.turns_mean = 3;
  p.think_mean_s = 20;
  Trace trace = generate_conversation(p, 7);
  TailStudyOptions o;
  o.capacities = parse_capacity_list("0.05,0.2");
  o.xi_ms = {0, 100};
  o.figure_xi_ms = 100;
  TailStudy s = run_tail_study(trace, o);
  ASSERT_EQ(s.changes.size(), 4u);
  ASSERT_EQ(s.figure.size(), 2u);
  // xi = 0 makes T-LRU exactly LRU.
  for (size_t c = 0; c < 2; ++c) {
    const TailChange& zero = s.changes[c * 2];
    EXPECT_EQ(zero.xi_ms, 0);
    EXPECT_EQ(zero.p90_vs_lru, 0);
    EXPECT_EQ(zero.p99_vs_lru, 0);
    EXPECT_EQ(zero.slo_vs_lru, 0);
    EXPECT_EQ(zero.tel_vs_lru, 0);
  }
  // Every change is recomputed from the runs it compares.
  for (size_t c = 0; c < 2; ++c) {
    const auto& row = s.figure[c];
    ASSERT_EQ(row.size(), o.figure_policies.size());
    const ReplayResult& lru = s.runs[row[0]];
    const ReplayResult& thr = s.runs[row[1]];
    const ReplayResult& tlru = s.runs[row[2]];
    EXPECT_EQ(lru.policy, "lru");
    EXPECT_EQ(thr.policy, "threshold_lru");
    EXPECT_EQ(tlru.policy, "tlru");
    EXPECT_EQ(tlru.params, "xi_ms=100");
    EXPECT_EQ(s.runs[row[5]].policy, "tail_belady");
    const TailChange& ch = s.changes[c * 2 + 1];
    EXPECT_EQ(ch.capacity_blocks, lru.capacity_blocks);
    EXPECT_DOUBLE_EQ(ch.p95_vs_lru, relative_change(tlru.ttft_p95_ms, lru.ttft_p95_ms));
    EXPECT_DOUBLE_EQ(ch.p90_vs_threshold, relative_change(tlru.ttft_p90_ms, thr.ttft_p90_ms));
    EXPECT_DOUBLE_EQ(ch.slo_vs_lru,
                     relative_change(tlru.slo_violation_rate, lru.slo_violation_rate));
    EXPECT_NEAR(ch.tel_vs_lru, relative_change(tlru.tel_ms, lru.tel_ms), 1e-9);
  }
  std::string json = s.to_json();
  EXPECT_NE(json.find("\"changes\":["), std::string::npos);
  EXPECT_NE(json.find("\"figure\":["), std::string::npos);
}

}  // namespace
}  // namespace kvpolicy
