// XGBoost's C API as the predictors use it: a checked call, and handles freed with their owner.
// Internal to src/learned.
#pragma once

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>

#include "kvpolicy/core/error.h"

namespace kvpolicy::xgb {

inline void check(int rc, const char* what) {
  if (rc != 0) throw Error(std::string("xgboost ") + what + ": " + XGBGetLastError());
}

// The settings every predictor's trees share (histogram trees, one thread, quiet, seeded), then
// the caller's own: objective, metric, base score.
inline void set_params(BoosterHandle h, const char* objective, int max_depth, double eta,
                       uint64_t seed,
                       std::initializer_list<std::pair<const char*, std::string>> more = {}) {
  std::pair<const char*, std::string> common[] = {
      {"objective", objective},
      {"tree_method", "hist"},
      {"max_depth", std::to_string(max_depth)},
      {"eta", fmt::format("{}", eta)},
      {"nthread", "1"},
      {"seed", std::to_string(seed % 2147483647)},
      {"verbosity", "0"},
  };
  for (auto& [k, v] : common) check(XGBoosterSetParam(h, k, v.c_str()), k);
  for (auto& [k, v] : more) check(XGBoosterSetParam(h, k, v.c_str()), k);
}

// The first `iteration_end` rounds' predictions for n dense rows of nf floats (NaN = missing),
// written to out[0, n): no DMatrix is built.
inline void predict_dense(BoosterHandle h, const float* rows, size_t n, size_t nf,
                          int iteration_end, float* out) {
  std::string values =
      fmt::format(R"({{"data":[{},true],"shape":[{},{}],"typestr":"<f4","version":3}})",
                  reinterpret_cast<uintptr_t>(rows), n, nf);
  std::string config =
      fmt::format(R"({{"type":0,"training":false,"iteration_begin":0,"iteration_end":{},)"
                  R"("strict_shape":false,"missing":NaN,"cache_id":0}})",
                  iteration_end);
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* res = nullptr;
  check(XGBoosterPredictFromDense(h, values.c_str(), config.c_str(), nullptr, &shape, &dim, &res),
        "predict");
  std::copy(res, res + n, out);
}

struct Matrix {
  DMatrixHandle h = nullptr;
  Matrix() = default;
  // Rows x columns of floats (NaN = missing) with one label per row.
  Matrix(const float* X, const float* y, size_t rows, size_t columns) {
    // One thread: XGBoost's OpenMP pool is invisible to ThreadSanitizer, and fits run one at a
    // time on their own thread anyway.
    check(XGDMatrixCreateFromMat_omp(X, rows, columns, std::numeric_limits<float>::quiet_NaN(), &h,
                                     1),
          "matrix");
    check(XGDMatrixSetFloatInfo(h, "label", y, rows), "labels");
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  ~Matrix() {
    if (h) XGDMatrixFree(h);
  }
};

struct Booster {
  BoosterHandle h = nullptr;
  Booster() = default;
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;
  ~Booster() {
    if (h) XGBoosterFree(h);
  }
};

}  // namespace kvpolicy::xgb
