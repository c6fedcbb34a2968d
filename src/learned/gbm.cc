// The LCR next-access predictor: online XGBoost regression of log1p(seconds to next access),
// retrained on a sliding window, inline (sync) or on a thread (async), by the shared trainer.
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
#include "kvpolicy/predict/registry.h"
#include "trainer.h"
#include "xgboost_handles.h"

namespace kvpolicy {
namespace {

constexpr int kF = FeatureTracker::kFeatures;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

using Model = learned::Boosted;

}  // namespace

struct GbmPredictor::Impl {
  GbmConfig cfg;
  uint32_t block_tokens;
  FeatureTracker features;
  learned::SampleWindow window;
  uint64_t samples = 0;

  std::shared_ptr<const Model> model;  // used by predictions (the caller's thread only)
  uint64_t published = 0;              // sync: models published so far

  std::atomic<int64_t> train_ns{0};
  std::atomic<uint64_t> failures{0};
  std::atomic<int> last_rounds{0};
  std::atomic<double> last_rmse{0};
  uint64_t model_rows = 0, model_calls = 0;
  int64_t model_ns = 0;
  std::mutex mu;
  std::string last_error;  // under mu
  std::atomic<bool> stop{false};

  std::vector<float> scratch_X, scratch_y, rows, outs;
  std::vector<size_t> idx;
  // Async: the background fit (last, so it stops before the rest goes).
  std::unique_ptr<learned::BackgroundFit<Model>> fit;

  Impl(const GbmConfig& c, uint32_t bt) : cfg(c), block_tokens(bt), window(c.window, kF) {
    if (cfg.async) fit = std::make_unique<learned::BackgroundFit<Model>>();
  }

  ~Impl() { stop = true; }

  uint64_t version() const { return fit ? fit->published() : published; }

  void add_sample(const float* row, float label) {
    window.add(row, label);
    ++samples;
    if (window.fresh() >= cfg.retrain_every && window.size() >= 10) retrain();
  }

  void retrain() {
    if (!fit) {
      window.take(scratch_X, scratch_y, kF);
      auto m = timed_train(scratch_X, scratch_y);
      if (m) {
        model = std::move(m);
        ++published;
      }
      return;
    }
    // Still training: try again at the next sample, or wait once max_lag intervals behind.
    bool wait = cfg.max_lag != 0 && window.fresh() >= cfg.max_lag * cfg.retrain_every;
    if (fit->busy() && !wait) return;
    auto job_X = std::make_shared<std::vector<float>>(),
         job_y = std::make_shared<std::vector<float>>();
    window.take(*job_X, *job_y, kF);
    fit->start([this, job_X, job_y] { return timed_train(*job_X, *job_y); }, true);
  }

  // The LCR regression of log1p(gap): squared error from the labels' mean (fewer trees needed),
  // early stopping on the hold-out's RMSE.
  std::shared_ptr<const Model> timed_train(const std::vector<float>& sx,
                                           const std::vector<float>& sy) {
    auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<const Model> m;
    try {
      learned::BoostSettings s{.objective = "reg:squarederror",
                               .max_rounds = cfg.max_rounds,
                               .max_depth = cfg.max_depth,
                               .eta = cfg.eta,
                               .seed = cfg.seed,
                               .metric = "rmse",
                               .holdout = cfg.holdout,
                               .patience = cfg.patience,
                               .base_score = [](const float* y, size_t n) {
                                 double mean = 0;
                                 for (size_t i = 0; i < n; ++i) mean += y[i];
                                 return fmt::format("{}", mean / double(n));
                               }};
      m = learned::boost(sx.data(), sy.data(), sy.size(), kF, s, &stop);
      if (m) {
        last_rounds = m->rounds;
        last_rmse = m->best;
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

  void adopt() {
    if (!fit) return;
    if (auto m = fit->adopt()) model = std::move(m);
  }

  void run_model(const float* data, size_t n, float* out) {
    auto t0 = std::chrono::steady_clock::now();
    xgb::predict_dense(model->booster.h, data, n, kF, model->rounds, out);
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

uint64_t GbmPredictor::version() const { return impl_->version(); }

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
  if (impl_->fit) impl_->fit->wait_idle();
}

bool GbmPredictor::training() const { return impl_->fit && impl_->fit->busy(); }

PolicyStats GbmPredictor::stats() const {
  PolicyStats s = NextAccessPredictor::stats();
  const Impl& m = *impl_;
  s.push_back({"samples", double(m.samples)});
  s.push_back({"retrains", double(m.version())});
  s.push_back({"train_seconds", m.train_ns.load() * 1e-9});
  s.push_back({"xgboost_failures", double(m.failures.load())});
  s.push_back({"last_rounds", double(m.last_rounds.load())});
  s.push_back({"last_valid_rmse", m.last_rmse.load()});
  s.push_back({"model_rows", double(m.model_rows)});
  s.push_back({"model_calls", double(m.model_calls)});
  s.push_back({"model_seconds", m.model_ns * 1e-9});
  return s;
}

namespace {

const bool registered = register_predictor({
    .name = "gbm",
    .summary = "the LCR paper's online XGBoost regression of the time to the next access",
    .params =
        {
            param_choice("mode", "sync", {"sync", "async"},
                         "sync = retrain inline (deterministic), async = background thread"),
            param_int("max_lag", 0, {.min = 0},
                      "async: retrain intervals the replay may run ahead of an unfinished "
                      "training before it waits (0 = never waits)"),
            param_int("window", 30000, {.min = 10}, "training samples kept (sliding window)"),
            param_int("retrain", 10000, {.min = 1}, "new samples between retrains"),
            param_int("trees", 300, {.min = 1},
                      "boosting rounds at most (early stopping on a 20% hold-out)"),
            param_int("depth", 6, {.min = 1}, "tree depth"),
            param_double("eta", 0.1, {.min = 0, .min_exclusive = true}, "learning rate"),
        },
    .flat_aliases = {{"mode", "mode"},
                     {"max_lag", "max_lag"},
                     {"window", "window"},
                     {"retrain", "retrain"},
                     {"trees", "trees"},
                     {"depth", "depth"},
                     {"eta", "eta"}},
    .configure =
        [](const Params& p, PredictorConfig& c) {
          c.gbm.async = p.get_string("mode") == "async";
          c.gbm.window = size_t(p.get_int("window"));
          c.gbm.retrain_every = size_t(p.get_int("retrain"));
          c.gbm.max_rounds = int(p.get_int("trees"));
          c.gbm.max_depth = int(p.get_int("depth"));
          c.gbm.eta = p.get_double("eta");
          c.gbm.max_lag = size_t(p.get_int("max_lag"));
        },
    .make = [](const PredictorConfig& c,
               const PredictorContext& ctx) -> std::unique_ptr<NextAccessPredictor> {
      const GbmConfig& g = c.gbm;
      if (g.window < 10) throw ConfigError("gbm window must be at least 10 samples");
      if (g.retrain_every < 1) throw ConfigError("gbm retrain interval must be at least 1");
      if (g.max_rounds < 1 || g.max_depth < 1 || !(g.eta > 0))
        throw ConfigError("gbm trees, depth and eta must be positive");
      if (!(g.holdout > 0 && g.holdout < 1)) throw ConfigError("gbm holdout must be in (0, 1)");
      GbmConfig cfg = g;
      cfg.seed = ctx.seed;
      return std::make_unique<GbmPredictor>(cfg, ctx.block_tokens);
    },
});

}  // namespace

}  // namespace kvpolicy
