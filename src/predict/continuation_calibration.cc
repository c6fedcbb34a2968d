// Platt scaling and the drift tracker of LPC's continuation scores
// (include/kvpolicy/predict/continuation_calibration.h; docs/policies.md, lpc).
#include "kvpolicy/predict/continuation_calibration.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

double logit(double p) {
  p = std::clamp(p, 1e-6, 1 - 1e-6);
  return std::log(p / (1 - p));
}
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

}  // namespace

double PlattScaling::apply(double p) const {
  if (identity()) return p;
  return sigmoid(a * logit(p) + b);
}

PlattScaling PlattScaling::fit(std::span<const double> p, std::span<const uint8_t> y) {
  if (p.size() != y.size() || p.empty())
    throw Error("Platt scaling: one label per score, and at least one");
  // Newton's method on the mean log-loss of sigmoid(a·x + b), x = logit(p); the ridge keeps the
  // Hessian invertible when the data are separable (or all of one label).
  constexpr double kRidge = 1e-4;
  const double n = double(p.size());
  double a = 1, b = 0;
  for (int it = 0; it < 100; ++it) {
    double ga = kRidge * (a - 1), gb = kRidge * b;
    double haa = kRidge, hab = 0, hbb = kRidge;
    for (size_t i = 0; i < p.size(); ++i) {
      const double x = logit(p[i]);
      const double q = sigmoid(a * x + b);
      const double r = (q - (y[i] != 0)) / n, w = q * (1 - q) / n;
      ga += r * x;
      gb += r;
      haa += w * x * x;
      hab += w * x;
      hbb += w;
    }
    const double det = haa * hbb - hab * hab;
    if (!(det > 0)) break;
    const double da = (hbb * ga - hab * gb) / det, db = (haa * gb - hab * ga) / det;
    a -= da;
    b -= db;
    if (std::abs(da) + std::abs(db) < 1e-10) break;
  }
  PlattScaling s;
  s.a = std::isfinite(a) ? std::max(a, 0.0) : 1;
  s.b = std::isfinite(b) ? b : 0;
  return s;
}

double IsotonicCalibration::apply(double p) const {
  if (x.empty()) return p;
  if (!(p > x.front())) return y.front();
  if (!(p < x.back())) return y.back();
  const size_t k =
      size_t(std::upper_bound(x.begin(), x.end(), p) - x.begin());  // x[k-1] <= p < x[k]
  const double t = (p - x[k - 1]) / (x[k] - x[k - 1]);
  return y[k - 1] + t * (y[k] - y[k - 1]);
}

bool IsotonicCalibration::valid() const {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !(y[i] >= 0 && y[i] <= 1)) return false;
    if (i > 0 && !(x[i] > x[i - 1] && y[i] >= y[i - 1])) return false;
  }
  return true;
}

IsotonicCalibration IsotonicCalibration::fit(std::span<const double> p,
                                             std::span<const uint8_t> y) {
  if (p.size() != y.size() || p.empty())
    throw Error("isotonic calibration: one label per score, and at least one");
  std::vector<size_t> order(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    if (!std::isfinite(p[i])) throw Error("isotonic calibration: a score is not finite");
    order[i] = i;
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  // Blocks of equal scores first (a tie cannot be split), then pooled while a block's mean
  // exceeds the next one's.
  struct Block {
    double lo, hi, sum, n;
  };
  std::vector<Block> blocks;
  for (size_t i : order) {
    const double label = y[i] != 0;
    if (!blocks.empty() && blocks.back().hi == p[i]) {
      blocks.back().sum += label;
      blocks.back().n += 1;
    } else {
      blocks.push_back({p[i], p[i], label, 1});
    }
    while (blocks.size() >= 2) {
      Block& a = blocks[blocks.size() - 2];
      const Block& b = blocks.back();
      if (a.sum / a.n <= b.sum / b.n) break;
      a = {a.lo, b.hi, a.sum + b.sum, a.n + b.n};
      blocks.pop_back();
    }
  }
  IsotonicCalibration c;
  for (const Block& b : blocks) {
    const double v = b.sum / b.n;
    c.x.push_back(b.lo);
    c.y.push_back(v);
    if (b.hi > b.lo) {
      c.x.push_back(b.hi);
      c.y.push_back(v);
    }
  }
  return c;
}

double TurnQuantileTracker::quantile(uint32_t turn) const {
  if (n_ == 0) return 0.5;
  uint64_t below = 0;
  for (size_t t = 1; t < count_.size() && t < turn; ++t) below += count_[t];
  const uint64_t same = turn < count_.size() ? count_[turn] : 0;
  return (double(below) + 0.5 * double(same)) / double(n_);
}

double TurnQuantileTracker::observe(uint32_t turn) {
  if (turn >= count_.size()) count_.resize(size_t(turn) + 1, 0);
  ++count_[turn];
  ++n_;
  return quantile(turn);
}

std::vector<double> online_turn_quantiles(std::span<const SessionId> session,
                                          std::span<const uint32_t> turn,
                                          std::span<const uint32_t> example_conversation,
                                          std::span<const uint32_t> example_turn) {
  if (session.size() != turn.size() || example_conversation.size() != example_turn.size())
    throw Error("online turn quantiles: one turn per request and per example");
  // (conversation, turn) -> example index.
  std::unordered_map<uint64_t, size_t> index;
  for (size_t i = 0; i < example_turn.size(); ++i)
    index.emplace((uint64_t(example_conversation[i]) << 32) | example_turn[i], i);
  std::vector<double> out(example_turn.size(), -1);
  TurnQuantileTracker tracker;
  for (size_t r = 0; r < turn.size(); ++r) {
    const double q = tracker.observe(turn[r]);
    if (session[r] == kNoSession) continue;  // counted, but no example's
    auto it = index.find((uint64_t(session[r]) << 32) | turn[r]);
    if (it != index.end()) out[it->second] = q;
  }
  return out;
}

ContinuationDrift::ContinuationDrift(const DriftOptions& o) : o_(o) {
  if (!(o.timeout_s > 0) || !(o.window >= 1) || !(o.tolerance > 0) || !(o.min_correlation > 0))
    throw ConfigError(
        "continuation drift: timeout and tolerance must be positive, window at least 1, "
        "min_correlation positive");
}

double ContinuationDrift::shrink(double p) const {
  if (trust_ >= 1) return p;
  if (trust_ <= 0) return 0.5;
  return sigmoid(trust_ * logit(p));
}

double ContinuationDrift::observed_rate() const { return w_ > 0 ? y_ / w_ : 0.5; }
double ContinuationDrift::expected_rate() const { return w_ > 0 ? p_ / w_ : 0.5; }

double ContinuationDrift::correlation() const {
  if (!(w_ > 0)) return 1;
  const double r = observed_rate(), q = expected_rate();
  const double var_y = r * (1 - r), var_p = std::max(pp_ / w_ - q * q, 0.0);
  if (var_y < 1e-12) return 1;  // one label only: nothing to rank, nothing against the scores
  if (var_p < 1e-12) return 0;  // one score only: it ranks nothing
  return (py_ / w_ - q * r) / std::sqrt(var_p * var_y);
}

void ContinuationDrift::count(double p, bool continued) {
  const double keep = 1 - 1 / o_.window, y = continued ? 1 : 0;
  w_ = keep * w_ + 1;
  y_ = keep * y_ + y;
  p_ = keep * p_ + p;
  pp_ = keep * pp_ + p * p;
  py_ = keep * py_ + p * y;
  ++resolved_;
  if (resolved_ < o_.min_resolved) return;
  const double calibration =
      std::clamp(1 - std::abs(observed_rate() - expected_rate()) / o_.tolerance, 0.0, 1.0);
  const double signal = std::clamp(correlation() / o_.min_correlation, 0.0, 1.0);
  trust_ = calibration * signal;
  min_trust_ = std::min(min_trust_, trust_);
}

// Counts the oldest turns while they are resolved: continued, or older than the timeout.
void ContinuationDrift::drain(double now_s) {
  while (!turns_.empty()) {
    const Turn& t = turns_.front();
    if (!t.continued && !(t.time + o_.timeout_s < now_s)) break;
    count(t.p, t.continued);
    turns_.pop_front();
    ++first_seq_;
  }
}

void ContinuationDrift::observe(SessionId session, double now_s, double p) {
  if (session != kNoSession) {
    const uint64_t seq = first_seq_ + turns_.size();
    auto [it, fresh] = latest_.try_emplace(session, seq);
    if (!fresh) {
      // The session's previous turn continued (if it is still waiting to be counted).
      if (it->second >= first_seq_) turns_[it->second - first_seq_].continued = true;
      it->second = seq;
    }
    turns_.push_back({now_s, p, false});
  }
  drain(now_s);
  // Sessions whose latest turn is counted need no entry (bounded by the turns waiting).
  if (latest_.size() > 2 * turns_.size() + 1024)
    std::erase_if(latest_, [&](const auto& kv) { return kv.second < first_seq_; });
}

}  // namespace kvpolicy
