// The LPC continuation classifier: the feature encoding, the metrics against hand-computed
// values, a planted rule learnt and shuffled labels not, determinism, and model files.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "../trace/trace_test_util.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/predict/binary_metrics.h"
#include "kvpolicy/predict/continuation.h"

namespace kvpolicy {
namespace {

using testing::read_bytes;
using testing::temp_path;
using testing::write_file;

TEST(ContinuationFeatures, EncodesPositionsTurnAndLength) {
  std::vector<std::string> prompts = {"Why is the SKY blue?\n\tThanks", "", "hello   world"};
  std::string f = continuation_features(prompts, 3);
  EXPECT_EQ(f,
            "p0_why p0_is p0_the p0_sky p0_blue p0_? p0_thanks p1__empty p2_hello p2_world "
            "__turn_3_4 __len_4");  // 28 characters: floor(log2(29)) = 4
  EXPECT_EQ(continuation_turn_token(1), "__turn_1");
  EXPECT_EQ(continuation_turn_token(2), "__turn_2");
  EXPECT_EQ(continuation_turn_token(4), "__turn_3_4");
  EXPECT_EQ(continuation_turn_token(8), "__turn_5_8");
  EXPECT_EQ(continuation_turn_token(9), "__turn_9plus");
  // Only `window` prompts; a long prompt keeps its head and tail; multi-byte text is kept whole.
  ContinuationFeatureOptions o;
  o.window = 1;
  o.max_chars = 4;
  EXPECT_EQ(continuation_features(prompts, 1, o), "p0_wh p0_ks __turn_1 __len_4");
  std::vector<std::string> utf8 = {"h\xC3\xA9llo w\xC3\xB6rld"};
  o.max_chars = 100;
  EXPECT_EQ(continuation_features(utf8, 1, o), "p0_h\xC3\xA9llo p0_w\xC3\xB6rld __turn_1 __len_3");
  EXPECT_EQ(continuation_features({}, 1), "__turn_1 __len_0");
}

TEST(ContinuationMetrics, MatchHandComputedValues) {
  std::vector<double> p = {0.9, 0.4, 0.6, 0.2, 0.8, 0.1};
  std::vector<uint8_t> y = {1, 1, 0, 0, 1, 0};
  BinaryMetrics m = evaluate_binary(p, y);
  EXPECT_EQ(m.confusion.tp, 2u);
  EXPECT_EQ(m.confusion.fp, 1u);
  EXPECT_EQ(m.confusion.tn, 2u);
  EXPECT_EQ(m.confusion.fn, 1u);
  EXPECT_NEAR(m.mcc, 3.0 / 9.0, 1e-12);  // (2*2 - 1*1) / sqrt(3*3*3*3)
  EXPECT_NEAR(m.f1, 4.0 / 6.0, 1e-12);
  EXPECT_NEAR(m.f1_macro, 4.0 / 6.0, 1e-12);
  EXPECT_NEAR(m.auc, 8.0 / 9.0, 1e-12);  // 8 of the 9 (positive, negative) pairs ranked right
  EXPECT_NEAR(m.accuracy, 4.0 / 6.0, 1e-12);
  EXPECT_NEAR(m.base_rate, 0.5, 1e-12);
  // At 0.8: TP 2, FP 0, TN 3, FN 1 -> 6 / sqrt(72); 0.4 ties it and the first is kept.
  EXPECT_NEAR(m.best_mcc, 6.0 / std::sqrt(72.0), 1e-12);
  EXPECT_DOUBLE_EQ(m.best_threshold, 0.8);
  EXPECT_EQ(m.calibration[9].count, 1u);
  EXPECT_DOUBLE_EQ(m.calibration[9].observed_rate, 1.0);
  EXPECT_EQ(m.calibration[1].count, 1u);
  EXPECT_DOUBLE_EQ(m.calibration[1].observed_rate, 0.0);
  EXPECT_EQ(m.calibration[0].count, 0u);
  EXPECT_TRUE(std::isnan(m.calibration[0].mean_predicted));
  uint64_t total = 0;
  for (auto& b : m.calibration) total += b.count;
  EXPECT_EQ(total, 6u);

  // Ties share their rank; a perfect and an inverted ranking.
  std::vector<double> tied = {0.5, 0.5};
  std::vector<uint8_t> ty = {1, 0};
  EXPECT_DOUBLE_EQ(auc(tied, ty), 0.5);
  std::vector<double> perfect = {0.1, 0.2, 0.7, 0.9};
  std::vector<uint8_t> py = {0, 0, 1, 1};
  EXPECT_DOUBLE_EQ(auc(perfect, py), 1.0);
  std::vector<uint8_t> inverted = {1, 1, 0, 0};
  EXPECT_DOUBLE_EQ(auc(perfect, inverted), 0.0);
  EXPECT_DOUBLE_EQ(evaluate_binary(perfect, inverted).mcc, -1.0);
  EXPECT_TRUE(std::isnan(auc(perfect, std::vector<uint8_t>{1, 1, 1, 1})));
  // A constant classifier: MCC 0, not NaN.
  EXPECT_EQ(mcc(Confusion{3, 2, 0, 0}), 0.0);
  EXPECT_THROW(evaluate_binary({}, {}), Error);
  EXPECT_NE(metrics_json(m).find("\"mcc\":0.333333"), std::string::npos);
}

// Synthetic prompts of random words; label 1 when the current prompt holds a "continue" word.
std::vector<ContinuationExample> planted(size_t n, uint64_t seed, bool shuffle_labels) {
  static const std::vector<std::string> kWords = {
      "code", "python", "story", "write", "explain", "list", "please", "what", "how",  "the",
      "a",    "of",     "model", "data",  "table",   "sort", "poem",   "city", "time", "rust"};
  static const std::vector<std::string> kGoOn = {"continue", "more", "next", "again"};
  std::mt19937_64 rng(seed);
  std::vector<ContinuationExample> out;
  for (size_t i = 0; i < n; ++i) {
    bool label = rng() % 2;
    std::vector<std::string> prompts(1 + rng() % 3);
    for (size_t j = 0; j < prompts.size(); ++j) {
      for (int w = 0, words = 3 + int(rng() % 8); w < words; ++w)
        prompts[j] += (w ? " " : "") + kWords[rng() % kWords.size()];
      // The rule looks at the current prompt only: earlier prompts get the words at random.
      if ((j == 0 && label) || (j > 0 && rng() % 2))
        prompts[j] += " " + kGoOn[rng() % kGoOn.size()] + " " + kWords[rng() % kWords.size()];
    }
    out.push_back({continuation_features(prompts, uint32_t(prompts.size())), label});
  }
  if (shuffle_labels) {
    std::vector<bool> labels;
    for (auto& e : out) labels.push_back(e.label);
    std::shuffle(labels.begin(), labels.end(), rng);
    for (size_t i = 0; i < out.size(); ++i) out[i].label = labels[i];
  }
  return out;
}

BinaryMetrics held_out(const std::vector<ContinuationExample>& all, uint64_t seed,
                       ContinuationClassifier* keep = nullptr) {
  const size_t cut = all.size() * 4 / 5;
  std::vector<ContinuationExample> train(all.begin(), all.begin() + cut);
  ContinuationClassifier c = ContinuationClassifier::train(train, {}, seed);
  std::vector<double> p;
  std::vector<uint8_t> y;
  for (size_t i = cut; i < all.size(); ++i) {
    p.push_back(c.predict(all[i].features));
    EXPECT_GE(p.back(), 0.0);
    EXPECT_LE(p.back(), 1.0);
    y.push_back(all[i].label);
  }
  if (keep) *keep = std::move(c);
  return evaluate_binary(p, y);
}

TEST(ContinuationClassifier, LearnsAPlantedRule) {
  BinaryMetrics m = held_out(planted(3000, 1, false), 7);
  EXPECT_GT(m.mcc, 0.9) << format_metrics(m);
  EXPECT_GT(m.auc, 0.97);
}

TEST(ContinuationClassifier, NearZeroOnShuffledLabels) {
  BinaryMetrics m = held_out(planted(5000, 2, true), 7);
  EXPECT_LT(std::abs(m.mcc), 0.1) << format_metrics(m);
  EXPECT_LT(std::abs(m.auc - 0.5), 0.06) << format_metrics(m);
}

TEST(ContinuationClassifier, SameSeedSameModelAndSaveLoadRoundTrip) {
  auto data = planted(800, 3, false);
  ContinuationClassifier a, b;
  held_out(data, 11, &a);
  held_out(data, 11, &b);
  std::string path = temp_path("model.bin");
  a.save(path);
  ContinuationClassifier loaded = ContinuationClassifier::load(path);
  EXPECT_EQ(loaded.feature_options().window, a.feature_options().window);
  EXPECT_EQ(loaded.feature_options().max_chars, a.feature_options().max_chars);
  EXPECT_DOUBLE_EQ(loaded.train_base_rate(), a.train_base_rate());
  for (const auto& e : data) {
    double p = a.predict(e.features);
    EXPECT_EQ(p, b.predict(e.features));
    EXPECT_EQ(p, loaded.predict(e.features));
  }
  std::vector<std::string> prompts = {"continue the story", "write a story"};
  EXPECT_EQ(loaded.predict(prompts, 2), a.predict(continuation_features(prompts, 2)));
}

TEST(ContinuationClassifier, CalibrationAndFeatureFlagsRoundTrip) {
  // A Platt map and the transfer features are saved with the model and used when it scores.
  auto data = planted(400, 6, false);
  ContinuationTrainOptions o;
  o.bucket = 5000;
  o.features.turn_token = false;
  o.features.answer_length = true;
  ContinuationClassifier c = ContinuationClassifier::train(data, o, 1);
  EXPECT_TRUE(c.calibration().identity());
  c.set_calibration({0.5, -0.25});
  EXPECT_THROW(c.set_calibration({-1, 0}), Error);
  std::string path = temp_path("calibrated.bin");
  c.save(path);
  ContinuationClassifier loaded = ContinuationClassifier::load(path);
  EXPECT_EQ(loaded.calibration().a, 0.5);
  EXPECT_EQ(loaded.calibration().b, -0.25);
  EXPECT_FALSE(loaded.feature_options().turn_token);
  EXPECT_TRUE(loaded.feature_options().answer_length);
  for (const auto& e : data) {
    const double raw = loaded.predict_uncalibrated(e.features);
    EXPECT_EQ(raw, c.predict_uncalibrated(e.features));
    const PlattScaling platt{0.5, -0.25};
    EXPECT_NEAR(loaded.predict(e.features), platt.apply(raw), 1e-15);
  }
  std::vector<std::string> prompts = {"continue the story", "write a story"};
  const std::string f = continuation_features(prompts, 2, loaded.feature_options(), 300);
  EXPECT_EQ(f.find("__turn_"), std::string::npos) << f;
  EXPECT_NE(f.find(" __ans_8"), std::string::npos) << f;  // floor(log2(301)) = 8
  EXPECT_NE(continuation_features(prompts, 1, loaded.feature_options(), 300).find("__ans_none"),
            std::string::npos);
  EXPECT_EQ(loaded.predict(prompts, 2, 300), loaded.predict(f));
}

TEST(ContinuationClassifier, MissingOrCorruptModelIsOneConfigError) {
  auto data = planted(400, 4, false);
  ContinuationTrainOptions small;
  small.bucket = 5000;  // a small file: the corruption loop reads it 30 times
  ContinuationClassifier c = ContinuationClassifier::train(data, small, 1);
  std::string path = temp_path("good.bin");
  c.save(path);
  const std::string bytes = read_bytes(path);
  auto expect_error = [](const std::string& p, const std::string& why) {
    try {
      ContinuationClassifier::load(p);
      ADD_FAILURE() << why << ": loaded";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << why << ": not a ConfigError: " << e.what();
    }
  };
  expect_error(temp_path("nodir/missing.bin"), "missing");
  expect_error(write_file("empty.bin", ""), "empty");
  expect_error(write_file("text.bin", "hello, this is not a model at all\n"), "text");
  for (size_t keep : {size_t{8}, size_t{100}, bytes.size() / 2, bytes.size() - 1})
    expect_error(write_file("cut.bin", bytes.substr(0, keep)), "truncated");
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20; ++i) {
    std::string bad = bytes;
    size_t at = rng() % bytes.size();
    bad[at] = char(bad[at] ^ (1 << (rng() % 8)));
    expect_error(write_file("flip.bin", bad), "flipped bit at " + std::to_string(at));
  }
  // fastText's own file without the trailer.
  expect_error(write_file("bare.bin", bytes.substr(0, bytes.size() - 72)), "no trailer");
  // Training needs both labels; an untrained classifier does not predict.
  for (auto& e : data) e.label = true;
  EXPECT_THROW(ContinuationClassifier::train(data, {}, 1), ConfigError);
  EXPECT_THROW(ContinuationClassifier().predict("p0_x"), Error);
}

}  // namespace
}  // namespace kvpolicy
