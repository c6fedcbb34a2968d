// Trace characterization on hand-made traces whose answers are worked out below.
#include "kvpolicy/trace/characterize.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace kvpolicy {
namespace {

// Four requests (B = 16, times in seconds), raw ids chained into prefix keys a, ab, abc, abcd:
//   r0  t=0   user 1  text turn 1  [a b]       32 tokens  session 0
//   r1  t=10  user 1  text turn 2  [a b c]     40 tokens  session 0
//   r2  t=30  user 2  file turn 1  [a]         16 tokens  session 1
//   r3  t=40  user 1  text turn 3  [a b c d]   64 tokens  session 0
// Hits of an infinite cache: r1 a b, r2 a, r3 a b c = 6 of 10 block accesses.
// Reuses (from the access before, of that access's category):
//   text-1 (r0): a after 10 s, b after 10 s            -> 2 of 2 reused
//   text-2 (r1): a after 20 s, b and c after 30 s      -> 3 of 3 reused
//   file-1 (r2): a after 10 s                          -> 1 of 1
//   text-3 (r3): none                                  -> 0 of 4
Trace hand_trace() {
  Trace t;
  t.name = "hand";
  t.block_tokens = 16;
  t.category_names = {"text", "file"};
  auto add = [&](double s, std::vector<uint64_t> ids, uint32_t tokens, uint32_t user, uint32_t turn,
                 CategoryId type, SessionId session) {
    t.add_request(static_cast<Time>(s * kMicrosPerSecond), ids, tokens, 8, session, turn, type,
                  user);
  };
  add(0, {1, 2}, 32, 1, 1, 0, 0);
  add(10, {1, 2, 3}, 40, 1, 2, 0, 0);
  add(30, {1}, 16, 2, 1, 1, 1);
  add(40, {1, 2, 3, 4}, 64, 1, 3, 0, 0);
  return t;
}

const CategoryStats* find(const Characterization& c, const std::string& name) {
  for (auto& k : c.categories)
    if (k.name == name) return &k;
  return nullptr;
}

TEST(Characterize, HandTraceNumbers) {
  Characterization c = characterize(hand_trace());
  EXPECT_EQ(c.requests, 4u);
  EXPECT_EQ(c.block_accesses, 10u);
  EXPECT_EQ(c.unique_blocks, 4u);
  EXPECT_DOUBLE_EQ(c.duration_s, 40);
  EXPECT_DOUBLE_EQ(c.ideal_hit_rate, 0.6);
  // Token hits: r1 min(32, 40) + r2 16 + r3 48 = 96 of 152 prompt tokens.
  EXPECT_DOUBLE_EQ(c.ideal_token_hit_rate, 96.0 / 152.0);

  // Reuses per block a:3 b:2 abc:1 abcd:0; the top 10 % of 4 blocks is 1 block: 3 of 6.
  EXPECT_DOUBLE_EQ(c.top10_reuse_share, 0.5);
  EXPECT_DOUBLE_EQ(c.reused_block_share, 0.75);
  ASSERT_FALSE(c.skew_curve.empty());
  EXPECT_DOUBLE_EQ(c.skew_curve.front().second, 0);
  EXPECT_DOUBLE_EQ(c.skew_curve.back().second, 1);
  for (size_t i = 1; i < c.skew_curve.size(); ++i)
    EXPECT_GE(c.skew_curve[i].second, c.skew_curve[i - 1].second);

  // Users: user 1 gets 5 hits, user 2 one; r2's a (last user 1) and r3's a (last user 2) cross.
  EXPECT_EQ(c.users, 2u);
  EXPECT_DOUBLE_EQ(c.top10_user_hit_share, 5.0 / 6.0);
  EXPECT_DOUBLE_EQ(c.cross_user_hit_share, 2.0 / 6.0);

  // Turns: r0, r2 single (1 hit); r1, r3 multi (5 hits).
  EXPECT_EQ(c.single_turn_requests, 2u);
  EXPECT_EQ(c.multi_turn_requests, 2u);
  EXPECT_EQ(c.single_turn_hits, 1u);
  EXPECT_EQ(c.multi_turn_hits, 5u);
  EXPECT_DOUBLE_EQ(c.multi_turn_hit_share, 5.0 / 6.0);
  EXPECT_TRUE(c.has_sessions);
  EXPECT_EQ(c.sessions, 2u);
  EXPECT_EQ(c.turns_per_session.p50, 1);
  EXPECT_EQ(c.turns_per_session.max, 3);

  ASSERT_EQ(c.categories.size(), 4u);
  const CategoryStats* t1 = find(c, "text-1");
  const CategoryStats* t2 = find(c, "text-2");
  const CategoryStats* t3 = find(c, "text-3");
  const CategoryStats* f1 = find(c, "file-1");
  ASSERT_TRUE(t1 && t2 && t3 && f1);
  EXPECT_EQ(t1->block_accesses, 2u);
  EXPECT_EQ(t1->reused, 2u);
  EXPECT_DOUBLE_EQ(t1->reuse_share, 1);
  EXPECT_DOUBLE_EQ(t1->fit.mean_s, 10);
  EXPECT_DOUBLE_EQ(t1->fit.rate_per_s, 0.1);
  // Two reuses at 10 s: the sample CDF steps from 0 to 1 at 10, the fit is 1 - 1/e there.
  EXPECT_NEAR(t1->fit.ks, 1 - std::exp(-1.0), 1e-12);
  EXPECT_EQ(t2->reused, 3u);
  EXPECT_NEAR(t2->fit.mean_s, 80.0 / 3, 1e-9);
  // Sample {20, 30, 30}, rate 3/80: the largest gap is just below 20 s: F(20) - 0.
  EXPECT_NEAR(t2->fit.ks, 1 - std::exp(-20 * 3.0 / 80), 1e-12);
  EXPECT_EQ(t2->reuse_time_s.p50, 30);
  EXPECT_EQ(t3->block_accesses, 4u);
  EXPECT_EQ(t3->reused, 0u);
  EXPECT_EQ(t3->fit.samples, 0u);
  EXPECT_EQ(f1->hits, 1u);
  EXPECT_EQ(f1->reused, 1u);
  EXPECT_DOUBLE_EQ(f1->reuse_time_s.max, 10);

  // All reuses {10, 10, 10, 20, 30, 30}: nearest-rank p50 = 3rd = 10, p90 = 6th = 30.
  EXPECT_EQ(c.all.reused, 6u);
  EXPECT_DOUBLE_EQ(c.all.reuse_time_s.p50, 10);
  EXPECT_DOUBLE_EQ(c.all.reuse_time_s.p90, 30);
  EXPECT_NEAR(c.all.fit.mean_s, 110.0 / 6, 1e-9);

  // Types: text 3 of 4 requests, 2 of them multi-turn, 5 of 6 hits.
  ASSERT_EQ(c.types.size(), 2u);
  EXPECT_EQ(c.types[0].name, "text");
  EXPECT_DOUBLE_EQ(c.types[0].request_share, 0.75);
  EXPECT_DOUBLE_EQ(c.types[0].multi_turn_share, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(c.types[0].hit_share, 5.0 / 6.0);
  EXPECT_DOUBLE_EQ(c.types[1].hit_share, 1.0 / 6.0);

  // Lifespans of reused blocks: a 0..40, ab 0..40, abc 10..40 -> {30, 40, 40}.
  EXPECT_DOUBLE_EQ(c.lifespan_s.p50, 40);
  EXPECT_DOUBLE_EQ(c.lifespan_s.p90, 40);
  EXPECT_DOUBLE_EQ(c.lifespan_s.max, 40);

  // Live blocks after each request (seen, and used again later): 2, 3, 3, 0.
  EXPECT_EQ(c.peak_live_blocks, 3u);
  EXPECT_DOUBLE_EQ(c.mean_live_blocks, 2);
  EXPECT_DOUBLE_EQ(c.peak_live_gb, 3 * 16 * 131072 / 1e9);
  uint64_t last = 0;
  for (auto& p : c.capacity) last = p.live_blocks;
  EXPECT_EQ(last, 0u);
}

TEST(Characterize, TurnBucketsMergeLaterTurns) {
  CharacterizeOptions o;
  o.turn_buckets = 2;
  o.kv_bytes_per_token = 1000;
  Characterization c = characterize(hand_trace(), o);
  const CategoryStats* later = find(c, "text-2+");
  ASSERT_NE(later, nullptr);
  EXPECT_EQ(later->block_accesses, 7u);  // r1 and r3
  EXPECT_EQ(later->reused, 3u);
  EXPECT_EQ(c.categories.size(), 3u);
  EXPECT_DOUBLE_EQ(c.peak_live_gb, 3 * 16 * 1000 / 1e9);
}

TEST(Characterize, ExponentialReuseTimesFitWell) {
  // 400 one-block prompts, each repeated once after the i-th quantile of an exponential with
  // mean 60 s: the fit recovers the mean and the KS distance is about 1/(2n).
  Trace t;
  const int n = 400;
  std::vector<std::pair<Time, uint64_t>> events;
  for (int i = 0; i < n; ++i) {
    double gap = -60 * std::log(1 - (i + 0.5) / n);
    Time start = Time(i) * 1000 * kMicrosPerSecond;  // far apart: no other reuse
    events.push_back({start, uint64_t(i + 1)});
    events.push_back({start + static_cast<Time>(gap * kMicrosPerSecond), uint64_t(i + 1)});
  }
  std::sort(events.begin(), events.end());
  for (auto& [time, id] : events) t.add_request(time, std::vector<uint64_t>{id}, 16, 1);
  Characterization c = characterize(t);
  EXPECT_EQ(c.all.fit.samples, uint64_t(n));
  EXPECT_NEAR(c.all.fit.mean_s, 60, 0.6);
  EXPECT_LT(c.all.fit.ks, 0.01);
  // And a constant reuse time is a poor exponential: KS = 1 - 1/e.
  Trace k;
  for (int i = 0; i < 50; ++i) {
    k.add_request(Time(i) * 100 * kMicrosPerSecond, std::vector<uint64_t>{uint64_t(i)}, 16, 1);
    k.add_request(Time(i) * 100 * kMicrosPerSecond + 5 * kMicrosPerSecond,
                  std::vector<uint64_t>{uint64_t(i)}, 16, 1);
  }
  EXPECT_NEAR(characterize(k).all.fit.ks, 1 - std::exp(-1.0), 1e-9);
  EXPECT_FALSE(characterize(k).has_sessions);
}

TEST(Characterize, JsonIsValidAndCsvFilesAreWritten) {
  Characterization c = characterize(hand_trace());
  simdjson::dom::parser parser;
  simdjson::padded_string json(to_json(c));
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS);
  double ideal = 0;
  ASSERT_EQ(doc["ideal_hit_rate"].get_double().get(ideal), simdjson::SUCCESS);
  EXPECT_DOUBLE_EQ(ideal, 0.6);
  simdjson::dom::array cats;
  ASSERT_EQ(doc["categories"].get_array().get(cats), simdjson::SUCCESS);
  EXPECT_EQ(cats.size(), 4u);

  const char* tmp = std::getenv("KVPOLICY_TEST_TMP");
  std::filesystem::path dir =
      std::filesystem::path(tmp ? tmp : std::filesystem::temp_directory_path().string()) /
      "characterize_csv";
  write_csv(c, dir.string());
  for (const char* f : {"summary.csv", "categories.csv", "reuse_cdf.csv", "lifespan_cdf.csv",
                        "skew.csv", "capacity.csv", "types.csv"}) {
    std::ifstream in(dir / f);
    ASSERT_TRUE(in.good()) << f;
    std::string header, row;
    std::getline(in, header);
    EXPECT_TRUE(std::getline(in, row).good()) << f << " has no rows";
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kvpolicy
