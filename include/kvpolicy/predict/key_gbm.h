// KeyGbm: the LCR paper's predictor for the embedding cache (section 4): a key's next access
// from four features, the current time, the key, its request count and its last request
// interval, by gradient-boosted trees (XGBoost) trained online. An access becomes a training
// sample once a horizon (4x the mean interval) has passed, labelled with the interval to the
// key's next access, capped at the horizon ("not soon" is learnt too). Predictions are of
// log(1 + interval), returned as absolute times.
//
// Async mode (the paper's, "Workflow 2"): a request for predictions starts a background task
// (retrain on the window when enough new samples came, then predict the keys asked for) only if
// the previous task has finished; its answers are taken later (take_results), so the caller's
// path never waits for the model. Sync mode does the same work inline: deterministic, for tests.
// The weak variant of the paper's robustness study (one feature, one tree) is `features = 1`,
// `trees = 1`.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "kvpolicy/core/access.h"

namespace kvpolicy {

struct KeyGbmConfig {
  uint32_t features = 4;  // 4: time, key, count, last interval; 1: time only (the weak one)
  int trees = 30;
  int max_depth = 6;
  double eta = 0.3;
  double sample = 0.1;           // share of resolved accesses kept as training samples
  size_t window = 20000;         // most recent kept samples trained on
  size_t retrain_after = 10000;  // new samples before the next fit
  size_t min_samples = 1000;     // no model before this many
  bool async = true;
  uint64_t seed = 1;
};

// What the embedding cache asks of its learned key predictor. KeyGbm (src/learned/, on
// XGBoost) is the one; callers outside src/learned/ build it through make_key_gbm.
class KeyModel {
 public:
  virtual ~KeyModel() = default;
  // `keys` (distinct) were accessed at `now` (non-decreasing): their history is updated and
  // each earlier access of theirs becomes a training sample labelled with its interval.
  virtual void observe(std::span<const uint64_t> keys, double now) = 0;
  // Asks for the predicted next access of `keys` as of `now`. Sync: answered at once. Async:
  // starts a task if none is running (else the request is dropped, as in the paper).
  virtual void request(std::span<const uint64_t> keys, double now) = 0;
  // Answers of finished tasks: (key, predicted absolute next-access time). Empty until a
  // model exists.
  virtual std::vector<std::pair<uint64_t, double>> take_results() = 0;
  virtual bool has_model() const = 0;
  virtual PolicyStats stats() const = 0;  // fits, predictions, requests dropped, task seconds
};

// A KeyGbm; throws ConfigError naming -DKVPOLICY_LEARNED=OFF in a build without XGBoost.
std::unique_ptr<KeyModel> make_key_gbm(const KeyGbmConfig& config);
// How src/learned/key_gbm.cc makes itself available to make_key_gbm.
bool register_key_gbm(std::unique_ptr<KeyModel> (*make)(const KeyGbmConfig&));

class KeyGbm : public KeyModel {
 public:
  explicit KeyGbm(const KeyGbmConfig& config);
  ~KeyGbm() override;  // waits for a running task
  KeyGbm(const KeyGbm&) = delete;
  KeyGbm& operator=(const KeyGbm&) = delete;

  void observe(std::span<const uint64_t> keys, double now) override;
  void request(std::span<const uint64_t> keys, double now) override;
  std::vector<std::pair<uint64_t, double>> take_results() override;
  bool has_model() const override;
  PolicyStats stats() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvpolicy
