// The reuse predictor: per-key and per-session history in bounded tables, uncensored labels
// ("reused within H" or not, resolved by the next access or by the clock), an XGBoost binary
// classifier fitted inline on a sliding window, and a compiled copy of it for inference.
#include "kvpolicy/predict/reuse_predictor.h"

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>

#include "kvpolicy/core/error.h"
#include "kvpolicy/predict/binary_metrics.h"
#include "kvpolicy/predict/registry.h"
#include "trainer.h"

namespace kvpolicy {
namespace {

constexpr int kF = ReuseFeatures::kCount;
constexpr float kMissing = ReuseFeatures::kMissing;
// Priorities are kPriorityOrigin - keep-score: positive, below kNever, for any trace time.
constexpr Time kPriorityOrigin = Time{1} << 62;
using Row = std::array<float, kF>;

using xgb::check;

double seconds(Time us) { return double(us) / double(kMicrosPerSecond); }

// A model: the booster (for saving, importance and the equality check) and its compiled copy.
struct Model {
  xgb::Booster booster;
  learned::Compiled compiled;
};

std::string feature_name(int f) { return f < kF ? ReuseFeatures::name(f) : ""; }

// Fits on n rows in chronological order; the newest `holdout` share stops the boosting, and the
// model keeps the rounds up to the best one.
std::unique_ptr<Model> fit(const float* X, const float* y, size_t n, const ReuseConfig& c) {
  learned::BoostSettings s{
      .objective = "binary:logistic",
      .max_rounds = c.max_rounds,
      .max_depth = c.max_depth,
      .eta = c.eta,
      .seed = c.seed,
      .metric = "logloss",
      .holdout = c.holdout,
      .patience = c.patience,
      .params = {{"max_bin", "64"}},  // coarse bins: fits are the predictor's main cost
      .base_score = [](const float* y, size_t n) {
        double positive = 0;
        for (size_t i = 0; i < n; ++i) positive += y[i];
        return fmt::format("{}", std::clamp(positive / double(n), 0.01, 0.99));
      }};
  std::unique_ptr<learned::Boosted> b = learned::boost(X, y, n, kF, s);
  auto m = std::make_unique<Model>();
  check(XGBoosterSlice(b->booster.h, 0, b->rounds, 1, &m->booster.h), "slice");
  m->compiled = learned::compile(m->booster.h, feature_name);
  return m;
}

// A saved model, frozen (load_model).
std::unique_ptr<Model> load(const std::string& path) {
  auto m = std::make_unique<Model>();
  check(XGBoosterCreate(nullptr, 0, &m->booster.h), "booster");
  check(XGBoosterLoadModel(m->booster.h, path.c_str()), ("load " + path).c_str());
  m->compiled = learned::compile(m->booster.h, feature_name);
  return m;
}

double auc_of(const std::vector<float>& margin, const std::vector<uint8_t>& label) {
  std::vector<double> p(margin.begin(), margin.end());
  double a = auc(p, label);
  return std::isnan(a) ? 0 : a;
}

}  // namespace

struct ReusePredictor::Impl {
  ReuseConfig cfg;
  uint32_t block_tokens;

  struct KeyState {
    Time first = 0, last = 0;
    float previous_gap = kMissing;
    uint32_t accesses = 0, sessions = 0;
    SessionId session = kNoSession;
    uint64_t pending = 0;  // sequence number of the key's unresolved sample (0: none)
  };
  struct SessionState {
    Time first = 0, last = 0;
    uint32_t turns = 0, prompt_blocks = 0;
    RequestIndex request = 0;
  };
  GenerationalMap<KeyState> keys;
  GenerationalMap<SessionState> sessions;

  // The current request.
  std::span<const BlockKey> blocks;
  Row request_row{};  // the request's and its session's features
  Time now = 0;
  bool started = false;
  RequestIndex request = 0;

  // Per node: its last access's features and time.
  struct NodeState {
    Row row;
    Time last = 0;
    bool known = false;
  };
  std::vector<NodeState> nodes;

  // Horizon: fixed, or horizon_x times the mean age of removed blocks (an estimate of how long
  // a block stays in this cache unused).
  double residence_s = 0;
  uint64_t removals = 0;

  // Unresolved samples, in access order; sequence numbers start at 1.
  struct Pending {
    Row row;
    Time at, horizon;
    bool done = false;
    float margin = 0;  // the model's answer when the access was made (NaN: no model yet)
  };
  std::deque<Pending> pending;
  uint64_t first_seq = 1;

  // Resolved samples, a ring (unbounded when a model is to be saved).
  learned::SampleWindow window;
  learned::RetrainSchedule schedule;
  uint64_t positives = 0, negatives_timeout = 0, negatives_late = 0, samples_dropped = 0;

  // Out-of-sample quality: each resolved sample's label and the answer the model of its time
  // gave (a model never saw the sample it answers), for the AUC against the oracle's label.
  std::vector<float> scored_margin;
  std::vector<uint8_t> scored_label;

  std::unique_ptr<Model> model;
  uint64_t published = 0;
  bool frozen = false;
  int64_t fit_ns = 0, model_ns = 0;
  uint64_t fits = 0, model_rows = 0;
  std::string error;

  Impl(const ReuseConfig& c, uint32_t bt)
      : cfg(c),
        block_tokens(bt),
        keys(c.key_table),
        sessions(c.session_table),
        window(c.save_model.empty() ? c.window : 0, kF),
        schedule(c.first_fit, c.retrain_every) {
    if (!cfg.load_model.empty()) {
      model = load(cfg.load_model);
      published = 1;
      frozen = true;
    }
  }

  double horizon() const {
    if (cfg.horizon_s > 0) return cfg.horizon_s;
    return removals ? cfg.horizon_x * residence_s : cfg.initial_horizon_s;
  }

  void add_sample(const Row& row, float label, float margin) {
    if (!std::isnan(margin)) {
      scored_margin.push_back(margin);
      scored_label.push_back(label > 0 ? 1 : 0);
    }
    window.add(row.data(), label);
  }

  // Samples whose horizon has passed unreused are negatives: the censored class.
  void expire(Time t) {
    while (!pending.empty() &&
           (pending.front().done || pending.front().at + pending.front().horizon < t)) {
      if (!pending.front().done) {
        add_sample(pending.front().row, 0, pending.front().margin);
        ++negatives_timeout;
      }
      pending.pop_front();
      ++first_seq;
    }
  }

  void resolve(uint64_t seq, Time t) {
    if (seq < first_seq || seq - first_seq >= pending.size()) return;
    Pending& p = pending[seq - first_seq];
    if (p.done) return;
    p.done = true;
    bool reused = t - p.at <= p.horizon;
    add_sample(p.row, reused ? 1.f : 0.f, p.margin);
    ++(reused ? positives : negatives_late);
  }

  void refit() {
    std::vector<float> sx, sy;
    window.take(sx, sy, kF);
    schedule.fitted();
    float pos = 0;
    for (float v : sy) pos += v;
    if (pos == 0 || pos == float(sy.size())) return;  // one class only: nothing to learn yet
    auto t0 = std::chrono::steady_clock::now();
    try {
      model = fit(sx.data(), sy.data(), sy.size(), cfg);
      ++published;
      ++fits;
    } catch (const Error& e) {
      error = e.what();
    }
    fit_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count();
  }

  void on_request_begin(const RequestView& r) {
    if (started && r.index == request) return;  // told twice (serve mode's completion)
    started = true;
    request = r.index;
    blocks = r.blocks;
    now = std::max(now, r.time);
    expire(now);
    if (!frozen && schedule.due(window.fresh()) && window.size() >= 10) refit();
    Row& q = request_row;
    q.fill(kMissing);
    q[ReuseFeatures::kTraceTurn] = float(r.turn);
    q[ReuseFeatures::kPromptTokens] = float(r.prompt_tokens);
    q[ReuseFeatures::kOutputTokens] = float(r.output_tokens);
    q[ReuseFeatures::kPromptBlocks] = float(r.blocks.size());
    q[ReuseFeatures::kCategory] = float(r.category);
    q[ReuseFeatures::kHorizon] = float(horizon());
    q[ReuseFeatures::kSessionTurns] = 1;
    if (r.session == kNoSession) return;
    bool found;
    SessionState& s = sessions.get(r.session, &found);
    if (!found) {
      s.first = r.time;
    } else {
      q[ReuseFeatures::kSessionLastGap] = float(seconds(r.time - s.last));
      q[ReuseFeatures::kSessionMeanGap] = float(seconds(r.time - s.first) / s.turns);
      q[ReuseFeatures::kSessionGrowth] = float(double(r.blocks.size()) - s.prompt_blocks);
    }
    ++s.turns;
    s.last = r.time;
    s.prompt_blocks = uint32_t(r.blocks.size());
    q[ReuseFeatures::kSessionTurns] = float(s.turns);
    q[ReuseFeatures::kSessionAge] = float(seconds(r.time - s.first));
  }

  void on_access(NodeId n, const AccessInfo& info) {
    if (n >= nodes.size()) nodes.resize(std::max<size_t>(n + 1, nodes.size() * 2));
    NodeState& ns = nodes[n];
    if (info.kind == AccessKind::kDemoted || info.position >= blocks.size()) {
      ns.known = false;  // not this request's block: no access to learn from
      return;
    }
    now = std::max(now, info.now);
    bool found;
    KeyState& k = keys.get(blocks[info.position], &found);
    if (found && k.pending) resolve(k.pending, now);
    Row& row = ns.row;
    row = request_row;
    row[ReuseFeatures::kDepthTokens] = float((info.position + 1) * block_tokens);
    row[ReuseFeatures::kBlocksToEnd] = float(blocks.size() - 1 - info.position);
    row[ReuseFeatures::kEndsPrompt] = info.position + 1 == blocks.size() ? 1.f : 0.f;
    if (!found) {
      k.first = now;
      k.sessions = 1;
    } else {
      float since = float(seconds(now - k.last));
      row[ReuseFeatures::kSincePrevious] = since;
      row[ReuseFeatures::kPreviousGap] = k.previous_gap;
      k.previous_gap = since;
      if (info.session != k.session) ++k.sessions;
    }
    ++k.accesses;
    k.last = now;
    k.session = info.session;
    row[ReuseFeatures::kKeyAccesses] = float(k.accesses);
    row[ReuseFeatures::kKeyAge] = float(seconds(now - k.first));
    row[ReuseFeatures::kKeySessions] = float(k.sessions);
    ns.last = now;
    ns.known = true;
    k.pending = 0;
    // A seeded hash of the access picks the samples: the same ones for every policy.
    if (!frozen && double(mix64(info.access ^ mix64(cfg.seed)) >> 11) * 0x1.0p-53 < cfg.sample) {
      pending.push_back(
          {row, now, Time(double(row[ReuseFeatures::kHorizon]) * double(kMicrosPerSecond))});
      pending.back().margin = model ? model->compiled.forest.margin(row.data())
                                    : std::numeric_limits<float>::quiet_NaN();
      k.pending = first_seq + pending.size() - 1;
    }
  }

  void on_removed(NodeId n) {
    if (n >= nodes.size() || !nodes[n].known) return;
    double age = seconds(std::max<Time>(0, now - nodes[n].last));
    ++removals;
    // A running mean over the last ~1,000 removals: the residence time drifts with the load.
    double w = std::max(1.0 / 1024, 1.0 / double(removals));
    residence_s += w * (age - residence_s);
  }
};

ReusePredictor::ReusePredictor(const ReuseConfig& config, uint32_t block_tokens)
    : impl_(std::make_unique<Impl>(config, block_tokens)) {}

ReusePredictor::~ReusePredictor() {
  Impl& m = *impl_;
  if (m.cfg.save_model.empty()) return;
  // The offline model: every sample resolved by the end (the still pending ones are dropped,
  // their outcome unknown), one fit, saved for a replay with load_model.
  std::vector<float> sx, sy;
  m.window.snapshot(sx, sy, kF);
  try {
    if (sy.size() < 10) throw Error("too few resolved samples to fit");
    auto model = fit(sx.data(), sy.data(), sy.size(), m.cfg);
    check(XGBoosterSaveModel(model->booster.h, m.cfg.save_model.c_str()), "save");
  } catch (const Error& e) {
    fmt::print(stderr, "kvpolicy: reuse predictor: saving {}: {}\n", m.cfg.save_model, e.what());
  }
}

void ReusePredictor::on_request_begin(const RequestView& r) { impl_->on_request_begin(r); }
void ReusePredictor::on_access(NodeId n, const AccessInfo& info) { impl_->on_access(n, info); }
void ReusePredictor::on_removed(NodeId n) { impl_->on_removed(n); }
uint64_t ReusePredictor::version() const { return impl_->published; }

void ReusePredictor::do_predict(std::span<const NodeId> nodes, std::span<Time> out) {
  Impl& m = *impl_;
  if (!m.model) {
    std::fill(out.begin(), out.end(), kNever);
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeId n = nodes[i];
    if (n >= m.nodes.size() || !m.nodes[n].known) {
      out[i] = kNever;
      continue;
    }
    const Impl::NodeState& ns = m.nodes[n];
    // The reuse odds decay as the block waits unreused (a block that will be reused mostly
    // is within about H; log-odds fall by one per H), so at any moment the blocks rank by
    // last access + H * log-odds: LRU shifted by the model's confidence. P reverses that
    // keep-score, so the largest P is evicted first and a stale block does not stay forever.
    float margin = std::clamp(m.model->compiled.forest.margin(ns.row.data()), -30.f, 30.f);
    double keep = double(ns.last) + m.cfg.bonus_x * double(ns.row[ReuseFeatures::kHorizon]) *
                                        double(margin) * double(kMicrosPerSecond);
    out[i] = kPriorityOrigin - Time(keep);
  }
  m.model_rows += nodes.size();
  m.model_ns +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count();
}

void ReusePredictor::probabilities(const float* rows, size_t n, float* out) const {
  for (size_t i = 0; i < n; ++i)
    out[i] =
        impl_->model
            ? float(1 /
                    (1 + std::exp(-double(impl_->model->compiled.forest.margin(rows + i * kF)))))
            : std::numeric_limits<float>::quiet_NaN();
}

void ReusePredictor::xgboost_probabilities(const float* rows, size_t n, float* out) const {
  if (!impl_->model) {
    std::fill(out, out + n, std::numeric_limits<float>::quiet_NaN());
    return;
  }
  DMatrixHandle d = nullptr;
  check(XGDMatrixCreateFromMat(rows, n, kF, std::numeric_limits<float>::quiet_NaN(), &d), "matrix");
  bst_ulong len = 0;
  const float* res = nullptr;
  int rc = XGBoosterPredict(impl_->model->booster.h, d, 0, 0, 0, &len, &res);
  if (rc == 0) std::copy(res, res + std::min<bst_ulong>(len, n), out);
  XGDMatrixFree(d);
  check(rc, "predict");
}

const float* ReusePredictor::row(NodeId n) const { return impl_->nodes[n].row.data(); }
double ReusePredictor::horizon_s() const { return impl_->horizon(); }
uint64_t ReusePredictor::positives() const { return impl_->positives; }
uint64_t ReusePredictor::negatives_by_timeout() const { return impl_->negatives_timeout; }
size_t ReusePredictor::keys_tracked() const { return impl_->keys.size(); }
size_t ReusePredictor::key_table_bound() const { return impl_->keys.bound(); }

std::vector<std::pair<std::string, double>> ReusePredictor::feature_gain() const {
  return impl_->model ? impl_->model->compiled.gain : std::vector<std::pair<std::string, double>>{};
}

PolicyStats ReusePredictor::stats() const {
  PolicyStats s = NextAccessPredictor::stats();
  const Impl& m = *impl_;
  s.push_back({"reuse_positives", double(m.positives)});
  s.push_back({"reuse_negatives_timeout", double(m.negatives_timeout)});
  s.push_back({"reuse_negatives_late", double(m.negatives_late)});
  s.push_back({"horizon_s", m.horizon()});
  s.push_back({"residence_s", m.residence_s});
  s.push_back({"retrains", double(m.fits)});
  s.push_back({"model_fitted", m.fits > 0 ? 1.0 : 0.0});
  s.push_back({"train_seconds", m.fit_ns * 1e-9});
  s.push_back({"reuse_scored", double(m.scored_label.size())});
  s.push_back(
      {"reuse_auc", m.scored_label.empty() ? 0.0 : auc_of(m.scored_margin, m.scored_label)});
  s.push_back({"model_rows", double(m.model_rows)});
  s.push_back({"model_seconds", m.model_ns * 1e-9});
  s.push_back({"model_trees", m.model ? double(m.model->compiled.forest.trees()) : 0});
  s.push_back({"keys_tracked", double(m.keys.size())});
  s.push_back({"xgboost_failures", m.error.empty() ? 0.0 : 1.0});
  if (m.model)
    for (auto& [name, share] : m.model->compiled.gain) s.push_back({"gain_" + name, share});
  return s;
}

namespace {

const bool registered = register_predictor({
    .name = "reuse",
    .summary = "an online XGBoost classifier of reuse within a horizon H (reuse_predictor.h)",
    .params =
        {
            param_double("horizon", 0, {.min = 0},
                         "label horizon H in seconds (0 = horizon_x times the residence time)"),
            param_double("horizon_x", 1, {.min = 0, .min_exclusive = true},
                         "adaptive H as a multiple of the mean age of removed blocks"),
            param_double("bonus_x", 1, {.min = 0},
                         "a block ranks as if last used bonus_x * H * log-odds(reuse) later"),
            param_double("sample", 0.1, {.min = 0, .max = 1, .min_exclusive = true},
                         "share of accesses that become training samples"),
            param_int("key_table", 1 << 18, {.min = 2}, "block keys remembered (bounded)"),
            param_int("session_table", 1 << 16, {.min = 2}, "sessions remembered (bounded)"),
            param_int("window", 40000, {.min = 10}, "resolved samples kept for training"),
            param_int("first_fit", 1000, {.min = 10},
                      "resolved samples before the first fit; the interval then doubles"),
            param_int("retrain", 20000, {.min = 1}, "largest interval between fits"),
            param_int("trees", 30, {.min = 1}, "boosting rounds at most"),
            param_double("eta", 0.2, {.min = 0, .min_exclusive = true}, "learning rate"),
            param_int("depth", 5, {.min = 1}, "tree depth"),
            param_string("load_model", "", "replay with this saved model, frozen"),
            param_string("save_model", "",
                         "at the end, fit one model on every resolved sample and save it here "
                         "(the offline upper bound replays it with load_model)"),
        },
    .flat_aliases = {{"horizon", "horizon"},
                     {"horizon_x", "horizon_x"},
                     {"bonus_x", "bonus_x"},
                     {"sample", "sample"},
                     {"key_table", "key_table"},
                     {"session_table", "session_table"},
                     {"reuse_window", "window"},
                     {"first_fit", "first_fit"},
                     {"reuse_retrain", "retrain"},
                     {"reuse_trees", "trees"},
                     {"reuse_eta", "eta"},
                     {"reuse_depth", "depth"},
                     {"load_model", "load_model"},
                     {"save_model", "save_model"}},
    .configure =
        [](const Params& p, PredictorConfig& c) {
          ReuseConfig& r = c.reuse;
          r.horizon_s = p.get_double("horizon");
          r.horizon_x = p.get_double("horizon_x");
          r.sample = p.get_double("sample");
          r.bonus_x = p.get_double("bonus_x");
          r.key_table = size_t(p.get_int("key_table"));
          r.session_table = size_t(p.get_int("session_table"));
          r.window = size_t(p.get_int("window"));
          r.first_fit = size_t(p.get_int("first_fit"));
          r.retrain_every = size_t(p.get_int("retrain"));
          r.max_rounds = int(p.get_int("trees"));
          r.max_depth = int(p.get_int("depth"));
          r.eta = p.get_double("eta");
          r.load_model = p.get_string("load_model");
          r.save_model = p.get_string("save_model");
        },
    .make = [](const PredictorConfig& c,
               const PredictorContext& ctx) -> std::unique_ptr<NextAccessPredictor> {
      ReuseConfig cfg = c.reuse;
      if (!(cfg.sample > 0 && cfg.sample <= 1)) throw ConfigError("reuse sample must be in (0, 1]");
      if (cfg.window < 10 || cfg.first_fit < 10 || cfg.retrain_every < 1 || cfg.max_rounds < 1 ||
          cfg.max_depth < 1 || !(cfg.eta > 0) || !(cfg.horizon_s >= 0) || !(cfg.horizon_x > 0))
        throw ConfigError("reuse predictor: window and first_fit >= 10, the rest positive");
      if (!cfg.load_model.empty() && !cfg.save_model.empty())
        throw ConfigError("reuse predictor: load_model and save_model exclude each other");
      cfg.seed = ctx.seed;
      return std::make_unique<ReusePredictor>(cfg, ctx.block_tokens);
    },
});

}  // namespace

}  // namespace kvpolicy
