// The continuation classifier of a build without fastText (-DKVPOLICY_LEARNED=OFF): every way to
// get one refuses with an error naming the option, so `classifier train` and `trace build
// --classifier` say how to get it (src/learned/continuation_classifier.cc is the real one).
#include "kvpolicy/core/error.h"
#include "kvpolicy/predict/continuation.h"

namespace kvpolicy {
namespace {

[[noreturn]] void refuse() {
  throw ConfigError(
      "the continuation classifier needs fastText: this kvpolicy was built with "
      "-DKVPOLICY_LEARNED=OFF; rebuild with -DKVPOLICY_LEARNED=ON (Debian libfasttext-dev)");
}

}  // namespace

struct ContinuationClassifier::Impl {};

ContinuationClassifier::ContinuationClassifier() = default;
ContinuationClassifier::ContinuationClassifier(ContinuationClassifier&&) noexcept = default;
ContinuationClassifier& ContinuationClassifier::operator=(ContinuationClassifier&&) noexcept =
    default;
ContinuationClassifier::~ContinuationClassifier() = default;
ContinuationClassifier ContinuationClassifier::train(std::span<const ContinuationExample>,
                                                     const ContinuationTrainOptions&, uint64_t) {
  refuse();
}
ContinuationClassifier ContinuationClassifier::load(const std::string&) { refuse(); }
// Never reached: no classifier is ever made.
double ContinuationClassifier::predict(std::string_view) const { refuse(); }
double ContinuationClassifier::predict(std::span<const std::string>, uint32_t, int64_t,
                                       double) const {
  refuse();
}
const ContinuationFeatureOptions& ContinuationClassifier::feature_options() const { refuse(); }
double ContinuationClassifier::train_base_rate() const { refuse(); }
double ContinuationClassifier::predict_uncalibrated(std::string_view) const { refuse(); }
const PlattScaling& ContinuationClassifier::calibration() const { refuse(); }
void ContinuationClassifier::set_calibration(const PlattScaling&) { refuse(); }
const IsotonicCalibration& ContinuationClassifier::isotonic() const { refuse(); }
void ContinuationClassifier::set_isotonic(IsotonicCalibration) { refuse(); }
void ContinuationClassifier::save(const std::string&) const { refuse(); }

}  // namespace kvpolicy
