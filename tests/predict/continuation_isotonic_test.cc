// LPC's continuation classifier, second pass of issue 36 (docs/results/lpc.md, 4.5): isotonic
// calibration against a hand-computed pool-adjacent-violators fit, the turn-quantile tracker and
// feature tokens on hand-made turns, and model files with the isotonic map and the new flag
// (and version-1 and version-2 files, written as older builds wrote them, still load).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "../trace/trace_test_util.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/types.h"
#include "kvpolicy/predict/continuation.h"
#include "kvpolicy/predict/continuation_calibration.h"

namespace kvpolicy {
namespace {

using testing::read_bytes;
using testing::temp_path;
using testing::write_file;

TEST(IsotonicCalibration, MatchesAHandComputedPoolAdjacentViolatorsFit) {
  // Labels 0 1 0 0 1 1 at scores .1 ... .6: [0], then 1 and the two 0s pool to 1/3, then [1, 1]
  // (a mean of 1 is not below the previous 1: those stay two blocks of one value each).
  const std::vector<double> p = {0.6, 0.1, 0.3, 0.2, 0.5, 0.4};  // order does not matter
  const std::vector<uint8_t> y = {1, 0, 0, 1, 1, 0};
  const IsotonicCalibration c = IsotonicCalibration::fit(p, y);
  EXPECT_EQ(c.x, (std::vector<double>{0.1, 0.2, 0.4, 0.5, 0.6}));
  ASSERT_EQ(c.y.size(), 5u);
  EXPECT_DOUBLE_EQ(c.y[0], 0);
  EXPECT_DOUBLE_EQ(c.y[1], 1.0 / 3);
  EXPECT_DOUBLE_EQ(c.y[2], 1.0 / 3);
  EXPECT_DOUBLE_EQ(c.y[3], 1);
  EXPECT_DOUBLE_EQ(c.y[4], 1);
  EXPECT_DOUBLE_EQ(c.apply(0.3), 1.0 / 3);   // inside the pooled block
  EXPECT_DOUBLE_EQ(c.apply(0.15), 1.0 / 6);  // between blocks: linear
  EXPECT_DOUBLE_EQ(c.apply(0.45), 2.0 / 3);
  EXPECT_DOUBLE_EQ(c.apply(0.0), 0);  // outside: the end values
  EXPECT_DOUBLE_EQ(c.apply(1.0), 1);
  EXPECT_TRUE(c.valid());
  // Monotone output on a grid.
  double last = -1;
  for (int i = 0; i <= 100; ++i) {
    const double v = c.apply(i / 100.0);
    EXPECT_GE(v, last);
    last = v;
  }
  // Ties are one block: two 0.5s with labels 1 and 0 map to 1/2.
  const IsotonicCalibration tie =
      IsotonicCalibration::fit(std::vector<double>{0.5, 0.5}, std::vector<uint8_t>{1, 0});
  EXPECT_EQ(tie.x, std::vector<double>{0.5});
  EXPECT_DOUBLE_EQ(tie.apply(0.9), 0.5);
  EXPECT_THROW(IsotonicCalibration::fit(std::vector<double>{}, std::vector<uint8_t>{}), Error);
  EXPECT_THROW(IsotonicCalibration::fit(std::vector<double>{0.5}, std::vector<uint8_t>{1, 0}),
               Error);
  EXPECT_TRUE(IsotonicCalibration{}.identity());
  EXPECT_EQ(IsotonicCalibration{}.apply(0.37), 0.37);
}

TEST(IsotonicCalibration, ACalibratedInputStaysPut) {
  // At score 0.2 one label in 5 is 1, at 0.6 three in 5, at 0.8 four in 5: already calibrated.
  std::vector<double> p;
  std::vector<uint8_t> y;
  for (auto [score, ones] : {std::pair{0.2, 1}, {0.6, 3}, {0.8, 4}})
    for (int i = 0; i < 5; ++i) {
      p.push_back(score);
      y.push_back(i < ones);
    }
  const IsotonicCalibration c = IsotonicCalibration::fit(p, y);
  for (double s : {0.2, 0.6, 0.8, 0.4, 0.7}) EXPECT_NEAR(c.apply(s), s, 1e-12) << s;
}

TEST(TurnQuantile, OnlineQuantileAndFeatureTokens) {
  TurnQuantileTracker t;
  EXPECT_DOUBLE_EQ(t.quantile(3), 0.5);     // nothing seen
  EXPECT_DOUBLE_EQ(t.observe(1), 0.5);      // {1}: half of itself
  EXPECT_DOUBLE_EQ(t.observe(2), 0.75);     // {1, 2}: (1 + 0.5) / 2
  EXPECT_DOUBLE_EQ(t.observe(1), 1.0 / 3);  // {1, 1, 2}: (0 + 1) / 3
  EXPECT_DOUBLE_EQ(t.quantile(7), 1.0);     // beyond everything seen
  EXPECT_DOUBLE_EQ(t.observe(3), 7.0 / 8);  // {1, 1, 2, 3}: (3 + 0.5) / 4

  ContinuationFeatureOptions o;
  o.turn_quantile = true;
  const std::vector<std::string> prompts = {"go on"};
  EXPECT_EQ(continuation_features(prompts, 2, o, -1, 0.75),
            "p0_go p0_on __turn_2 __len_2 __tq_3");  // floor(5 · 0.75) = 3
  EXPECT_EQ(continuation_features(prompts, 2, o, -1, 1.0), "p0_go p0_on __turn_2 __len_2 __tq_4");
  EXPECT_EQ(continuation_features(prompts, 2, o, -1, 0.0), "p0_go p0_on __turn_2 __len_2 __tq_0");
  EXPECT_EQ(continuation_features(prompts, 2, o), "p0_go p0_on __turn_2 __len_2 __tq_none");
  // Together with the answer length, and without the absolute turn.
  o.answer_length = true;
  o.turn_token = false;
  EXPECT_EQ(continuation_features(prompts, 2, o, 1000, 0.3),
            "p0_go p0_on __len_2 __ans_9 __tq_1");  // floor(log2(1001)) = 9
  EXPECT_EQ(continuation_features(prompts, 1, o, 1000, 0.1),
            "p0_go p0_on __len_2 __ans_none __tq_0");
  // Off: q is ignored.
  EXPECT_EQ(continuation_features(prompts, 2, {}, 1000, 0.3), "p0_go p0_on __turn_2 __len_2");
}

TEST(TurnQuantile, OnATraceInArrivalOrder) {
  // Conversation 0 has 3 turns, 1 has 1; they arrive (0,1) (1,1) (0,2) (0,3). Turns seen:
  // {1} -> 1/2, {1,1} -> 1/2, {1,1,2} -> 2.5/3, {1,1,2,3} -> 3.5/4.
  const std::vector<SessionId> session = {0, 1, 0, 0, kNoSession};
  const std::vector<uint32_t> turn = {1, 1, 2, 3, 1};
  // A request without a session counts as a turn but is no example's: q[0..3] see it only
  // after the four above.
  const std::vector<uint32_t> conversation = {0, 0, 0, 1, 2}, example_turn = {1, 2, 3, 1, 1};
  const std::vector<double> q = online_turn_quantiles(session, turn, conversation, example_turn);
  ASSERT_EQ(q.size(), 5u);
  EXPECT_DOUBLE_EQ(q[0], 0.5);
  EXPECT_DOUBLE_EQ(q[1], 2.5 / 3);
  EXPECT_DOUBLE_EQ(q[2], 3.5 / 4);
  EXPECT_DOUBLE_EQ(q[3], 0.5);
  EXPECT_EQ(q[4], -1);  // conversation 2 is not in the trace
  EXPECT_THROW(online_turn_quantiles(session, std::vector<uint32_t>{1}, conversation, example_turn),
               Error);
}

std::vector<ContinuationExample> examples(int n) {
  std::vector<ContinuationExample> out;
  for (int i = 0; i < n; ++i)
    out.push_back({i % 3 ? "p0_tell p0_me p0_more __tq_1" : "p0_thanks __tq_4", i % 3 != 0});
  return out;
}

// The checksum of the model file trailers (src/learned/continuation_classifier.cc), written
// again here to make version-1 and version-2 files as older builds did.
uint64_t checksum(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
  }
  for (; i < bytes.size(); ++i) h = (h ^ static_cast<unsigned char>(bytes[i])) * 0x100000001b3ULL;
  return mix64(h ^ bytes.size());
}
template <typename T>
void put(std::string& s, size_t at, T v) {
  std::memcpy(s.data() + at, &v, sizeof v);
}

TEST(ContinuationClassifier, IsotonicAndTurnQuantileRoundTripAndOldFilesLoad) {
  ContinuationTrainOptions o;
  o.bucket = 5000;
  o.features.turn_quantile = true;
  ContinuationClassifier c = ContinuationClassifier::train(examples(300), o, 1);
  IsotonicCalibration iso;
  iso.x = {0.2, 0.5, 0.9};
  iso.y = {0.1, 0.4, 0.8};
  c.set_isotonic(iso);
  EXPECT_THROW(c.set_isotonic({{0.5, 0.2}, {0.1, 0.2}}), Error);  // x not increasing
  EXPECT_THROW(c.set_isotonic({{0.2, 0.5}, {0.6, 0.2}}), Error);  // y decreasing
  c.set_calibration({0.5, 0.1});  // stored too, but the isotonic map is the one applied
  const std::string path = temp_path("isotonic.bin");
  c.save(path);
  const ContinuationClassifier loaded = ContinuationClassifier::load(path);
  EXPECT_TRUE(loaded.feature_options().turn_quantile);
  EXPECT_TRUE(loaded.feature_options().turn_token);
  EXPECT_EQ(loaded.isotonic().x, iso.x);
  EXPECT_EQ(loaded.isotonic().y, iso.y);
  EXPECT_EQ(loaded.calibration().a, 0.5);
  for (const auto& e : examples(3)) {
    const double raw = loaded.predict_uncalibrated(e.features);
    EXPECT_EQ(raw, c.predict_uncalibrated(e.features));
    EXPECT_DOUBLE_EQ(loaded.predict(e.features), iso.apply(raw));
  }
  const std::vector<std::string> prompts = {"tell me more"};
  EXPECT_EQ(loaded.predict(prompts, 2, -1, 0.3),
            loaded.predict(continuation_features(prompts, 2, loaded.feature_options(), -1, 0.3)));

  // A flipped bit in the isotonic map is caught by the checksum.
  const std::string bytes = read_bytes(path);
  std::string bad = bytes;
  bad[bytes.size() - 72 - 20] ^= 1;
  EXPECT_THROW(ContinuationClassifier::load(write_file("iso-flip.bin", bad)), ConfigError);

  // Version 2 (64-byte trailer: Platt map and flags, no isotonic map) and version 1 (48 bytes),
  // written from the same fastText part.
  ContinuationTrainOptions plain;
  plain.bucket = 5000;
  plain.features.answer_length = true;
  ContinuationClassifier p = ContinuationClassifier::train(examples(300), plain, 2);
  const std::string ppath = temp_path("plain.bin");
  p.save(ppath);
  const std::string pb = read_bytes(ppath);
  const std::string model = pb.substr(0, pb.size() - 72);
  std::string v2(64, '\0');
  put<uint64_t>(v2, 0, model.size());
  put<uint32_t>(v2, 16, 5);
  put<uint32_t>(v2, 20, 2000);
  put<double>(v2, 24, p.train_base_rate());
  put<double>(v2, 32, 0.75);
  put<double>(v2, 40, 0.125);
  put<uint32_t>(v2, 48, 2);
  put<uint32_t>(v2, 52, 2);  // answer length
  put<uint64_t>(v2, 8, checksum(model + v2.substr(16, 32) + v2.substr(52, 4)));
  std::memcpy(v2.data() + 56, "KVPLPCM1", 8);
  const ContinuationClassifier old2 =
      ContinuationClassifier::load(write_file("v2.bin", model + v2));
  EXPECT_EQ(old2.calibration().a, 0.75);
  EXPECT_EQ(old2.calibration().b, 0.125);
  EXPECT_TRUE(old2.feature_options().answer_length);
  EXPECT_FALSE(old2.feature_options().turn_quantile);
  EXPECT_TRUE(old2.isotonic().identity());
  EXPECT_EQ(old2.predict_uncalibrated("p0_thanks"), p.predict_uncalibrated("p0_thanks"));
  put<uint32_t>(v2, 52, 4);  // bit 2 did not exist in version 2
  put<uint64_t>(v2, 8, checksum(model + v2.substr(16, 32) + v2.substr(52, 4)));
  EXPECT_THROW(ContinuationClassifier::load(write_file("v2-bad.bin", model + v2)), ConfigError);

  std::string v1(48, '\0');
  put<uint64_t>(v1, 0, model.size());
  put<uint64_t>(v1, 8, checksum(model));
  put<uint32_t>(v1, 16, 5);
  put<uint32_t>(v1, 20, 2000);
  put<double>(v1, 24, p.train_base_rate());
  put<uint32_t>(v1, 32, 1);
  std::memcpy(v1.data() + 40, "KVPLPCM1", 8);
  const ContinuationClassifier old1 =
      ContinuationClassifier::load(write_file("v1.bin", model + v1));
  EXPECT_TRUE(old1.calibration().identity());
  EXPECT_TRUE(old1.feature_options().turn_token);
  EXPECT_FALSE(old1.feature_options().answer_length);
  EXPECT_EQ(old1.predict("p0_thanks"), p.predict_uncalibrated("p0_thanks"));
}

}  // namespace
}  // namespace kvpolicy
