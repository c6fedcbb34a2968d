// The predictor registry: each next-access predictor (oracle, noisy, and the learned ones built
// with XGBoost) joins it from its own file at static-initialisation time, with its name, what it
// is and its own parameters, which the learned policies take nested:
// `laru:predictor=reuse(window=20000,trees=50)`.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kvpolicy/core/params.h"
#include "kvpolicy/predict/predictor.h"

namespace kvpolicy {

struct PredictorInfo {
  std::string name;
  std::string summary;                 // what it predicts, in one line (`kvpolicy policies`)
  std::vector<ParamSpec> params = {};  // its own, given nested: predictor=name(key=value,...)
  // The policy-level (flat) spelling of each of its parameters that has one, {flat, own}:
  // `laru:predictor=reuse,reuse_window=5` still means predictor=reuse(window=5).
  std::vector<std::pair<std::string, std::string>> flat_aliases = {};
  bool reads_future = false;  // offline: needs PredictorContext::future
  // Reads its own (already checked) parameters into the config.
  std::function<void(const Params&, PredictorConfig&)> configure = {};
  std::function<std::unique_ptr<NextAccessPredictor>(const PredictorConfig&,
                                                     const PredictorContext&)>
      make = {};
};

class PredictorRegistry {
 public:
  static PredictorRegistry& instance();
  void add(PredictorInfo info);
  // Throws ConfigError on an unknown name (listing the known ones) or a learned predictor this
  // build does not have (naming the option that drops it).
  const PredictorInfo& get(const std::string& name) const;
  const PredictorInfo* find(const std::string& name) const;  // null when absent
  const std::vector<PredictorInfo>& all() const { return predictors_; }

 private:
  std::vector<PredictorInfo> predictors_;
};

// Predictors that need XGBoost (src/learned/): absent from a build without it, where asking
// for one says so.
const std::vector<std::string>& learned_only_predictors();
// The error for such a name when it is absent ("" when `name` is not learned-only).
std::string learned_predictor_absent(const std::string& name);

// In a predictor's file: `const bool registered = register_predictor({.name = "gbm", ...});`.
bool register_predictor(PredictorInfo info);

// The choices of the policies' nested `predictor` parameter: every registered predictor, and
// the learned-only ones this build lacks, marked unavailable.
std::vector<NestedChoice> predictor_choices();

}  // namespace kvpolicy
