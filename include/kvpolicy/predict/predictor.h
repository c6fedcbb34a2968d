// Next-access predictors for the learned policies (LARU, FPB, HF; docs/policies.md):
// the oracle, the noisy oracle and the online GBM (XGBoost). A predictor is told of every block
// access and answers, in batches, the predicted absolute time of each block's next access.
//
// Semantics shared by all: a prediction depends only on what the predictor saw up to the block's
// last access, on the current model (the GBM) and on the current request's noise draw (the
// noisy oracle with redraw=request). Callers therefore predict a block once after each access
// and every cached block again when version() changes. With the oracle and the GBM this returns
// what predicting the candidates at every eviction (the paper's sync mode) would, at O(1)
// predictions per access. The noisy oracle's sync-mode equivalent is redraw=request (a fresh
// draw at each request's eviction call); redraw=access (a draw fixed until the block is
// accessed again) is a persistent adversary, closer to the paper's async mode: not the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/core/access.h"
#include "kvpolicy/core/oracle_view.h"
#include "kvpolicy/core/params.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

// What a predictor may read when built. Only the oracle and noisy predictors (and the audit)
// read the future; the GBM learns from the accesses it is told of.
struct PredictorContext {
  uint32_t block_tokens = 16;
  uint64_t seed = 1;
  std::optional<OracleView> future;  // copied by the predictors that read it
};

class NextAccessPredictor {
 public:
  virtual ~NextAccessPredictor() = default;
  // Each request, before its block accesses and any eviction it causes (what the request and
  // its session look like).
  virtual void on_request_begin(const RequestView&) {}
  // Every block access, root first. Unless info.reused(), the node id is new to this tier
  // (inserted, promoted or demoted into it), so whatever the predictor knew under it is reset.
  virtual void on_access(NodeId n, const AccessInfo& info) = 0;
  virtual void on_removed(NodeId) {}
  // Predicted absolute next-access time of each node (microseconds; kNever = not again, or
  // "far future"). Counts the predictions requested.
  void predict(std::span<const NodeId> nodes, std::span<Time> out);
  // Changes whenever earlier predictions may be stale (the GBM swapped in a new model, the noisy
  // oracle redrew its noise for a new request).
  virtual uint64_t version() const { return 0; }
  uint64_t predictions() const { return predictions_; }  // nodes predicted so far
  uint64_t batches() const { return batches_; }          // predict() calls so far
  // Counters for reports: predictions, batches, predict_seconds, and the predictor's own.
  virtual PolicyStats stats() const;

 protected:
  virtual void do_predict(std::span<const NodeId> nodes, std::span<Time> out) = 0;

 private:
  uint64_t predictions_ = 0, batches_ = 0;
  int64_t predict_ns_ = 0;
};

// Request times made strictly increasing (t'_r = max(t_r, t'_{r-1} + 1 us)), so that two
// requests sharing a timestamp (the Mooncake trace has about ten per 3 s step) still have
// distinct next-use times in request order: the order Belady uses. Drift is one microsecond per
// request sharing a timestamp.
std::vector<Time> strict_request_times(std::span<const Time> request_time);

// The trace's true next use: the (strict) time of the next request holding the block's key,
// kNever if none.
class OraclePredictor : public NextAccessPredictor {
 public:
  explicit OraclePredictor(const OracleView& future);
  void on_access(NodeId n, const AccessInfo& info) override;
  // True next-use time of n's last access (strict clock).
  Time true_next(NodeId n) const;
  uint64_t last_access(NodeId n) const { return last_access_[n]; }

 protected:
  void do_predict(std::span<const NodeId> nodes, std::span<Time> out) override;

 private:
  OracleView future_;
  std::vector<Time> strict_;
  std::vector<uint64_t> last_access_;  // flat access index of each node's last access
};

enum class NoiseKind { kAdversarial, kLogNormal };
// When the noisy oracle draws a block's corruption afresh.
enum class NoiseRedraw {
  // At every request: the paper's sync LLM mode, where each eviction call (one per request in
  // SGLang) predicts its candidates anew, so a corrupted block is judged again next time.
  kPerRequest,
  // At every access of the block only: a corrupted prediction persists until the block is used
  // again (a persistent adversary; the paper's async mode refreshes predictions as rarely).
  kPerAccess,
};

// The oracle, corrupted with probability p per draw; a seeded hash decides, so a draw is the
// same for every policy and every call. A draw is keyed by (seed, the block's last access) with
// redraw=access, and by (seed, last access, current request) with redraw=request:
//   adversarial: -(true next time): the block needed soonest looks furthest (paper Fig. 5, 13);
//   lognormal:   true next + LogNormal(0, sigma) seconds (kNever stays kNever).
class NoisyPredictor : public OraclePredictor {
 public:
  NoisyPredictor(const OracleView& future, double p, NoiseKind kind, double sigma, uint64_t seed,
                 NoiseRedraw redraw);
  void on_request_begin(const RequestView& r) override;
  // redraw=request: changes with each new request whose draw can differ (not at p = 0, nor at
  // p = 1 with adversarial noise, where every draw is the same).
  uint64_t version() const override { return version_; }
  PolicyStats stats() const override;

 protected:
  void do_predict(std::span<const NodeId> nodes, std::span<Time> out) override;

 private:
  double p_, sigma_;
  NoiseKind kind_;
  uint64_t seed_;
  bool redraws_;  // redraw=request and the draw matters
  RequestIndex request_ = kNoRequest;
  uint64_t version_ = 0;
  uint64_t corrupted_ = 0;
};

// Per-block features of the LCR predictor, in arrays indexed by NodeId: the last 10
// inter-access gaps (seconds, most recent first; missing = kMissingGap), 10 exponentially
// decayed counters EDC_i <- 1 + EDC_i * 2^(-gap / 2^(9+i)) (gap in seconds), the depth in
// tokens and the category.
class FeatureTracker {
 public:
  static constexpr int kGaps = 10;
  static constexpr int kEdcs = 10;
  static constexpr int kFeatures = kGaps + kEdcs + 2;
  // A gap never seen: larger than any real one (XGBoost rejects +inf in its input).
  static constexpr float kMissingGap = 1e7f;

  void resize(size_t ids);
  // Records an access of n at `now`. fresh: n now names a new block (history reset). When the
  // block had at least two earlier accesses, its features as of its previous access (a model
  // input) go to `row`, the label log1p(seconds since that access) to *label, and it returns true.
  bool on_access(NodeId n, Time now, uint32_t depth_tokens, CategoryId category, bool fresh,
                 float* row, float* label);
  // Features as of n's last access (kFeatures floats).
  void row(NodeId n, float* out) const;
  uint32_t accesses(NodeId n) const { return state_[n].count; }
  Time last_access(NodeId n) const { return state_[n].last; }

 private:
  struct State {
    Time last = 0;
    uint32_t count = 0;
    float depth = 0, category = 0;
    float gaps[kGaps];
    float edc[kEdcs];
  };
  std::vector<State> state_;
};

struct GbmConfig {
  size_t window = 30000;         // training samples kept (sliding window)
  size_t retrain_every = 10000;  // new samples between retrains (the first after this many)
  int max_rounds = 300;          // boosting rounds at most
  int max_depth = 6;
  double eta = 0.1;
  double holdout = 0.2;  // share of the window (its most recent samples) for early stopping
  int patience = 10;     // rounds without hold-out improvement before stopping
  bool async = false;    // retrain on a background thread
  // Async: how many retrain intervals the replay may run ahead of a training still under way
  // before it waits for it (bounded staleness); 0 = never wait.
  size_t max_lag = 0;
  uint64_t seed = 1;
};

// The LCR next-access predictor (docs/policies.md, "Predictors"): XGBoost regression of
// log1p(seconds to next access) on FeatureTracker's features, trained online on a sliding
// window of observed labels. Blocks with fewer than two accesses, and every block before the
// first model exists, predict kNever ("far future"). P = last access + expm1(output) seconds.
// Sync mode retrains inline and is deterministic; async mode retrains a snapshot of the window
// on a background thread and swaps the model in; the caller never waits for training, unless
// max_lag bounds how far it may run ahead.
class GbmPredictor : public NextAccessPredictor {
 public:
  GbmPredictor(const GbmConfig& config, uint32_t block_tokens);
  ~GbmPredictor() override;
  void on_access(NodeId n, const AccessInfo& info) override;
  uint64_t version() const override;
  PolicyStats stats() const override;

  // Model output (predicted log1p gap in seconds) for raw feature rows; NaN without a model.
  void predict_rows(const float* rows, size_t n, float* out);
  const FeatureTracker& features() const;
  uint64_t samples() const;   // labelled samples observed
  uint64_t retrains() const;  // models published
  void wait_idle();           // async: blocks until no retrain is running (tests, reports)
  bool training() const;      // async: a retrain was handed to the worker and is not done

 protected:
  void do_predict(std::span<const NodeId> nodes, std::span<Time> out) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Measures a predictor against the oracle while passing its answers through: mean absolute
// error of log1p(predicted gap) vs log1p(true gap) in seconds (over predictions where both are
// finite), the share of "far future" answers, and pairwise ranking accuracy: each prediction is
// paired with a random one among the last 4096 from other requests, and counts as right when
// the predicted next-access times are ordered as the true ones (ties in prediction: half).
class AuditedPredictor : public NextAccessPredictor {
 public:
  AuditedPredictor(std::unique_ptr<NextAccessPredictor> inner, const OracleView& future,
                   uint64_t seed);
  void on_request_begin(const RequestView& r) override { inner_->on_request_begin(r); }
  void on_access(NodeId n, const AccessInfo& info) override;
  void on_removed(NodeId n) override { inner_->on_removed(n); }
  uint64_t version() const override { return inner_->version(); }
  PolicyStats stats() const override;

 protected:
  void do_predict(std::span<const NodeId> nodes, std::span<Time> out) override;

 private:
  struct Seen {
    Time predicted, truth;
    RequestIndex req;
  };
  std::unique_ptr<NextAccessPredictor> inner_;
  OracleView future_;
  std::vector<uint64_t> last_access_;
  std::vector<RequestIndex> last_req_;
  std::vector<Seen> ring_;
  size_t ring_next_ = 0;
  uint64_t rng_;
  double abs_log_error_ = 0;
  uint64_t scored_ = 0, far_ = 0, finite_truth_ = 0, log_error_n_ = 0;
  double pairs_right_ = 0;
  uint64_t pairs_ = 0;
};

// The reuse predictor's settings (reuse_predictor.h: a classifier of reuse within horizon H).
struct ReuseConfig {
  double horizon_s = 0;           // H; 0 = horizon_x times the measured residence time
  double horizon_x = 1;           // adaptive H: multiple of the mean age of removed blocks
  double initial_horizon_s = 60;  // adaptive H before the first removal
  double bonus_x = 1;          // keep-score: last access + bonus_x * H * log-odds of reuse within H
  double sample = 0.1;         // share of accesses that become training samples
  size_t key_table = 1 << 18;  // block keys remembered (bounded table)
  size_t session_table = 1 << 16;  // sessions remembered
  size_t window = 40000;           // resolved samples kept for training (sliding window)
  size_t first_fit = 1000;       // resolved samples before the first fit; the interval then doubles
  size_t retrain_every = 20000;  // ... up to this many
  int max_rounds = 30;
  int max_depth = 5;
  double eta = 0.2;
  double holdout = 0.2;  // newest share of the window for early stopping
  int patience = 5;
  std::string load_model;  // a frozen model (no online training); see save_model
  std::string save_model;  // at the end, fit one model on every resolved sample and save it
  uint64_t seed = 1;
};

struct PredictorConfig {
  std::string kind = "oracle";  // oracle | noisy | gbm | reuse
  double p = 0;                 // noisy: corruption probability
  NoiseKind noise = NoiseKind::kAdversarial;
  NoiseRedraw redraw = NoiseRedraw::kPerRequest;  // noisy: when a draw is made afresh
  double sigma = 1;    // noisy, lognormal: sigma of the underlying normal
  bool audit = false;  // wrap in AuditedPredictor (needs the trace and oracle)
  GbmConfig gbm;
  ReuseConfig reuse;
};

// The predictor parameters every learned policy takes: `predictor`, the registered predictor's
// name with its own parameters nested (`predictor=reuse(window=20000,trees=50)`, see
// registry.h), `audit`, and the flat spellings of the predictors' parameters from before they
// were nested (deprecated); and their parsing into a config (throws ConfigError).
std::vector<ParamSpec> predictor_param_specs();
PredictorConfig predictor_config(const Params& params);

// Builds the registered predictor `config.kind`; throws ConfigError on an unknown kind, a learned
// one this build lacks, or a missing oracle.
std::unique_ptr<NextAccessPredictor> make_predictor(const PredictorConfig& config,
                                                    const PredictorContext& ctx);

}  // namespace kvpolicy
