// Tail latency in replay mode: TTFT percentiles, tail excess latency TEL(xi), SLO violations,
// and the T-LRU study (the tail-optimized-LRU paper's Tables 1-3 and Figure 5 on our traces).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/percentile.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

// TEL(xi) = sum over requests of max(0, ttft - xi), in ms.
double tail_excess_latency(std::span<const double> ttft_ms, double xi_ms);

struct TailMetrics {
  uint64_t requests = 0;
  double p50_ms = 0, p90_ms = 0, p95_ms = 0, p99_ms = 0, mean_ms = 0;
  double tel_ms = 0;  // TEL(xi_ms)
  double xi_ms = 0;
  double slo_ms = 0;
  double slo_violation_rate = 0;  // share of requests with TTFT > slo_ms
};
TailMetrics tail_metrics(std::span<const double> ttft_ms, double xi_ms, double slo_ms);
// Copies the TTFT percentiles, TEL and SLO figures into a result.
void set_tail_metrics(ReplayResult& r, const TailMetrics& t);

// Replay-mode TTFT of one request: prefill of its uncached tokens after its cached ones, plus
// the PCIe transfer of the blocks it found in DRAM; no queueing.
inline double replay_ttft_ms(const CostModel& cost, uint32_t prompt_tokens, uint32_t hit_blocks,
                             uint32_t dram_hit_blocks, uint32_t block_tokens) {
  uint64_t cached = std::min<uint64_t>(uint64_t{hit_blocks} * block_tokens, prompt_tokens);
  return (cost.prefill_time(prompt_tokens - cached, cached) +
          cost.transfer_time(dram_hit_blocks, Tier::kDram)) *
         1e3;
}

// --- The T-LRU study ------------------------------------------------------------------------

struct TailStudyOptions {
  std::vector<CapacitySpec> capacities;  // in any unit (KV memory through `cost`)
  std::vector<double> xi_ms = {50, 100, 150, 200, 500};
  double slo_ms = 200;
  double figure_xi_ms = 200;     // xi of the T-LRU variants in the Figure 5 comparison
  std::string tlru_params;       // extra parameters for every T-LRU run (e.g. "qhat=12")
  std::string threshold_params;  // parameters of threshold_lru
  // Policies of the Figure 5 comparison; T-LRU variants get xi_ms=figure_xi_ms.
  std::vector<std::string> figure_policies = {"lru",      "threshold_lru", "tlru",
                                              "tlru_end", "tlru_length",   "tail_belady"};
  CostModel cost;
  uint64_t seed = 1;
  std::function<void(double)> progress;  // share of replays done; may be empty
};

// Relative change of T-LRU at one (capacity, xi) against a baseline: (tlru - base) / base, so
// negative = T-LRU lower. NaN when the baseline is 0 and T-LRU is not.
struct TailChange {
  size_t capacity_blocks = 0;
  std::string capacity_label;
  double xi_ms = 0;
  double p90_vs_lru = 0, p95_vs_lru = 0, p99_vs_lru = 0, slo_vs_lru = 0, tel_vs_lru = 0;
  double p90_vs_threshold = 0, p95_vs_threshold = 0, p99_vs_threshold = 0, slo_vs_threshold = 0,
         tel_vs_threshold = 0;
};

struct TailStudy {
  std::string trace;
  std::string cost_model;
  double slo_ms = 0;
  double figure_xi_ms = 0;
  std::vector<ReplayResult> runs;   // every replay (baselines, T-LRU per xi, Figure 5 policies)
  std::vector<TailChange> changes;  // one per (capacity, xi), capacities outermost
  // Indices into `runs` of the Figure 5 comparison, one row per capacity, in figure_policies
  // order.
  std::vector<std::vector<size_t>> figure;
  std::vector<std::string> figure_policies;

  std::string to_json() const;  // one object with every run, change and the figure
};

double relative_change(double value, double base);
TailStudy run_tail_study(const Trace& trace, const TailStudyOptions& options);

}  // namespace kvpolicy
