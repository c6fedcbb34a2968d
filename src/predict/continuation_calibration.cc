// Platt scaling and the drift tracker of LPC's continuation scores
// (include/kvpolicy/predict/continuation_calibration.h; docs/policies.md, lpc).
#include "kvpolicy/predict/continuation_calibration.h"

#include <algorithm>
#include <cmath>

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
