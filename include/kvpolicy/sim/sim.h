// Replay mode: requests in arrival order through one prefix cache, with hit-rate metrics.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kvpolicy/core/capacity.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

class CostModel;

// Facts of a trace every result refers to, computed once.
struct TraceFacts {
  size_t requests = 0;
  size_t block_accesses = 0;
  size_t unique_blocks = 0;
  uint64_t prompt_tokens = 0;
  double infinite_hit_rate = 0;  // hits of an infinite cache / block accesses
};
TraceFacts trace_facts(const Trace& trace);

struct ReplayResult {
  std::string trace;
  // The trace's content as replayed (TraceChecksum::fingerprint), part of the resume key; empty
  // in rows written before it existed.
  std::string trace_fingerprint;
  // The trace's assumption model (Trace::Assumptions::model) when its prompts are assumed, else
  // empty (and absent from the JSON).
  std::string assumptions;
  std::string policy;
  std::string params;
  bool offline = false;  // the policy (or the DRAM tier's) reads the trace's future
  size_t capacity_blocks = 0;
  double capacity_fraction = -1;  // < 0 when the capacity was given in blocks
  // The HBM capacity as KV memory, through the cost model's KV bytes per block (the unit
  // `--capacity 40GB` is read in), so a table can show blocks and GB side by side.
  double capacity_gb = 0;
  uint64_t seed = 1;
  uint64_t requests = 0;
  uint64_t block_accesses = 0;
  uint64_t block_hits = 0;
  uint64_t prompt_tokens = 0;
  uint64_t token_hits = 0;
  uint64_t evictions = 0;  // blocks dropped from the cache
  uint64_t dram_capacity_blocks = 0;
  std::string dram_policy;  // its policy label, when there is a DRAM tier
  uint64_t dram_hits = 0;   // block hits served from DRAM (promoted)
  uint64_t demotions = 0;   // HBM blocks moved to DRAM
  // The minimum priority for offload (-1: off) and the HBM victims it dropped instead of
  // demoting (in the JSON only when the minimum is set).
  int32_t offload_min_priority = -1;
  uint64_t offload_skipped_priority = 0;
  double hbm_hit_rate = 0;       // share of block accesses found in HBM
  double dram_hit_rate = 0;      // share of block accesses found in DRAM
  uint64_t uncached_blocks = 0;  // prompt blocks left out because every block was pinned
  double block_hit_rate = 0;
  double token_hit_rate = 0;
  double infinite_hit_rate = 0;
  double replay_seconds = 0;      // wall time of the request loop
  double replay_cpu_seconds = 0;  // this thread's CPU time in the request loop
  double ns_per_access = 0;
  double bytes_per_block = 0;  // tree + policy metadata per cached block at the end
  // Replay-mode TTFT (the cost model's prefill time, no queueing), ms; nearest-rank percentiles.
  std::string cost_model;
  double ttft_p50_ms = 0;
  double ttft_p90_ms = 0;
  double ttft_p95_ms = 0;
  double ttft_p99_ms = 0;
  double ttft_mean_ms = 0;
  double tel_ms = 0;  // tail excess latency: sum of max(0, TTFT - xi_ms)
  double xi_ms = 0;
  double slo_ms = 0;
  double slo_violation_rate = 0;  // share of requests with TTFT > slo_ms
  // The (HBM) policy's own counters (Policy::stats(), e.g. predictor calls); in the JSON as
  // "policy_stats" when not empty.
  PolicyStats policy_stats;
  // Whether the policy's online model (a GBM or reuse predictor's, WA's reuse fit) was fitted
  // at least once, from its stat model_fitted; nullopt for a policy without one. False: the row
  // shows the policy without its model, not what it learns (JSON "model_fitted").
  std::optional<bool> model_fitted() const;

  std::string to_json() const;
};

struct ReplayOptions {
  uint64_t seed = 1;
  // A second tier: HBM victims are demoted to DRAM (run by `dram_policy`); 0 = one tier.
  size_t dram_capacity_blocks = 0;
  PolicySpec dram_policy{"lru", ""};
  // TensorRT-LLM's minimum priority for offload (`secondary_offload_min_priority`): an HBM
  // victim whose retention priority is below it is dropped, not demoted. -1 = off.
  int32_t offload_min_priority = -1;
  bool check_victims = false;  // verify each victim is an evictable leaf (tests)
  // Retention hints: every policy behind the hint wrapper (PolicyContext::retention). replay()
  // sets it when the trace carries hints (Trace::hints).
  bool hints = false;
  // TTFT metrics: the cost model (null = Llama-3.1-8B on A100-80GB, see cost_model.h), the
  // threshold of TEL and the SLO, and optionally every request's TTFT in ms.
  const CostModel* cost_model = nullptr;
  double xi_ms = 200;
  double slo_ms = 200;
  std::vector<double>* ttft_ms = nullptr;
  // Called now and then with the share of requests done; may be empty.
  std::function<void(double)> progress;
};

// CPU time consumed by the calling thread, seconds.
double thread_cpu_seconds();

// The cost model a replay with `opts` uses (the given one or the default, at the trace's block
// size), and its label as results carry it.
CostModel replay_cost_model(const Trace& trace, const ReplayOptions& opts);
CostModel replay_cost_model(uint32_t block_tokens, const ReplayOptions& opts);
std::string replay_cost_model_label(const Trace& trace, const ReplayOptions& opts);

// Replays `trace` through a cache of `capacity_blocks` run by `policy`. `oracle` may be null
// unless the policy needs the future.
ReplayResult replay(const Trace& trace, const Oracle* oracle, const PolicySpec& policy,
                    size_t capacity_blocks, const ReplayOptions& opts = {});

}  // namespace kvpolicy
