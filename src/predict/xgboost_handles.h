// XGBoost's C API as the predictors use it: a checked call, and handles freed with their owner.
// Internal to src/predict.
#pragma once

#include <xgboost/c_api.h>

#include <limits>
#include <string>

#include "kvpolicy/core/error.h"

namespace kvpolicy::xgb {

inline void check(int rc, const char* what) {
  if (rc != 0) throw Error(std::string("xgboost ") + what + ": " + XGBGetLastError());
}

struct Matrix {
  DMatrixHandle h = nullptr;
  Matrix() = default;
  // Rows x columns of floats (NaN = missing) with one label per row.
  Matrix(const float* X, const float* y, size_t rows, size_t columns) {
    check(XGDMatrixCreateFromMat(X, rows, columns, std::numeric_limits<float>::quiet_NaN(), &h),
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
