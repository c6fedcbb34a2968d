// How good a probabilistic binary classifier is (the LPC continuation classifier's evaluation):
// confusion counts, MCC, F1, rank-based AUC, the MCC-best threshold and a calibration table.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace kvpolicy {

struct Confusion {
  uint64_t tp = 0, fp = 0, tn = 0, fn = 0;
  uint64_t total() const { return tp + fp + tn + fn; }
};

// Predicted positive when p >= threshold.
Confusion confusion_at(std::span<const double> p, std::span<const uint8_t> labels,
                       double threshold);

// Matthews correlation coefficient; 0 when a row or column of the table is empty.
double mcc(const Confusion& c);
// F1 of the positive class; 0 when there is no true positive.
double f1_positive(const Confusion& c);
// Mean of the positive and the negative class's F1 (the paper's "F1 macro").
double f1_macro(const Confusion& c);
// Area under the ROC curve from ranks (Mann-Whitney U, ties counted half); NaN without both
// labels.
double auc(std::span<const double> p, std::span<const uint8_t> labels);

struct CalibrationBin {
  double lo = 0, hi = 0;  // predictions in [lo, hi); the last bin includes 1
  uint64_t count = 0;
  double mean_predicted = 0;  // NaN when empty
  double observed_rate = 0;   // share of label 1; NaN when empty
};

struct BinaryMetrics {
  uint64_t n = 0;
  double base_rate = 0;  // share of label 1
  double threshold = 0.5;
  Confusion confusion;  // at `threshold`
  double accuracy = 0, precision = 0, recall = 0, f1 = 0, f1_macro = 0, mcc = 0;
  double auc = 0;
  double best_threshold = 0.5, best_mcc = 0;  // the threshold that maximises MCC on these data
  double brier = 0;                           // mean squared error of p
  std::array<CalibrationBin, 10> calibration;
};

// Throws Error if the spans differ in length or are empty.
BinaryMetrics evaluate_binary(std::span<const double> p, std::span<const uint8_t> labels,
                              double threshold = 0.5);

// A multi-line human-readable report, and one JSON object.
std::string format_metrics(const BinaryMetrics& m);
std::string metrics_json(const BinaryMetrics& m);

}  // namespace kvpolicy
