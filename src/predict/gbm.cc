// The LCR next-access predictor: online XGBoost regression of log1p(seconds to next access)
// through XGBoost's C API, retrained on a sliding window, inline (sync) or on a thread (async).
#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>

#include "kvpolicy/core/error.h"
#include "kvpolicy/predict/predictor.h"
#include "xgboost_handles.h"

namespace kvpolicy {
namespace {

constexpr int kF = FeatureTracker::kFeatures;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

using xgb::check;
using DMatrix = xgb::Matrix;

// A trained booster; predictions use its first `rounds` rounds (the early-stopping best). The
// training matrices live as long as the booster, which may keep references to them.
struct Model {
  DMatrix train, valid;
  BoosterHandle h = nullptr;
  int rounds = 0;
  double valid_rmse = 0;
  ~Model() {
    if (h) XGBoosterFree(h);
  }
};

double parse_rmse(const char* s) {
  const char* p = std::strstr(s, "rmse:");
  return p ? std::strtod(p + 5, nullptr) : std::numeric_limits<double>::quiet_NaN();
}

// Trains on n rows in chronological order; the most recent `holdout` share is the hold-out set
// for early stopping (forecasting the near future, as the model will be used). Returns null
// when asked to stop.
std::shared_ptr<const Model> train(const float* X, const float* y, size_t n, const GbmConfig& c,
                                   const std::atomic<bool>& stop) {
  size_t n_valid = std::clamp<size_t>(size_t(double(n) * c.holdout), 1, n - 1);
  size_t n_train = n - n_valid;
  auto m = std::make_shared<Model>();
  check(XGDMatrixCreateFromMat_omp(X, n_train, kF, kNaN, &m->train.h, 1), "train matrix");
  check(XGDMatrixSetFloatInfo(m->train.h, "label", y, n_train), "train labels");
  check(XGDMatrixCreateFromMat_omp(X + n_train * kF, n_valid, kF, kNaN, &m->valid.h, 1),
        "hold-out matrix");
  check(XGDMatrixSetFloatInfo(m->valid.h, "label", y + n_train, n_valid), "hold-out labels");
  check(XGBoosterCreate(&m->train.h, 1, &m->h), "booster");
  double mean = 0;
  for (size_t i = 0; i < n_train; ++i) mean += y[i];
  mean /= double(n_train);
  xgb::set_params(m->h, "reg:squarederror", c.max_depth, c.eta, c.seed,
                  {{"eval_metric", "rmse"},
                   {"base_score", fmt::format("{}", mean)}});  // the mean: fewer trees needed
  const char* names[] = {"valid"};
  double best = std::numeric_limits<double>::infinity();
  int best_round = 0;
  for (int it = 0; it < c.max_rounds; ++it) {
    if (stop.load(std::memory_order_relaxed)) return nullptr;
    check(XGBoosterUpdateOneIter(m->h, it, m->train.h), "update");
    const char* res = nullptr;
    check(XGBoosterEvalOneIter(m->h, it, &m->valid.h, names, 1, &res), "eval");
    double rmse = parse_rmse(res);
    if (rmse < best) {
      best = rmse;
      best_round = it;
    } else if (it - best_round >= c.patience) {
      break;
    }
  }
  m->rounds = best_round + 1;
  m->valid_rmse = best;
  return m;
}

}  // namespace

struct GbmPredictor::Impl {
  GbmConfig cfg;
  uint32_t block_tokens;
  FeatureTracker features;

  // Sliding window of samples, a ring; `fresh` counts samples since the last retrain.
  std::vector<float> X, y;
  size_t head = 0, count = 0, fresh = 0;
  uint64_t samples = 0;

  std::shared_ptr<const Model> model;  // used by predictions (the caller's thread only)
  std::atomic<uint64_t> published{0};  // models published so far
  uint64_t adopted = 0;

  std::atomic<int64_t> train_ns{0};
  std::atomic<uint64_t> failures{0};
  std::atomic<int> last_rounds{0};
  std::atomic<double> last_rmse{0};
  uint64_t model_rows = 0, model_calls = 0;
  int64_t model_ns = 0;

  // Async: one job slot; the worker publishes into `pending`, the caller adopts it.
  std::thread worker;
  std::mutex mu;
  std::condition_variable cv, idle_cv;
  bool has_job = false, busy = false, stopping = false;  // under mu
  std::atomic<bool> stop{false};
  std::vector<float> job_X, job_y;
  std::shared_ptr<const Model> pending;  // under mu
  std::string last_error;                // under mu

  std::vector<float> scratch_X, scratch_y, rows, outs;
  std::vector<size_t> idx;

  Impl(const GbmConfig& c, uint32_t bt) : cfg(c), block_tokens(bt) {
    X.resize(cfg.window * kF);
    y.resize(cfg.window);
    if (cfg.async) worker = std::thread([this] { worker_loop(); });
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lk(mu);
      stopping = true;
    }
    stop = true;
    cv.notify_all();
    if (worker.joinable()) worker.join();
  }

  void add_sample(const float* row, float label) {
    std::copy(row, row + kF, X.begin() + head * kF);
    y[head] = label;
    head = (head + 1) % cfg.window;
    count = std::min(count + 1, cfg.window);
    ++samples;
    ++fresh;
    if (fresh >= cfg.retrain_every && count >= 10) retrain();
  }

  // The window in chronological order.
  void snapshot(std::vector<float>& sx, std::vector<float>& sy) const {
    sx.resize(count * kF);
    sy.resize(count);
    size_t start = (head + cfg.window - count) % cfg.window;
    for (size_t i = 0; i < count; ++i) {
      size_t j = (start + i) % cfg.window;
      std::copy(X.begin() + j * kF, X.begin() + (j + 1) * kF, sx.begin() + i * kF);
      sy[i] = y[j];
    }
  }

  void retrain() {
    if (!cfg.async) {
      snapshot(scratch_X, scratch_y);
      fresh = 0;
      auto m = timed_train(scratch_X, scratch_y);
      if (m) {
        model = std::move(m);
        adopted = ++published;
      }
      return;
    }
    std::unique_lock<std::mutex> lk(mu);
    if (busy) {
      // Still training: try again at the next sample, or wait once max_lag intervals behind.
      if (cfg.max_lag == 0 || fresh < cfg.max_lag * cfg.retrain_every) return;
      idle_cv.wait(lk, [this] { return !busy; });
    }
    snapshot(job_X, job_y);
    has_job = busy = true;
    fresh = 0;
    lk.unlock();
    cv.notify_one();
  }

  std::shared_ptr<const Model> timed_train(const std::vector<float>& sx,
                                           const std::vector<float>& sy) {
    auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<const Model> m;
    try {
      m = train(sx.data(), sy.data(), sy.size(), cfg, stop);
      if (m) {
        last_rounds = m->rounds;
        last_rmse = m->valid_rmse;
      }
    } catch (const Error& e) {
      ++failures;
      std::lock_guard<std::mutex> lk(mu);
      last_error = e.what();
    }
    train_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    return m;
  }

  void worker_loop() {
    std::vector<float> wx, wy;
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      cv.wait(lk, [this] { return stopping || has_job; });
      if (stopping) break;
      wx.swap(job_X);
      wy.swap(job_y);
      has_job = false;
      lk.unlock();
      auto m = timed_train(wx, wy);
      lk.lock();
      if (m) {
        pending = std::move(m);
        ++published;
      }
      busy = false;
      idle_cv.notify_all();
    }
    busy = false;
    idle_cv.notify_all();
  }

  void adopt() {
    if (!cfg.async || published.load(std::memory_order_acquire) == adopted) return;
    std::lock_guard<std::mutex> lk(mu);
    model = pending;
    adopted = published.load();
  }

  void run_model(const float* data, size_t n, float* out) {
    auto t0 = std::chrono::steady_clock::now();
    xgb::predict_dense(model->h, data, n, kF, model->rounds, out);
    model_rows += n;
    ++model_calls;
    model_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count();
  }
};

GbmPredictor::GbmPredictor(const GbmConfig& config, uint32_t block_tokens)
    : impl_(std::make_unique<Impl>(config, block_tokens)) {}

GbmPredictor::~GbmPredictor() = default;

void GbmPredictor::on_access(NodeId n, const AccessInfo& info) {
  float row[kF];
  float label;
  uint32_t depth_tokens = (info.position + 1) * impl_->block_tokens;
  if (impl_->features.on_access(n, info.now, depth_tokens, info.category, !info.reused(), row,
                                &label))
    impl_->add_sample(row, label);
}

uint64_t GbmPredictor::version() const { return impl_->published.load(std::memory_order_acquire); }

void GbmPredictor::do_predict(std::span<const NodeId> nodes, std::span<Time> out) {
  Impl& m = *impl_;
  m.adopt();
  if (!m.model) {
    std::fill(out.begin(), out.end(), kNever);
    return;
  }
  m.rows.clear();
  m.idx.clear();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (m.features.accesses(nodes[i]) < 2) {
      out[i] = kNever;  // no gap seen yet: "far future"
      continue;
    }
    m.idx.push_back(i);
    m.rows.resize(m.rows.size() + kF);
    m.features.row(nodes[i], m.rows.data() + m.rows.size() - kF);
  }
  if (m.idx.empty()) return;
  m.outs.resize(m.idx.size());
  try {
    m.run_model(m.rows.data(), m.idx.size(), m.outs.data());
  } catch (const Error& e) {
    ++m.failures;
    {
      std::lock_guard<std::mutex> lk(m.mu);
      m.last_error = e.what();
    }
    for (size_t i : m.idx) out[i] = kNever;
    return;
  }
  for (size_t j = 0; j < m.idx.size(); ++j) {
    size_t i = m.idx[j];
    double gap_s = std::expm1(std::clamp<double>(m.outs[j], 0.0, 25.0));
    out[i] = m.features.last_access(nodes[i]) + static_cast<Time>(std::llround(gap_s * 1e6));
  }
}

void GbmPredictor::predict_rows(const float* rows, size_t n, float* out) {
  impl_->adopt();
  if (!impl_->model) {
    std::fill(out, out + n, kNaN);
    return;
  }
  impl_->run_model(rows, n, out);
}

const FeatureTracker& GbmPredictor::features() const { return impl_->features; }
uint64_t GbmPredictor::samples() const { return impl_->samples; }
uint64_t GbmPredictor::retrains() const { return version(); }

void GbmPredictor::wait_idle() {
  if (!impl_->cfg.async) return;
  std::unique_lock<std::mutex> lk(impl_->mu);
  impl_->idle_cv.wait(lk, [this] { return !impl_->busy && !impl_->has_job; });
}

bool GbmPredictor::training() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->busy;
}

PolicyStats GbmPredictor::stats() const {
  PolicyStats s = NextAccessPredictor::stats();
  const Impl& m = *impl_;
  s.push_back({"samples", double(m.samples)});
  s.push_back({"retrains", double(m.published.load())});
  s.push_back({"train_seconds", m.train_ns.load() * 1e-9});
  s.push_back({"xgboost_failures", double(m.failures.load())});
  s.push_back({"last_rounds", double(m.last_rounds.load())});
  s.push_back({"last_valid_rmse", m.last_rmse.load()});
  s.push_back({"model_rows", double(m.model_rows)});
  s.push_back({"model_calls", double(m.model_calls)});
  s.push_back({"model_seconds", m.model_ns * 1e-9});
  return s;
}

}  // namespace kvpolicy
