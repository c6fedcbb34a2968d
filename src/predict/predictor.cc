// The predictor base (counting, timing), the audit wrapper and the factory.
#include "kvpolicy/predict/predictor.h"

#include <chrono>
#include <cmath>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

void NextAccessPredictor::predict(std::span<const NodeId> nodes, std::span<Time> out) {
  auto start = std::chrono::steady_clock::now();
  predictions_ += nodes.size();
  ++batches_;
  do_predict(nodes, out);
  predict_ns_ +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
}

PolicyStats NextAccessPredictor::stats() const {
  return {{"predictions", double(predictions_)},
          {"predict_batches", double(batches_)},
          {"predict_seconds", predict_ns_ * 1e-9}};
}

// --- AuditedPredictor -----------------------------------------------------------------------

AuditedPredictor::AuditedPredictor(std::unique_ptr<NextAccessPredictor> inner,
                                   const OracleView& future, uint64_t seed)
    : inner_(std::move(inner)), future_(future), rng_(mix64(seed ^ 0xa0d17ULL)) {
  ring_.reserve(4096);
}

void AuditedPredictor::on_access(NodeId n, const AccessInfo& info) {
  if (n >= last_access_.size()) {
    last_access_.resize(n + 1024, 0);
    last_req_.resize(n + 1024, 0);
  }
  last_access_[n] = info.access;
  last_req_[n] = info.req;
  inner_->on_access(n, info);
}

void AuditedPredictor::do_predict(std::span<const NodeId> nodes, std::span<Time> out) {
  inner_->predict(nodes, out);
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeId n = nodes[i];
    Time now = future_.request_time[last_req_[n]];
    Time truth = future_.next_time(last_access_[n]);
    Time pred = out[i];
    ++scored_;
    if (pred == kNever) ++far_;
    if (truth != kNever) {
      ++finite_truth_;
      if (pred != kNever) {
        // Gaps below zero (a prediction before the access itself) count as zero.
        double pg = std::max<double>(0, double(pred - now)) * 1e-6;
        double tg = std::max<double>(0, double(truth - now)) * 1e-6;
        abs_log_error_ += std::fabs(std::log1p(pg) - std::log1p(tg));
        ++log_error_n_;
      }
    }
    // Pair with a random recent prediction of another request.
    if (!ring_.empty()) {
      rng_ = mix64(rng_ + 0x9e3779b97f4a7c15ULL);
      const Seen& o = ring_[rng_ % ring_.size()];
      if (o.req != last_req_[n] && o.truth != truth) {
        ++pairs_;
        if (o.predicted == pred) {
          pairs_right_ += 0.5;
        } else if ((o.predicted < pred) == (o.truth < truth)) {
          pairs_right_ += 1;
        }
      }
    }
    Seen s{pred, truth, last_req_[n]};
    if (ring_.size() < 4096) {
      ring_.push_back(s);
    } else {
      ring_[ring_next_] = s;
      ring_next_ = (ring_next_ + 1) % ring_.size();
    }
  }
}

PolicyStats AuditedPredictor::stats() const {
  PolicyStats s = inner_->stats();
  s.push_back({"audit_predictions", double(scored_)});
  s.push_back({"audit_far_future_share", scored_ ? double(far_) / scored_ : 0});
  s.push_back({"audit_finite_truth", double(finite_truth_)});
  s.push_back({"audit_mean_abs_log_error", log_error_n_ ? abs_log_error_ / log_error_n_ : 0});
  s.push_back({"audit_log_error_count", double(log_error_n_)});
  s.push_back({"audit_pairs", double(pairs_)});
  s.push_back({"audit_ranking_accuracy", pairs_ ? pairs_right_ / pairs_ : 0});
  return s;
}

// --- parameters -----------------------------------------------------------------------------

std::vector<ParamSpec> predictor_param_specs() {
  return {
      param_choice("predictor", "oracle", {"oracle", "noisy", "gbm"},
                   "oracle and noisy read the trace's future"),
      param_double("p", 0, {.min = 0, .max = 1},
                   "noisy: probability that a prediction is corrupted (per draw, see redraw)"),
      param_choice("noise", "adversarial", {"adversarial", "lognormal"},
                   "noisy: adversarial = negated true next time, lognormal = next + noise"),
      param_choice("redraw", "request", {"request", "access"},
                   "noisy: draw the corruption afresh at every request (the paper's sync mode: "
                   "each eviction call predicts anew) or only at each access of the block (a "
                   "persistent adversary: a corrupted prediction stays until the block is used)"),
      param_double("sigma", 1, {.min = 0}, "noisy, lognormal: next + LogNormal(0, sigma) seconds"),
      param_choice("mode", "sync", {"sync", "async"},
                   "gbm: sync = retrain inline (deterministic), async = background thread"),
      param_int("max_lag", 0, {.min = 0},
                "gbm async: retrain intervals the replay may run ahead of an unfinished training "
                "before it waits (0 = never waits)"),
      param_int("window", 30000, {.min = 10}, "gbm: training samples kept (sliding window)"),
      param_int("retrain", 10000, {.min = 1}, "gbm: new samples between retrains"),
      param_int("trees", 300, {.min = 1},
                "gbm: boosting rounds at most (early stopping on a 20% hold-out)"),
      param_int("depth", 6, {.min = 1}, "gbm: tree depth"),
      param_double("eta", 0.1, {.min = 0, .min_exclusive = true}, "gbm: learning rate"),
      param_bool("audit", false, "score predictions against the oracle (stats audit_*)"),
  };
}

PredictorConfig predictor_config(const Params& p) {
  PredictorConfig c;
  c.kind = p.get_string("predictor");
  c.p = p.get_double("p");
  c.noise = p.get_string("noise") == "lognormal" ? NoiseKind::kLogNormal : NoiseKind::kAdversarial;
  c.redraw =
      p.get_string("redraw") == "access" ? NoiseRedraw::kPerAccess : NoiseRedraw::kPerRequest;
  c.sigma = p.get_double("sigma");
  c.gbm.async = p.get_string("mode") == "async";
  c.gbm.window = size_t(p.get_int("window"));
  c.gbm.retrain_every = size_t(p.get_int("retrain"));
  c.gbm.max_rounds = int(p.get_int("trees"));
  c.gbm.max_depth = int(p.get_int("depth"));
  c.gbm.eta = p.get_double("eta");
  c.gbm.max_lag = size_t(p.get_int("max_lag"));
  c.audit = p.get_bool("audit");
  return c;
}

// --- factory --------------------------------------------------------------------------------

std::unique_ptr<NextAccessPredictor> make_predictor(const PredictorConfig& c,
                                                    const PredictorContext& ctx) {
  std::unique_ptr<NextAccessPredictor> p;
  bool needs_future = c.kind == "oracle" || c.kind == "noisy" || c.audit;
  if (needs_future && !ctx.future)
    throw ConfigError("predictor '" + c.kind + "'" + (c.audit ? " with audit" : "") +
                      " needs the trace's oracle");
  if (c.kind == "oracle") {
    p = std::make_unique<OraclePredictor>(*ctx.future);
  } else if (c.kind == "noisy") {
    if (!(c.p >= 0 && c.p <= 1)) throw ConfigError("noise probability p must be in [0, 1]");
    if (!(c.sigma >= 0)) throw ConfigError("sigma must be >= 0");
    p = std::make_unique<NoisyPredictor>(*ctx.future, c.p, c.noise, c.sigma, ctx.seed, c.redraw);
  } else if (c.kind == "gbm") {
    const GbmConfig& g = c.gbm;
    if (g.window < 10) throw ConfigError("gbm window must be at least 10 samples");
    if (g.retrain_every < 1) throw ConfigError("gbm retrain interval must be at least 1");
    if (g.max_rounds < 1 || g.max_depth < 1 || !(g.eta > 0))
      throw ConfigError("gbm trees, depth and eta must be positive");
    if (!(g.holdout > 0 && g.holdout < 1)) throw ConfigError("gbm holdout must be in (0, 1)");
    GbmConfig cfg = g;
    cfg.seed = ctx.seed;
    p = std::make_unique<GbmPredictor>(cfg, ctx.block_tokens);
  } else {
    throw ConfigError("unknown predictor '" + c.kind + "' (known: oracle, noisy, gbm)");
  }
  if (c.audit) p = std::make_unique<AuditedPredictor>(std::move(p), *ctx.future, ctx.seed);
  return p;
}

}  // namespace kvpolicy
