#include <algorithm>
#include <cmath>
#include <numeric>

#include "kvpolicy/core/error.h"
#include "route_tune_search.h"

namespace kvpolicy::app {

double SearchRng::normal() {
  double u1 = std::max(uniform(), 1e-300), u2 = uniform();
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * 3.14159265358979323846 * u2);
}

CmaEs::CmaEs(std::vector<double> mean, double sigma, uint64_t seed)
    : n_(mean.size()), mean_(std::move(mean)), sigma_(sigma), rng_{seed} {
  if (n_ == 0) throw ConfigError("CMA-ES needs at least one dimension");
  const double n = double(n_);
  lambda_ = 4 + size_t(std::floor(3 * std::log(n)));
  mu_ = lambda_ / 2;
  for (size_t i = 0; i < mu_; ++i)
    weights_.push_back(std::log(double(mu_) + 0.5) - std::log(double(i) + 1));
  double sum = std::accumulate(weights_.begin(), weights_.end(), 0.0), sq = 0;
  for (double& w : weights_) w /= sum, sq += w * w;
  mu_eff_ = 1 / sq;
  c_sigma_ = (mu_eff_ + 2) / (n + mu_eff_ + 5);
  d_sigma_ = 1 + 2 * std::max(0.0, std::sqrt((mu_eff_ - 1) / (n + 1)) - 1) + c_sigma_;
  c_c_ = (4 + mu_eff_ / n) / (n + 4 + 2 * mu_eff_ / n);
  c_1_ = 2 / ((n + 1.3) * (n + 1.3) + mu_eff_);
  c_mu_ = std::min(1 - c_1_, 2 * (mu_eff_ - 2 + 1 / mu_eff_) / ((n + 2) * (n + 2) + mu_eff_));
  chi_n_ = std::sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n));
  p_sigma_.assign(n_, 0);
  p_c_.assign(n_, 0);
  c_.assign(n_, std::vector<double>(n_, 0));
  for (size_t i = 0; i < n_; ++i) c_[i][i] = 1;
  decompose();
}

std::vector<std::vector<double>> CmaEs::ask() {
  asked_.clear();
  for (size_t k = 0; k < lambda_; ++k) {
    std::vector<double> z(n_), x(mean_);
    for (double& v : z) v = rng_.normal();
    for (size_t i = 0; i < n_; ++i) {
      for (size_t j = 0; j < n_; ++j) x[i] += sigma_ * b_[i][j] * d_[j] * z[j];
      x[i] = std::clamp(x[i], 0.0, 1.0);  // repair: the update learns from what was evaluated
    }
    asked_.push_back(std::move(x));
  }
  return asked_;
}

void CmaEs::tell(const std::vector<double>& objectives) {
  if (objectives.size() != asked_.size()) throw ConfigError("CMA-ES: tell() after ask() only");
  std::vector<size_t> order(lambda_);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return objectives[a] < objectives[b]; });
  // The steps of the mu best, y = (x - m) / sigma, and their weighted mean.
  std::vector<std::vector<double>> y(mu_, std::vector<double>(n_));
  std::vector<double> step(n_, 0);
  for (size_t k = 0; k < mu_; ++k)
    for (size_t i = 0; i < n_; ++i) {
      y[k][i] = (asked_[order[k]][i] - mean_[i]) / sigma_;
      step[i] += weights_[k] * y[k][i];
    }
  for (size_t i = 0; i < n_; ++i) mean_[i] += sigma_ * step[i];
  // C^(-1/2) step = B diag(1/d) B^T step.
  std::vector<double> bt(n_, 0), whitened(n_, 0);
  for (size_t j = 0; j < n_; ++j) {
    for (size_t i = 0; i < n_; ++i) bt[j] += b_[i][j] * step[i];
    bt[j] /= d_[j];
  }
  for (size_t i = 0; i < n_; ++i)
    for (size_t j = 0; j < n_; ++j) whitened[i] += b_[i][j] * bt[j];
  const double cs = std::sqrt(c_sigma_ * (2 - c_sigma_) * mu_eff_);
  double norm = 0;
  for (size_t i = 0; i < n_; ++i) {
    p_sigma_[i] = (1 - c_sigma_) * p_sigma_[i] + cs * whitened[i];
    norm += p_sigma_[i] * p_sigma_[i];
  }
  norm = std::sqrt(norm);
  ++generation_;
  const double decay = 1 - std::pow(1 - c_sigma_, 2.0 * double(generation_));
  const bool h_sigma = norm / std::sqrt(decay) < (1.4 + 2 / (double(n_) + 1)) * chi_n_;
  const double cc = std::sqrt(c_c_ * (2 - c_c_) * mu_eff_);
  for (size_t i = 0; i < n_; ++i) p_c_[i] = (1 - c_c_) * p_c_[i] + (h_sigma ? cc * step[i] : 0);
  const double lost = h_sigma ? 0 : c_1_ * c_c_ * (2 - c_c_);
  for (size_t i = 0; i < n_; ++i)
    for (size_t j = 0; j < n_; ++j) {
      double rank_mu = 0;
      for (size_t k = 0; k < mu_; ++k) rank_mu += weights_[k] * y[k][i] * y[k][j];
      c_[i][j] = (1 - c_1_ - c_mu_ + lost) * c_[i][j] + c_1_ * p_c_[i] * p_c_[j] + c_mu_ * rank_mu;
    }
  sigma_ *= std::exp(c_sigma_ / d_sigma_ * (norm / chi_n_ - 1));
  sigma_ = std::min(sigma_, 1.0);  // the cube is the whole space: a larger step only clips
  decompose();
  asked_.clear();
}

void CmaEs::decompose() {
  // Cyclic Jacobi rotations on a copy of C: n is a handful of knobs, so O(n^3) per sweep is
  // nothing next to one serve run.
  std::vector<std::vector<double>> a = c_;
  b_.assign(n_, std::vector<double>(n_, 0));
  for (size_t i = 0; i < n_; ++i) b_[i][i] = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (size_t p = 0; p < n_; ++p)
      for (size_t q = p + 1; q < n_; ++q) off += a[p][q] * a[p][q];
    if (off < 1e-30) break;
    for (size_t p = 0; p < n_; ++p)
      for (size_t q = p + 1; q < n_; ++q) {
        if (std::abs(a[p][q]) < 1e-300) continue;
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (size_t k = 0; k < n_; ++k) {  // A <- A J (columns p, q)
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (size_t k = 0; k < n_; ++k) {  // A <- J^T A (rows p, q)
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (size_t k = 0; k < n_; ++k) {  // B <- B J
          const double bkp = b_[k][p], bkq = b_[k][q];
          b_[k][p] = c * bkp - s * bkq;
          b_[k][q] = s * bkp + c * bkq;
        }
      }
  }
  d_.resize(n_);
  for (size_t i = 0; i < n_; ++i) d_[i] = std::sqrt(std::max(a[i][i], 1e-20));
}

}  // namespace kvpolicy::app
