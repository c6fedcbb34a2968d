// Binary classification metrics for the continuation classifier.
#include "kvpolicy/predict/binary_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"

namespace kvpolicy {

Confusion confusion_at(std::span<const double> p, std::span<const uint8_t> labels,
                       double threshold) {
  Confusion c;
  for (size_t i = 0; i < p.size(); ++i) {
    bool predicted = p[i] >= threshold;
    if (labels[i])
      ++(predicted ? c.tp : c.fn);
    else
      ++(predicted ? c.fp : c.tn);
  }
  return c;
}

double mcc(const Confusion& c) {
  const double tp = double(c.tp), fp = double(c.fp), tn = double(c.tn), fn = double(c.fn);
  const double d = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn);
  return d > 0 ? (tp * tn - fp * fn) / std::sqrt(d) : 0.0;
}

double f1_positive(const Confusion& c) {
  return c.tp ? 2.0 * double(c.tp) / double(2 * c.tp + c.fp + c.fn) : 0.0;
}

double f1_macro(const Confusion& c) {
  Confusion negative{c.tn, c.fn, c.tp, c.fp};  // the negative class seen as the positive one
  return (f1_positive(c) + f1_positive(negative)) / 2;
}

double auc(std::span<const double> p, std::span<const uint8_t> labels) {
  const size_t n = p.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  // Sum of the positives' ranks, tied values sharing their average rank.
  double rank_sum = 0;
  uint64_t positives = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && p[order[j]] == p[order[i]]) ++j;
    const double mean_rank = (double(i + 1) + double(j)) / 2;
    for (size_t k = i; k < j; ++k)
      if (labels[order[k]]) {
        rank_sum += mean_rank;
        ++positives;
      }
    i = j;
  }
  const uint64_t negatives = n - positives;
  if (!positives || !negatives) return std::numeric_limits<double>::quiet_NaN();
  return (rank_sum - double(positives) * double(positives + 1) / 2) /
         (double(positives) * double(negatives));
}

BinaryMetrics evaluate_binary(std::span<const double> p, std::span<const uint8_t> labels,
                              double threshold) {
  if (p.size() != labels.size()) throw Error("evaluate_binary: predictions and labels differ");
  if (p.empty()) throw Error("evaluate_binary: no examples");
  BinaryMetrics m;
  m.n = p.size();
  m.threshold = threshold;
  uint64_t positives = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    positives += labels[i] != 0;
    m.brier += (p[i] - labels[i]) * (p[i] - labels[i]);
  }
  m.brier /= double(m.n);
  m.base_rate = double(positives) / double(m.n);
  m.confusion = confusion_at(p, labels, threshold);
  const Confusion& c = m.confusion;
  m.accuracy = double(c.tp + c.tn) / double(m.n);
  m.precision = c.tp + c.fp ? double(c.tp) / double(c.tp + c.fp) : 0.0;
  m.recall = c.tp + c.fn ? double(c.tp) / double(c.tp + c.fn) : 0.0;
  m.f1 = f1_positive(c);
  m.f1_macro = kvpolicy::f1_macro(c);
  m.mcc = kvpolicy::mcc(c);
  m.auc = kvpolicy::auc(p, labels);

  // The MCC-best threshold: sweep the distinct predictions from the top, moving one tied group
  // at a time from predicted-negative to predicted-positive.
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  Confusion sweep{0, 0, m.n - positives, positives};
  m.best_mcc = kvpolicy::mcc(sweep);
  m.best_threshold = std::nextafter(1.0, 2.0);  // nothing predicted positive
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    for (; j < order.size() && p[order[j]] == p[order[i]]; ++j) {
      if (labels[order[j]]) {
        ++sweep.tp;
        --sweep.fn;
      } else {
        ++sweep.fp;
        --sweep.tn;
      }
    }
    if (double v = kvpolicy::mcc(sweep); v > m.best_mcc) {
      m.best_mcc = v;
      m.best_threshold = p[order[i]];
    }
    i = j;
  }

  for (size_t b = 0; b < m.calibration.size(); ++b) {
    m.calibration[b].lo = double(b) / 10;
    m.calibration[b].hi = double(b + 1) / 10;
  }
  std::array<double, 10> sum_p{}, sum_y{};
  for (size_t i = 0; i < p.size(); ++i) {
    size_t b = std::min<size_t>(9, size_t(std::max(0.0, p[i]) * 10));
    ++m.calibration[b].count;
    sum_p[b] += p[i];
    sum_y[b] += labels[i] != 0;
  }
  for (size_t b = 0; b < m.calibration.size(); ++b) {
    CalibrationBin& bin = m.calibration[b];
    const double nan = std::numeric_limits<double>::quiet_NaN();
    bin.mean_predicted = bin.count ? sum_p[b] / double(bin.count) : nan;
    bin.observed_rate = bin.count ? sum_y[b] / double(bin.count) : nan;
  }
  return m;
}

std::string format_metrics(const BinaryMetrics& m) {
  const Confusion& c = m.confusion;
  std::string s = fmt::format(
      "examples {}, base rate (label 1) {:.4f}\n"
      "MCC {:.4f}, F1 {:.4f} (macro {:.4f}), AUC {:.4f}, accuracy {:.4f}, precision {:.4f}, "
      "recall {:.4f}, Brier {:.4f} (threshold {:.2f})\n"
      "confusion: TP {} FP {} TN {} FN {}\n"
      "MCC-best threshold {:.4f}: MCC {:.4f}\n"
      "calibration (p bin: count, mean predicted, observed rate):\n",
      m.n, m.base_rate, m.mcc, m.f1, m.f1_macro, m.auc, m.accuracy, m.precision, m.recall, m.brier,
      m.threshold, c.tp, c.fp, c.tn, c.fn, m.best_threshold, m.best_mcc);
  for (const CalibrationBin& b : m.calibration) {
    if (b.count)
      s += fmt::format("  [{:.1f}, {:.1f}{} {:6}  {:.3f}  {:.3f}\n", b.lo, b.hi,
                       b.hi >= 1 ? "]" : ")", b.count, b.mean_predicted, b.observed_rate);
    else
      s +=
          fmt::format("  [{:.1f}, {:.1f}{} {:6}  -      -\n", b.lo, b.hi, b.hi >= 1 ? "]" : ")", 0);
  }
  return s;
}

std::string metrics_json(const BinaryMetrics& m) {
  JsonObject o;
  o.add("n", m.n).add("base_rate", m.base_rate).add("threshold", m.threshold);
  o.add("mcc", m.mcc).add("f1", m.f1).add("f1_macro", m.f1_macro).add("auc", m.auc);
  o.add("accuracy", m.accuracy).add("precision", m.precision).add("recall", m.recall);
  o.add("brier", m.brier);
  o.add("tp", m.confusion.tp).add("fp", m.confusion.fp).add("tn", m.confusion.tn);
  o.add("fn", m.confusion.fn);
  o.add("best_threshold", m.best_threshold).add("best_mcc", m.best_mcc);
  std::string bins = "[";
  for (const CalibrationBin& b : m.calibration) {
    JsonObject jb;
    jb.add("lo", b.lo, 2).add("hi", b.hi, 2).add("count", b.count);
    jb.add("mean_predicted", b.mean_predicted).add("observed_rate", b.observed_rate);
    bins += (bins.size() > 1 ? "," : "") + jb.str();
  }
  o.raw("calibration", bins + "]");
  return o.str();
}

}  // namespace kvpolicy
