// The predictor base (counting, timing), the audit wrapper and the factory.
#include "kvpolicy/predict/predictor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kvpolicy/core/error.h"
#include "kvpolicy/predict/reuse_predictor.h"

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
      param_choice("predictor", "oracle", {"oracle", "noisy", "gbm", "reuse"},
                   "oracle and noisy read the trace's future; gbm is the LCR paper's regression; "
                   "reuse classifies reuse within a horizon (reuse_predictor.h)"),
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
      param_double("horizon", 0, {.min = 0},
                   "reuse: label horizon H in seconds (0 = horizon_x times the residence time)"),
      param_double("horizon_x", 1, {.min = 0, .min_exclusive = true},
                   "reuse: adaptive H as a multiple of the mean age of removed blocks"),
      param_double("bonus_x", 1, {.min = 0},
                   "reuse: a block ranks as if last used bonus_x * H * log-odds(reuse) later"),
      param_double("sample", 0.1, {.min = 0, .max = 1, .min_exclusive = true},
                   "reuse: share of accesses that become training samples"),
      param_int("key_table", 1 << 18, {.min = 2}, "reuse: block keys remembered (bounded)"),
      param_int("session_table", 1 << 16, {.min = 2}, "reuse: sessions remembered (bounded)"),
      param_int("reuse_window", 40000, {.min = 10}, "reuse: resolved samples kept for training"),
      param_int("first_fit", 1000, {.min = 10},
                "reuse: resolved samples before the first fit; the interval then doubles"),
      param_int("reuse_retrain", 20000, {.min = 1}, "reuse: largest interval between fits"),
      param_int("reuse_trees", 30, {.min = 1}, "reuse: boosting rounds at most"),
      param_double("reuse_eta", 0.2, {.min = 0, .min_exclusive = true}, "reuse: learning rate"),
      param_int("reuse_depth", 5, {.min = 1}, "reuse: tree depth"),
      param_string("load_model", "", "reuse: replay with this saved model, frozen"),
      param_string("save_model", "",
                   "reuse: at the end, fit one model on every resolved sample and save it here "
                   "(the offline upper bound replays it with load_model)"),
  };
}

namespace {

// The predictor that alone reads a parameter ("" = every predictor).
std::string only_predictor_reading(const std::string& name) {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kOwn = {
      {"noisy", {"p", "noise", "redraw", "sigma"}},
      {"gbm", {"mode", "max_lag", "window", "retrain", "trees", "depth", "eta"}},
      {"reuse",
       {"horizon", "horizon_x", "bonus_x", "sample", "key_table", "session_table", "reuse_window",
        "first_fit", "reuse_retrain", "reuse_trees", "reuse_eta", "reuse_depth", "load_model",
        "save_model"}}};
  for (auto& [kind, names] : kOwn)
    if (std::find(names.begin(), names.end(), name) != names.end()) return kind;
  return "";
}

// A parameter of another predictor would be silently ignored (laru:p=0.2 without
// predictor=noisy ran the exact oracle): an error naming it. Values equal to the default pass,
// so a spelled-out canonical parameter list still parses.
void reject_other_predictors_params(const Params& p, const std::string& kind) {
  for (const ParamSpec& s : predictor_param_specs()) {
    std::string reader = only_predictor_reading(s.name);
    if (reader.empty() || reader == kind) continue;
    bool is_default = s.kind == ParamKind::kInt ? p.get_int(s.name) == std::stoll(s.default_value)
                      : s.kind == ParamKind::kDouble
                          ? p.get_double(s.name) == std::stod(s.default_value)
                          : p.get_string(s.name) == s.default_value;
    if (!is_default)
      throw ConfigError(p.owner() + ": parameter " + s.name + " applies to predictor=" + reader +
                        " only (this one is predictor=" + kind + ")");
  }
}

}  // namespace

PredictorConfig predictor_config(const Params& p) {
  PredictorConfig c;
  c.kind = p.get_string("predictor");
  reject_other_predictors_params(p, c.kind);
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
  ReuseConfig& r = c.reuse;
  r.horizon_s = p.get_double("horizon");
  r.horizon_x = p.get_double("horizon_x");
  r.sample = p.get_double("sample");
  r.bonus_x = p.get_double("bonus_x");
  r.key_table = size_t(p.get_int("key_table"));
  r.session_table = size_t(p.get_int("session_table"));
  r.window = size_t(p.get_int("reuse_window"));
  r.first_fit = size_t(p.get_int("first_fit"));
  r.retrain_every = size_t(p.get_int("reuse_retrain"));
  r.max_rounds = int(p.get_int("reuse_trees"));
  r.max_depth = int(p.get_int("reuse_depth"));
  r.eta = p.get_double("reuse_eta");
  r.load_model = p.get_string("load_model");
  r.save_model = p.get_string("save_model");
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
  } else if (c.kind == "reuse") {
    ReuseConfig cfg = c.reuse;
    if (!(cfg.sample > 0 && cfg.sample <= 1)) throw ConfigError("reuse sample must be in (0, 1]");
    if (cfg.window < 10 || cfg.first_fit < 10 || cfg.retrain_every < 1 || cfg.max_rounds < 1 ||
        cfg.max_depth < 1 || !(cfg.eta > 0) || !(cfg.horizon_s >= 0) || !(cfg.horizon_x > 0))
      throw ConfigError("reuse predictor: window and first_fit >= 10, the rest positive");
    if (!cfg.load_model.empty() && !cfg.save_model.empty())
      throw ConfigError("reuse predictor: load_model and save_model exclude each other");
    cfg.seed = ctx.seed;
    p = std::make_unique<ReusePredictor>(cfg, ctx.block_tokens);
  } else {
    throw ConfigError("unknown predictor '" + c.kind + "' (known: oracle, noisy, gbm, reuse)");
  }
  if (c.audit) p = std::make_unique<AuditedPredictor>(std::move(p), *ctx.future, ctx.seed);
  return p;
}

}  // namespace kvpolicy
