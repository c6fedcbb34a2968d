// The online XGBoost training the learned predictors share (gbm.cc, key_gbm.cc,
// reuse_predictor.cc): a sliding window of samples, boosting with early stopping on the newest
// share of the window, a retrain schedule, a background fit, and the forest compiled for
// inference. Each predictor supplies only its features, labels and objective. Internal to
// src/learned.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kvpolicy/predict/reuse_predictor.h"
#include "xgboost_handles.h"

namespace kvpolicy::learned {

// Samples of `width` floats and a label, oldest first: a ring of `capacity` (unbounded when 0:
// every sample kept). `fresh` counts samples since the last take.
class SampleWindow {
 public:
  SampleWindow(size_t capacity, size_t width);
  void add(const float* row, float label);
  float* next_row() { return &X_[head_ * width_]; }  // fill, then commit(label)
  void commit(float label);
  size_t size() const { return count_; }
  size_t fresh() const { return fresh_; }
  // The window in chronological order, each row's first `columns` floats; resets fresh().
  void take(std::vector<float>& X, std::vector<float>& y, size_t columns);
  void snapshot(std::vector<float>& X, std::vector<float>& y, size_t columns) const;

 private:
  size_t capacity_, width_;
  std::vector<float> X_, y_;
  size_t head_ = 0, count_ = 0, fresh_ = 0;
};

// When the next fit is due: after `first` new samples, the interval then doubling up to `most`
// (first == most: a fixed interval).
struct RetrainSchedule {
  size_t next, most;
  RetrainSchedule(size_t first, size_t most_) : next(first), most(most_) {}
  bool due(size_t fresh) const { return fresh >= next; }
  void fitted() { next = std::min(next * 2, most); }
};

struct BoostSettings {
  const char* objective;
  int max_rounds = 1, max_depth = 6;
  double eta = 0.3;
  uint64_t seed = 1;
  // Early stopping: the newest `holdout` share of the rows is held out and boosting stops after
  // `patience` rounds without a better `metric`; no metric: max_rounds on every row.
  const char* metric = nullptr;
  double holdout = 0;
  int patience = 0;
  std::vector<std::pair<const char*, std::string>> params = {};  // after eval_metric
  // The base score from the training rows' labels ("" = XGBoost's own).
  std::function<std::string(const float* y, size_t n)> base_score = {};
};

// A booster with the matrices it was trained on, which it may keep references to (declared
// first, so they are freed last). Predictions use its first `rounds` rounds.
struct Boosted {
  std::unique_ptr<xgb::Matrix> train, valid;
  xgb::Booster booster;
  int rounds = 0;
  double best = 0;  // the hold-out metric at the best round
};

// Trains on n rows of nf floats in chronological order. Returns null when `stop` is raised.
std::unique_ptr<Boosted> boost(const float* X, const float* y, size_t n, size_t nf,
                               const BoostSettings& s, const std::atomic<bool>* stop = nullptr);

// A booster flattened into a CompiledForest (margins equal XGBoost's), with each feature's share
// of the total gain (named by `feature_name`), largest first.
struct Compiled {
  CompiledForest forest;
  int trees = 0;
  std::vector<std::pair<std::string, double>> gain;
};
Compiled compile(BoosterHandle h, const std::function<std::string(int)>& feature_name);

// One background fit at a time: start() hands a job to the worker, whose result a later
// adopt() takes on the caller's thread. The caller never waits for a fit, unless it asks.
template <typename Model>
class BackgroundFit {
 public:
  using Job = std::function<std::shared_ptr<const Model>()>;
  BackgroundFit() : worker_([this] { loop(); }) {}
  ~BackgroundFit() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  bool busy() const {
    std::lock_guard<std::mutex> lk(mu_);
    return busy_;
  }
  void wait_idle() {
    std::unique_lock<std::mutex> lk(mu_);
    idle_cv_.wait(lk, [this] { return !busy_ && !has_job_; });
  }
  // Starts `job` (waiting for the running one first if `wait`); false when one is running.
  bool start(Job job, bool wait) {
    std::unique_lock<std::mutex> lk(mu_);
    if (busy_) {
      if (!wait) return false;
      idle_cv_.wait(lk, [this] { return !busy_; });
    }
    job_ = std::move(job);
    has_job_ = busy_ = true;
    lk.unlock();
    cv_.notify_one();
    return true;
  }
  uint64_t published() const { return published_.load(std::memory_order_acquire); }
  // The newest published model, or null when none was published since the last adopt().
  std::shared_ptr<const Model> adopt() {
    if (published() == adopted_) return nullptr;
    std::lock_guard<std::mutex> lk(mu_);
    adopted_ = published_.load();
    return pending_;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      cv_.wait(lk, [this] { return stopping_ || has_job_; });
      if (stopping_) break;
      Job job = std::move(job_);
      has_job_ = false;
      lk.unlock();
      std::shared_ptr<const Model> m = job();
      lk.lock();
      if (m) {
        pending_ = std::move(m);
        ++published_;
      }
      busy_ = false;
      idle_cv_.notify_all();
    }
    busy_ = false;
    idle_cv_.notify_all();
  }

  mutable std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  bool has_job_ = false, busy_ = false, stopping_ = false;  // under mu_
  Job job_;
  std::shared_ptr<const Model> pending_;  // under mu_
  std::atomic<uint64_t> published_{0};
  uint64_t adopted_ = 0;
  std::thread worker_;  // last: started once the rest is built
};

}  // namespace kvpolicy::learned
