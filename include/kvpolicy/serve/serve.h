// Serve mode: a deterministic discrete-event simulation of a cluster of workers, each one GPU (or
// a tensor-parallel group) running vLLM-style continuous batching over its own prefix cache,
// with a router in front (docs/serve.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kvpolicy/core/access.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/route/router.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

struct ServeOptions {
  uint32_t workers = 1;
  RouterSpec router{"round_robin", ""};
  PolicySpec policy{"lru", ""};
  size_t capacity_blocks = 0;     // KV memory of one worker (its whole tensor-parallel group)
  double capacity_fraction = -1;  // how it was given, echoed in results (< 0: not a fraction)
  // Continuous batching (vLLM's defaults): tokens per iteration and running sequences.
  uint32_t max_batch_tokens = 8192;
  uint32_t max_running = 256;
  // Arrivals: the trace's times x time_scale; or, when rate > 0, rescaled to that mean rate
  // (requests/s). With clients > 0, a closed loop instead: that many clients each run one
  // session's turns back to back (a turn is sent when the previous one completes, plus
  // think_time_s), then take the next session.
  double time_scale = 1.0;
  double rate = 0;
  uint32_t clients = 0;
  double think_time_s = 0;
  // Insert a finished request's answer blocks into the cache (a next turn reuses them).
  bool cache_outputs = true;
  double slo_ms = 200;  // TTFT SLO
  uint64_t seed = 1;
  // The cost model of one worker, tensor parallelism included (null: the default model).
  const CostModel* cost_model = nullptr;
  bool check_victims = false;  // verify each victim (tests)
  // Speed (issue 37): step every iteration through the event queue, as serve mode did before it
  // skipped decode-only stretches (docs/serve.md, "Speed"); the results are the same.
  bool stepped = false;
  // Called now and then with the share of requests completed; may be empty.
  std::function<void(double)> progress;
};

// Latency summary of one metric over completed requests, ms (nearest-rank percentiles).
struct LatencyStats {
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
};

struct WorkerResult {
  uint64_t requests = 0;  // completed here
  uint64_t block_accesses = 0;
  uint64_t block_hits = 0;
  uint64_t preemptions = 0;
  uint64_t evictions = 0;
  double busy_seconds = 0;  // time spent in iterations
  double hit_rate() const { return block_accesses ? double(block_hits) / block_accesses : 0; }
};

struct ServeResult {
  // What replay results carry too (same JSON names).
  std::string trace;
  std::string trace_fingerprint;  // TraceChecksum::fingerprint of the trace served
  std::string assumptions;        // Trace::Assumptions::model, when the prompts are assumed
  std::string policy;
  std::string params;
  size_t capacity_blocks = 0;
  double capacity_fraction = -1;
  double capacity_gb = 0;  // a worker's KV memory: capacity_blocks x the cost model's block bytes
  uint64_t seed = 1;
  uint64_t requests = 0;  // completed
  uint64_t block_accesses = 0;
  uint64_t block_hits = 0;
  uint64_t prompt_tokens = 0;
  uint64_t token_hits = 0;
  uint64_t evictions = 0;
  double block_hit_rate = 0;
  double token_hit_rate = 0;
  std::string cost_model;
  double slo_ms = 200;
  double slo_violation_rate = 0;  // share of completed requests with TTFT > slo_ms
  PolicyStats policy_stats;       // summed over workers
  // Serve mode's own.
  std::string router;
  std::string router_params;
  uint32_t workers = 1;
  uint32_t tensor_parallel = 1;
  uint32_t max_batch_tokens = 0;
  uint32_t max_running = 0;
  double time_scale = 1;
  double rate = 0;
  uint32_t clients = 0;
  double think_time_s = 0;
  bool cache_outputs = true;
  uint64_t rejected = 0;  // prompts larger than a worker's whole memory (never admitted)
  uint64_t preemptions = 0;
  uint64_t output_tokens = 0;
  uint64_t iterations = 0;
  uint64_t events = 0;
  double makespan_s = 0;  // first arrival to last completion
  double throughput_rps = 0;
  double output_tokens_per_s = 0;
  double mean_in_system = 0;   // time-average of requests arrived and not completed
  double total_sojourn_s = 0;  // summed time in the system (Little: = mean_in_system x makespan)
  LatencyStats queue_wait_ms, ttft_ms, tpot_ms, e2e_ms;
  std::vector<WorkerResult> per_worker;
  PolicyStats router_stats;
  double sim_seconds = 0;  // wall time of the simulation

  std::string to_json() const;
  // The configuration a result belongs to (for resuming sweeps).
  std::string key() const;
};

// Runs the trace through the cluster. Throws ConfigError on a bad configuration.
ServeResult serve(const Trace& trace, const ServeOptions& options);

// Every request's timeline, for tests and plots (indexed by trace request; -1 = never).
struct RequestTimeline {
  std::vector<double> arrival, admitted, first_token, finish;  // seconds
  std::vector<uint32_t> worker;
  std::vector<uint32_t> completions;  // how many times each request completed (must be 1)
};
ServeResult serve(const Trace& trace, const ServeOptions& options, RequestTimeline* timeline);

// A result with only its configuration filled in, as serve() echoes it (its key() is known
// before it runs).
ServeResult planned_result(const Trace& trace, const ServeOptions& options);

ServeResult parse_serve_result(const std::string& line, const std::string& path, uint64_t line_no);

}  // namespace kvpolicy
