// The embedding cache's next-access predictor (key_gbm.h): XGBoost on four features, trained
// online; a background task, started only when the previous one finished, in async mode.
#include "kvpolicy/predict/key_gbm.h"

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <deque>
#include <future>
#include <mutex>
#include <string>
#include <unordered_map>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/types.h"
#include "trainer.h"
#include "xgboost_handles.h"

namespace kvpolicy {
namespace {

constexpr size_t kMaxFeatures = 4;

struct History {
  double last = 0;
  double interval = -1;  // last request interval; -1 before the second access
  uint32_t count = 0;
  uint64_t pending = 0;  // absolute index of its last access in the pending queue
};

// An access whose outcome (the next access within the horizon, or none) is not known yet.
struct Pending {
  double time;
  uint64_t key;
  uint32_t count;
  double interval;       // the key's last interval as of this access
  double resolved = -1;  // the interval to its next access, once it came
};

// The features of an access: its time, the key (low 24 bits, exact in a float), the key's
// request count and last interval.
void features(double time, uint64_t key, uint32_t count, double interval, uint32_t n, float* out) {
  out[0] = static_cast<float>(time);
  if (n == 1) return;
  out[1] = static_cast<float>(key & 0xFFFFFF);
  out[2] = static_cast<float>(count);
  out[3] = interval < 0 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(interval);
}

using Model = learned::Boosted;

}  // namespace

struct KeyGbm::Impl {
  KeyGbmConfig cfg;
  uint32_t nf;
  std::unordered_map<uint64_t, History> history;
  // Accesses in time order, each a training sample once its horizon has passed: labelled with
  // the interval to the key's next access, or with the horizon if none came within it. Waiting
  // for the horizon keeps the samples unbiased: labelled at once, the newest samples would all
  // be keys that came right back, and a model reading the time would learn "soon" for all.
  std::deque<Pending> pending;
  uint64_t pending_base = 0;  // absolute index of pending.front()
  double mean_interval = 0;   // exponential average of the intervals seen; horizon = 4x it
  bool has_interval = false;
  // Resolved samples, a ring of `window`, kMaxFeatures wide (packed nf wide for a fit).
  learned::SampleWindow window;

  std::shared_ptr<const Model> model;  // the task's, swapped in when a fit finishes
  std::future<void> task;
  std::mutex mu;  // guards results and the stats the task writes
  std::vector<std::pair<uint64_t, double>> results;
  uint64_t fits = 0, predictions = 0, requests = 0, dropped = 0;
  double task_seconds = 0;

  void add_sample(const Pending& access, double label);

  explicit Impl(const KeyGbmConfig& c)
      : cfg(c), nf(c.features == 1 ? 1 : 4), window(std::max<size_t>(c.window, 1), kMaxFeatures) {
    if (c.features != 1 && c.features != 4) throw ConfigError("key gbm: features must be 1 or 4");
    if (c.trees < 1 || c.max_depth < 1 || !(c.eta > 0) || c.window < 2 || c.min_samples < 2)
      throw ConfigError("key gbm: trees, depth, eta, window and min_samples must be positive");
    if (!(c.sample > 0 && c.sample <= 1)) throw ConfigError("key gbm: sample must be in (0, 1]");
  }

  // A fixed number of rounds on every sample, no hold-out (the paper's setting).
  static std::shared_ptr<const Model> fit(const std::vector<float>& X, const std::vector<float>& y,
                                          size_t n, uint32_t nf, const KeyGbmConfig& c) {
    learned::BoostSettings s{.objective = "reg:squarederror",
                             .max_rounds = c.trees,
                             .max_depth = c.max_depth,
                             .eta = c.eta,
                             .seed = c.seed};
    return learned::boost(X.data(), y.data(), n, nf, s);
  }

  // One task: a fit on a snapshot of the window when due, then the answers for `keys`.
  void run(std::vector<float> train_X, std::vector<float> train_y, size_t n,
           std::vector<uint64_t> keys, std::vector<float> rows, std::vector<double> now) {
    auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<const Model> m;
    {
      std::lock_guard<std::mutex> lk(mu);
      m = model;
    }
    if (n) {
      m = fit(train_X, train_y, n, nf, cfg);
      std::lock_guard<std::mutex> lk(mu);
      model = m;
      ++fits;
    }
    std::vector<std::pair<uint64_t, double>> out;
    if (m && !keys.empty()) {
      std::vector<float> p(keys.size());
      xgb::predict_dense(m->booster.h, rows.data(), keys.size(), nf, m->rounds, p.data());
      out.reserve(keys.size());
      for (size_t i = 0; i < keys.size(); ++i)
        out.emplace_back(keys[i], now[i] + std::expm1(std::max(0.0f, p[i])));
    }
    std::lock_guard<std::mutex> lk(mu);
    predictions += out.size();
    results.insert(results.end(), out.begin(), out.end());
    task_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

KeyGbm::KeyGbm(const KeyGbmConfig& config) : impl_(std::make_unique<Impl>(config)) {}

KeyGbm::~KeyGbm() {
  if (impl_->task.valid()) impl_->task.wait();
}

void KeyGbm::Impl::add_sample(const Pending& a, double label) {
  // A deterministic share of the accesses, so the window spans many batches.
  if (double(mix64(a.key ^ std::bit_cast<uint64_t>(a.time)) >> 11) * 0x1.0p-53 >= cfg.sample)
    return;
  features(a.time, a.key, a.count, a.interval, nf, window.next_row());
  window.commit(static_cast<float>(std::log1p(label)));
}

void KeyGbm::observe(std::span<const uint64_t> keys, double now) {
  Impl& m = *impl_;
  double horizon = 4 * m.mean_interval;
  while (m.has_interval && !m.pending.empty() && m.pending.front().time < now - horizon) {
    const Pending& a = m.pending.front();
    m.add_sample(a, a.resolved >= 0 ? std::min(a.resolved, horizon) : horizon);
    m.pending.pop_front();
    ++m.pending_base;
  }
  for (uint64_t key : keys) {
    History& h = m.history[key];
    if (h.count > 0) {
      double interval = now - h.last;
      if (h.pending >= m.pending_base) m.pending[h.pending - m.pending_base].resolved = interval;
      m.mean_interval =
          m.has_interval ? m.mean_interval + (interval - m.mean_interval) / 1024 : interval;
      m.has_interval = true;
      h.interval = interval;
    }
    h.last = now;
    ++h.count;
    h.pending = m.pending_base + m.pending.size();
    m.pending.push_back({now, key, h.count, h.interval});
  }
}

void KeyGbm::request(std::span<const uint64_t> keys, double now) {
  Impl& m = *impl_;
  ++m.requests;
  if (m.task.valid()) {
    if (m.task.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      ++m.dropped;  // the previous task is still running: no new one (the paper's rule)
      return;
    }
    m.task.get();  // rethrows a failed task's error
  }
  // Snapshot what the task needs, so it never touches state this thread changes.
  bool refit = m.window.size() >= m.cfg.min_samples &&
               (m.window.fresh() >= m.cfg.retrain_after || !has_model());
  std::vector<float> tx, ty;
  size_t n = 0;
  if (refit) {
    m.window.take(tx, ty, m.nf);
    n = ty.size();
  }
  std::vector<uint64_t> ks(keys.begin(), keys.end());
  std::vector<float> rows(ks.size() * m.nf);
  std::vector<double> times(ks.size(), now);
  for (size_t i = 0; i < ks.size(); ++i) {
    auto it = m.history.find(ks[i]);
    History h = it == m.history.end() ? History{} : it->second;
    // As of this access: the features its sample will carry.
    features(now, ks[i], h.count, h.interval, m.nf, &rows[i * m.nf]);
  }
  if (m.cfg.async) {
    m.task = std::async(
        std::launch::async, [&m, tx = std::move(tx), ty = std::move(ty), n, ks = std::move(ks),
                             rows = std::move(rows), times = std::move(times)]() mutable {
          m.run(std::move(tx), std::move(ty), n, std::move(ks), std::move(rows), std::move(times));
        });
  } else {
    m.run(std::move(tx), std::move(ty), n, std::move(ks), std::move(rows), std::move(times));
  }
}

std::vector<std::pair<uint64_t, double>> KeyGbm::take_results() {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return std::exchange(impl_->results, {});
}

bool KeyGbm::has_model() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->model != nullptr;
}

PolicyStats KeyGbm::stats() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return {{"fits", double(impl_->fits)},
          {"model_fitted", impl_->fits > 0 ? 1.0 : 0.0},
          {"predictions", double(impl_->predictions)},
          {"prediction_requests", double(impl_->requests)},
          {"requests_dropped", double(impl_->dropped)},
          {"predictor_task_seconds", impl_->task_seconds}};
}

namespace {

const bool registered = register_key_gbm(
    [](const KeyGbmConfig& c) -> std::unique_ptr<KeyModel> { return std::make_unique<KeyGbm>(c); });

}  // namespace

}  // namespace kvpolicy
