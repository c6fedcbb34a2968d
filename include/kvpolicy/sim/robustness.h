// The robustness experiment of the LCR paper (Figures 5 and 13):
// hit rate of each policy as the noisy oracle's corruption probability p goes from 0 to 1.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kvpolicy/sim/sim.h"

namespace kvpolicy {

struct RobustnessOptions {
  std::vector<double> noise = {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  // Policies, each name[:key=value,...]. Those with a `predictor` parameter get
  // predictor=noisy,p=<level> plus `learned_params`; one whose parameters hold "{p}" gets the
  // level there instead, and nothing else (guarded:inner=fpb,inner_params=predictor=noisy;p={p});
  // the others run once and are repeated in every noise row.
  std::string policies = "lru,fpb,hf,laru,belady";
  std::string learned_params = "noise=adversarial";
  // When the noise is drawn afresh, given as redraw=<this> to the policies that get
  // learned_params: "request" (the paper's sync mode) or "access" (a persistent adversary).
  // A spec holding {p} keeps its own (the predictor's default is request).
  std::string redraw = "request";
  uint64_t seed = 1;
  // Prices TTFT-aware policies and sizes capacity_gb; null = the default preset.
  const CostModel* cost_model = nullptr;
  std::function<void(double done, const std::string& detail)> progress;
};

struct RobustnessRow {
  double noise = 0;
  std::string policy;  // name as given
  std::string spec;    // the full spec replayed
  bool learned = false;
  std::string redraw;  // the noise model given to this row's spec; empty if none was
  size_t capacity_blocks = 0;
  double capacity_fraction = -1;
  double capacity_gb = 0;  // KV memory of capacity_blocks under the replay's cost model
  uint64_t block_accesses = 0, block_hits = 0;
  double block_hit_rate = 0;
  // Predictions the paper's sync mode would request (candidates scored) and those computed.
  double predictor_calls = 0, predictions = 0;
  double replay_seconds = 0;
  PolicyStats stats;

  std::string to_json() const;
  static std::string csv_header();
  std::string to_csv() const;
};

// Each noise level is a full replay per policy and capacity; more than this is a typo in the step.
inline constexpr size_t kMaxNoiseLevels = 1000;
// Noise levels from "0,0.1,0.5" or a range "start:stop:step" ("0:1:0.1"); each in [0, 1], at most
// kMaxNoiseLevels of them (ConfigError naming the count).
std::vector<double> parse_noise_levels(const std::string& text);

// Whether a registered policy takes a `predictor` parameter (LARU, FPB, HF).
bool is_learned_policy(const std::string& name);

std::vector<RobustnessRow> run_robustness(const Trace& trace, const Oracle& oracle,
                                          size_t capacity_blocks, const RobustnessOptions& opts);

}  // namespace kvpolicy
