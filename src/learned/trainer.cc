// The shared online XGBoost training (trainer.h).
#include "trainer.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "kvpolicy/core/error.h"

namespace kvpolicy::learned {

SampleWindow::SampleWindow(size_t capacity, size_t width) : capacity_(capacity), width_(width) {
  if (capacity_) {
    X_.resize(capacity_ * width_);
    y_.resize(capacity_);
  }
}

void SampleWindow::add(const float* row, float label) {
  if (!capacity_) {
    X_.resize((count_ + 1) * width_);
    y_.resize(count_ + 1);
  }
  std::copy(row, row + width_, next_row());
  commit(label);
}

void SampleWindow::commit(float label) {
  if (capacity_) {
    y_[head_] = label;
    head_ = (head_ + 1) % capacity_;
    count_ = std::min(count_ + 1, capacity_);
  } else {
    y_[head_] = label;
    count_ = ++head_;
  }
  ++fresh_;
}

void SampleWindow::snapshot(std::vector<float>& X, std::vector<float>& y, size_t columns) const {
  X.resize(count_ * columns);
  y.resize(count_);
  size_t ring = capacity_ ? capacity_ : std::max<size_t>(count_, 1);
  size_t start = capacity_ ? (head_ + capacity_ - count_) % capacity_ : 0;
  for (size_t i = 0; i < count_; ++i) {
    size_t j = (start + i) % ring;
    std::copy_n(X_.begin() + j * width_, columns, X.begin() + i * columns);
    y[i] = y_[j];
  }
}

void SampleWindow::take(std::vector<float>& X, std::vector<float>& y, size_t columns) {
  snapshot(X, y, columns);
  fresh_ = 0;
}

namespace {

double parse_after(const char* s, const char* key) {
  const char* p = std::strstr(s, key);
  return p ? std::strtod(p + std::strlen(key), nullptr) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

std::unique_ptr<Boosted> boost(const float* X, const float* y, size_t n, size_t nf,
                               const BoostSettings& s, const std::atomic<bool>* stop) {
  auto m = std::make_unique<Boosted>();
  // The newest rows are the hold-out: forecasting the near future, as the model will be used.
  size_t n_valid = s.metric ? std::clamp<size_t>(size_t(double(n) * s.holdout), 1, n - 1) : 0;
  size_t n_train = n - n_valid;
  m->train = std::make_unique<xgb::Matrix>(X, y, n_train, nf);
  if (n_valid) m->valid = std::make_unique<xgb::Matrix>(X + n_train * nf, y + n_train, n_valid, nf);
  xgb::check(XGBoosterCreate(&m->train->h, 1, &m->booster.h), "booster");
  std::vector<std::pair<const char*, std::string>> more;
  if (s.metric) more.emplace_back("eval_metric", s.metric);
  more.insert(more.end(), s.params.begin(), s.params.end());
  if (s.base_score) more.emplace_back("base_score", s.base_score(y, n_train));
  xgb::set_params(m->booster.h, s.objective, s.max_depth, s.eta, s.seed);
  for (auto& [k, v] : more) xgb::check(XGBoosterSetParam(m->booster.h, k, v.c_str()), k);
  if (!s.metric) {
    for (int it = 0; it < s.max_rounds; ++it)
      xgb::check(XGBoosterUpdateOneIter(m->booster.h, it, m->train->h), "update");
    m->rounds = s.max_rounds;
    return m;
  }
  const std::string key = std::string(s.metric) + ":";
  const char* names[] = {"valid"};
  double best = std::numeric_limits<double>::infinity();
  int best_round = 0;
  for (int it = 0; it < s.max_rounds; ++it) {
    if (stop && stop->load(std::memory_order_relaxed)) return nullptr;
    xgb::check(XGBoosterUpdateOneIter(m->booster.h, it, m->train->h), "update");
    const char* res = nullptr;
    xgb::check(XGBoosterEvalOneIter(m->booster.h, it, &m->valid->h, names, 1, &res), "eval");
    double value = parse_after(res, key.c_str());
    if (value < best) {
      best = value;
      best_round = it;
    } else if (it - best_round >= s.patience) {
      break;
    }
  }
  m->rounds = best_round + 1;
  m->best = best;
  return m;
}

Compiled compile(BoosterHandle h, const std::function<std::string(int)>& feature_name) {
  Compiled c;
  bst_ulong len = 0;
  const char** dump = nullptr;
  xgb::check(XGBoosterDumpModelEx(h, "", 0, "text", &len, &dump), "dump");
  std::vector<std::string> trees(dump, dump + len);
  bst_ulong clen = 0;
  const char* config = nullptr;
  xgb::check(XGBoosterSaveJsonConfig(h, &clen, &config), "config");
  std::string cfg(config, clen);
  double base = parse_after(cfg.c_str(), "\"base_score\":\"");
  if (!(base > 0 && base < 1)) throw Error("xgboost: no usable base_score in the model config");
  c.forest = CompiledForest(trees, float(std::log(base / (1 - base))));
  c.trees = int(len);
  // Total gain per feature, as shares.
  bst_ulong nf = 0, dim = 0;
  const char** names = nullptr;
  const bst_ulong* shape = nullptr;
  const float* scores = nullptr;
  xgb::check(XGBoosterFeatureScore(h, R"({"importance_type": "total_gain"})", &nf, &names, &dim,
                                   &shape, &scores),
             "feature score");
  double total = 0;
  for (bst_ulong i = 0; i < nf; ++i) total += scores[i];
  for (bst_ulong i = 0; i < nf; ++i) {
    int f = names[i][0] == 'f' ? std::atoi(names[i] + 1) : -1;
    std::string name = f >= 0 ? feature_name(f) : std::string();
    c.gain.emplace_back(name.empty() ? names[i] : name, total > 0 ? scores[i] / total : 0);
  }
  std::sort(c.gain.begin(), c.gain.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  return c;
}

}  // namespace kvpolicy::learned
