// route-tune's search machinery (docs/serve.md, "Autotuning a router: route-tune"): its seeded
// generator and the CMA-ES that --search cmaes runs on the knobs' unit cube.
#pragma once

#include <cstdint>
#include <vector>

#include "kvpolicy/core/types.h"

namespace kvpolicy::app {

// splitmix64: the search's own generator, the same sequence on every platform.
struct SearchRng {
  uint64_t state;
  uint64_t next() { return mix64(state += 0x9e3779b97f4a7c15ULL); }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  double normal();  // Box-Muller
};

// (mu/mu_w, lambda)-CMA-ES with rank-one and rank-mu updates and cumulative step-size adaptation,
// with the default strategy parameters of Hansen's tutorial (docs/serve.md), on [0, 1]^n: each
// point is clipped into the cube and the update learns from the clipped point (repair). ask()
// returns one generation; tell() takes its objectives (lower is better) in the same order.
class CmaEs {
 public:
  CmaEs(std::vector<double> mean, double sigma, uint64_t seed);
  size_t lambda() const { return lambda_; }
  double sigma() const { return sigma_; }
  const std::vector<double>& mean() const { return mean_; }
  std::vector<std::vector<double>> ask();
  void tell(const std::vector<double>& objectives);

 private:
  void decompose();  // C = B diag(d^2) B^T (Jacobi), after each update

  size_t n_, lambda_, mu_;
  std::vector<double> weights_;
  double mu_eff_, c_sigma_, d_sigma_, c_c_, c_1_, c_mu_, chi_n_;
  std::vector<double> mean_, p_sigma_, p_c_;
  std::vector<std::vector<double>> c_, b_;  // covariance and its eigenvectors (columns)
  std::vector<double> d_;                   // square roots of its eigenvalues
  double sigma_;
  uint64_t generation_ = 0;
  SearchRng rng_;
  std::vector<std::vector<double>> asked_;
};

}  // namespace kvpolicy::app
