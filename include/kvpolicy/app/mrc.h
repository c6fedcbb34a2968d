// A miss-ratio curve as both front ends ask for it: hit rate and replay TTFT against capacity in
// GB of KV per policy (LRU from one stack-distance pass, the others by replays), and the smallest
// capacity that reaches a target hit rate.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvpolicy/app/inputs.h"
#include "kvpolicy/app/sweep.h"
#include "kvpolicy/sim/mrc.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/sim/sweep.h"
#include "kvpolicy/trace/result_field.h"

namespace kvpolicy::app {

struct MrcOptions {
  TraceOptions trace;
  std::string policies = "lru";
  uint32_t points = 40;      // capacities on the curve
  std::string min = "1%";    // smallest capacity: blocks, a share, tokens or KV memory
  std::string max = "100%";  // largest capacity, same forms
  bool linear = false;       // space the capacities linearly (default geometrically)
  std::string target_hit;    // "30%" or 0.3; empty = no target
  CostOptions cost;
  uint64_t seed = 1;
  unsigned jobs = 0;  // replays at once; 0 = every core
};

// One curve: a policy's results at the capacities, and how they were obtained.
struct MrcCurve {
  PolicySpec spec;
  const char* method;  // "stack" (LRU's one pass) or "replay"
  std::vector<ReplayResult> points;
  std::optional<TargetSearch> target;
};

// The trace, the capacities and the replays of the curves (every policy but LRU at every
// capacity): what every process of a distributed run builds alike.
struct MrcPlan {
  CostModel cost;
  Trace trace;
  std::vector<PolicySpec> specs;
  TraceFacts facts;
  CostModel at_trace;
  double block_bytes = 0;
  size_t lo = 0, hi = 0;
  std::vector<size_t> caps;
  ReplayOptions opts;
  std::vector<SweepConfig> configs;
};

// The curves of a plan, their target answers, and LRU's stack distances.
struct MrcRun {
  std::shared_ptr<MrcPlan> plan;
  std::vector<MrcCurve> curves;
  std::vector<uint32_t> distances;
  std::optional<double> target;
};

// mrc's cost model: the KV dtype always named (it is in the rows' cost_model label).
CostModel mrc_cost_model(const MrcOptions& o);
// Checks what needs no trace (policies, capacities, target, points); returns the target hit rate.
// Throws ConfigError.
std::optional<double> check_mrc_options(const MrcOptions& o);
// Loads the trace (or copies `trace`, when given) and lays out the capacities and replays.
std::shared_ptr<MrcPlan> make_mrc_plan(const MrcOptions& o, const CostModel& cost,
                                       const Trace* trace = nullptr);
// The plan's replays (app::run_sweep) on `jobs` threads with a progress line, or on rank 0 of an
// mpirun over every rank; results in configuration order.
std::vector<ReplayResult> run_mrc_replays(const MrcPlan& plan, unsigned jobs,
                                          const SweepPlacement& where = {});
// The curves from LRU's one pass and `replays` (the plan's configs, in order).
MrcRun mrc_curves(std::shared_ptr<MrcPlan> plan, const std::vector<ReplayResult>& replays);
// Finds each curve's smallest capacity reaching `target` (exact for LRU, else by bisection).
void find_mrc_targets(MrcRun& run, double target);
// The whole curve on one process: check, plan, replays, curves and targets; on `trace` when
// given, else on the trace o.trace names.
MrcRun run_mrc(const MrcOptions& o, const Trace* trace = nullptr);

// The --json rows: one per (policy, capacity), then one per target answer (docs/formats.md).
std::vector<std::string> mrc_rows(const MrcRun& run);

// One row of those, a point of a curve (kind "point") or a target answer (kind "target"), whose
// fields mrc_point_fields and mrc_target_fields declare (trace/result_field.h).
struct MrcRow {
  std::string kind, trace, policy, params, method;
  std::string assumptions;  // the trace's assumption model (Trace::Assumptions), or empty
  size_t capacity_blocks = 0;
  bool reached = true;  // a target: whether a capacity reached it (else capacity is null)
  double capacity_gb = 0, capacity_share = 0, kv_bytes_per_block = 0;
  uint32_t block_tokens = 0;
  uint64_t block_accesses = 0, block_hits = 0, prompt_tokens = 0, token_hits = 0;
  uint64_t evictions = 0, uncached_blocks = 0, seed = 0;
  double block_hit_rate = 0, token_hit_rate = 0, infinite_hit_rate = 0;
  double ttft_mean_ms = 0, ttft_p50_ms = 0, ttft_p90_ms = 0, ttft_p99_ms = 0;
  std::string cost_model;
  double target_hit_rate = 0;
  bool non_monotone = false;
  size_t replays = 0;
};
const std::vector<ResultFieldOf<MrcRow>>& mrc_point_fields();
const std::vector<ResultFieldOf<MrcRow>>& mrc_target_fields();

// "llama-3.1-8b fp16": the model and the dtype its KV is stored in.
std::string kv_label(const CostModel& cost);

}  // namespace kvpolicy::app
