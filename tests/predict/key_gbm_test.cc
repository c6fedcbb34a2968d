// KeyGbm, the embedding cache's predictor: it learns a planted interval per key from its four
// features, the weak variant (time only, one tree) cannot, and async mode answers later without
// blocking, dropping requests while a task runs.
#include "kvpolicy/predict/key_gbm.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <thread>
#include <vector>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

// Key k recurs every period(k) time units: 10, 20, ..., 100.
double period(uint64_t k) { return double(k % 10 + 1) * 10; }

// Feeds `steps` time units of accesses; returns the mean absolute error of the last answers
// (predicted next access against the true one), in time units.
double train_and_error(KeyGbm& gbm, int steps) {
  std::map<uint64_t, double> answer;
  double error = 0;
  int answered = 0;
  for (int t = 1; t <= steps; ++t) {
    std::vector<uint64_t> keys;
    for (uint64_t k = 0; k < 200; ++k)
      if (std::fmod(double(t), period(k)) == 0) keys.push_back(k);
    if (keys.empty()) continue;
    for (auto& [k, p] : gbm.take_results()) answer[k] = p;
    gbm.observe(keys, t);
    gbm.request(keys, t);
    if (t > steps - 200) {
      for (uint64_t k : keys) {
        auto it = answer.find(k);
        if (it == answer.end()) continue;
        error += std::abs(it->second - double(t));  // the answer given at k's previous access
        ++answered;
      }
    }
    for (uint64_t k : keys) answer.erase(k);
  }
  return answered ? error / answered : 1e9;
}

TEST(KeyGbm, LearnsAPlantedIntervalPerKey) {
  KeyGbm gbm({.async = false});
  double error = train_and_error(gbm, 2000);
  EXPECT_TRUE(gbm.has_model());
  EXPECT_LT(error, 5.0) << "periods are 10 to 100";
}

TEST(KeyGbm, TheWeakPredictorCannot) {
  KeyGbm weak({.features = 1, .trees = 1, .async = false});
  KeyGbm full({.async = false});
  double weak_error = train_and_error(weak, 2000);
  double full_error = train_and_error(full, 2000);
  EXPECT_GT(weak_error, 4 * full_error);
  EXPECT_GT(weak_error, 10.0);
}

TEST(KeyGbm, AsyncAnswersLaterAndDropsWhileBusy) {
  KeyGbm gbm({.min_samples = 100, .async = true});
  std::vector<uint64_t> keys(500);
  for (uint64_t k = 0; k < keys.size(); ++k) keys[k] = k;
  for (int t = 1; t <= 20; ++t) {
    gbm.observe(keys, t * 7.0);
    gbm.request(keys, t * 7.0);  // the first with a model due starts a fit in the background
  }
  // Answers arrive without this thread ever waiting for a fit.
  std::vector<std::pair<uint64_t, double>> got;
  for (int i = 0; i < 400 && got.empty(); ++i) {
    gbm.request(keys, 147.0);
    got = gbm.take_results();
    if (got.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(got.empty());
  // Answers come from whichever request started the task (at 7t for some t), each the
  // request's time plus the interval every key recurs at, 7.
  for (auto& [k, p] : got) {
    EXPECT_LE(p, 155.0);
    EXPECT_LT(std::abs(std::remainder(p, 7.0)), 1.0) << p << ": every key recurs every 7";
  }
  double dropped = 0;
  for (auto& [name, v] : gbm.stats())
    if (name == "requests_dropped") dropped = v;
  EXPECT_GT(dropped, 0) << "requests made while a task ran start none";
}

TEST(KeyGbm, BadConfigurationIsAnError) {
  EXPECT_THROW(KeyGbm({.features = 3}), ConfigError);
  EXPECT_THROW(KeyGbm({.trees = 0}), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
