// route-tune's CMA-ES (src/app/route_tune_search.h): it learns the shape of an ill-conditioned,
// rotated quadratic, which a search with a fixed, round step cannot, and it is seeded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "../../src/app/route_tune_search.h"
#include "kvpolicy/core/error.h"

namespace kvpolicy::app {
namespace {

// f(x) = sum_i 10^(6 i / (n - 1)) (Q (x - x*))_i^2 with Q orthonormal (Gram-Schmidt on seeded
// normals): its axes' scales differ 1000x (10^6 in f) and are not the coordinates' axes.
struct RotatedEllipsoid {
  size_t n;
  std::vector<double> optimum;
  std::vector<std::vector<double>> q;
  explicit RotatedEllipsoid(size_t dims) : n(dims) {
    SearchRng rng{42};
    for (size_t i = 0; i < n; ++i) optimum.push_back(0.2 + 0.6 * rng.uniform());
    for (size_t i = 0; i < n; ++i) {
      std::vector<double> v(n);
      for (double& x : v) x = rng.normal();
      for (const auto& u : q) {
        double dot = 0;
        for (size_t k = 0; k < n; ++k) dot += u[k] * v[k];
        for (size_t k = 0; k < n; ++k) v[k] -= dot * u[k];
      }
      double norm = 0;
      for (double x : v) norm += x * x;
      for (double& x : v) x /= std::sqrt(norm);
      q.push_back(v);
    }
  }
  double operator()(const std::vector<double>& x) const {
    double f = 0;
    for (size_t i = 0; i < n; ++i) {
      double r = 0;
      for (size_t k = 0; k < n; ++k) r += q[i][k] * (x[k] - optimum[k]);
      f += std::pow(10.0, 6.0 * double(i) / double(n - 1)) * r * r;
    }
    return f;
  }
};

double distance(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(d);
}

TEST(CmaEs, FindsTheOptimumOfARotatedIllConditionedQuadratic) {
  RotatedEllipsoid f(5);
  CmaEs es(std::vector<double>(5, 0.5), 0.3, 7);
  EXPECT_EQ(es.lambda(), 8u);  // 4 + floor(3 ln 5)
  int generations = 0;
  for (double best = 1; best > 1e-12 && generations < 2000; ++generations) {
    std::vector<double> values;
    for (const auto& x : es.ask()) {
      for (double v : x) ASSERT_TRUE(v >= 0 && v <= 1);
      values.push_back(f(x));
      best = std::min(best, values.back());
    }
    es.tell(values);
  }
  std::printf("generations to f < 1e-12: %d\n", generations);
  EXPECT_LT(generations, 600);
  EXPECT_LT(distance(es.mean(), f.optimum), 1e-5);
}

TEST(CmaEs, TheSameSeedAsksTheSamePoints) {
  RotatedEllipsoid f(3);
  auto run = [&](uint64_t seed) {
    CmaEs es(std::vector<double>(3, 0.5), 0.3, seed);
    std::vector<std::vector<double>> asked;
    for (int g = 0; g < 5; ++g) {
      auto xs = es.ask();
      std::vector<double> values;
      for (const auto& x : xs) values.push_back(f(x)), asked.push_back(x);
      es.tell(values);
    }
    return asked;
  };
  EXPECT_EQ(run(3), run(3));
  EXPECT_NE(run(3), run(4));
}

TEST(CmaEs, TellOnlyAfterAsk) {
  CmaEs es({0.5}, 0.3, 1);
  EXPECT_THROW(es.tell({1.0}), ConfigError);
}

}  // namespace
}  // namespace kvpolicy::app
