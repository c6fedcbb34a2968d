// Per-turn metrics of the continuation classifier (include/kvpolicy/predict/turn_metrics.h).
#include "kvpolicy/predict/turn_metrics.h"

#include <fmt/format.h>

#include <algorithm>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/predict/binary_metrics.h"

namespace kvpolicy {

std::vector<TurnGroupMetrics> per_turn_metrics(std::span<const double> p,
                                               std::span<const uint8_t> labels,
                                               std::span<const uint32_t> turns,
                                               uint32_t last_group) {
  if (p.size() != labels.size() || p.size() != turns.size() || last_group == 0)
    throw Error("per-turn metrics: one label and one turn per score, and a last group >= 1");
  std::vector<std::vector<double>> gp(last_group);
  std::vector<std::vector<uint8_t>> gy(last_group);
  for (size_t i = 0; i < p.size(); ++i) {
    const uint32_t g = std::min(std::max(turns[i], 1u), last_group) - 1;
    gp[g].push_back(p[i]);
    gy[g].push_back(labels[i]);
  }
  std::vector<TurnGroupMetrics> out;
  for (uint32_t g = 0; g < last_group; ++g) {
    if (gp[g].empty()) continue;
    const BinaryMetrics m = evaluate_binary(gp[g], gy[g]);
    TurnGroupMetrics r;
    r.turns = g + 1 == last_group ? fmt::format("{}+", g + 1) : fmt::format("{}", g + 1);
    r.n = m.n;
    r.base_rate = m.base_rate;
    double sum = 0;
    for (double x : gp[g]) sum += x;
    r.mean_p = sum / double(gp[g].size());
    r.mcc = m.mcc;
    r.auc = m.auc;
    r.brier = m.brier;
    out.push_back(r);
  }
  return out;
}

std::string format_turn_metrics(const std::vector<TurnGroupMetrics>& rows) {
  std::string s = fmt::format("{:>5} {:>7} {:>9} {:>7} {:>7} {:>7} {:>7}\n", "turn", "n",
                              "base rate", "mean p", "MCC", "AUC", "Brier");
  for (const auto& r : rows)
    s += fmt::format("{:>5} {:>7} {:>9.3f} {:>7.3f} {:>7.3f} {:>7.3f} {:>7.3f}\n", r.turns, r.n,
                     r.base_rate, r.mean_p, r.mcc, r.auc, r.brier);
  return s;
}

std::string turn_metrics_json(const std::vector<TurnGroupMetrics>& rows) {
  std::string s = "[";
  for (const auto& r : rows) {
    JsonObject o;
    o.add("turns", r.turns).add("n", r.n).add("base_rate", r.base_rate);
    o.add("mean_p", r.mean_p).add("mcc", r.mcc).add("auc", r.auc).add("brier", r.brier);
    s += (s.size() > 1 ? "," : "") + o.str();
  }
  return s + "]";
}

}  // namespace kvpolicy
