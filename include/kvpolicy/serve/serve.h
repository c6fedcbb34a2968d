// Serve mode: a deterministic discrete-event simulation of a cluster of workers, each one GPU (or
// a tensor-parallel group) running vLLM-style continuous batching over its own prefix cache,
// with a router in front (docs/serve.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kvpolicy/cache/lower_tiers.h"
#include "kvpolicy/core/access.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/route/router.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

// One worker at one sampling instant of serve mode's per-worker trace (docs/serve.md,
// "Per-worker trace"): its load as a router sees it at `time_s`, and its busy share over the
// interval that ends there.
struct WorkerSample {
  double time_s = 0;      // the interval's end, seconds from the first arrival
  double interval_s = 0;  // its length (the last interval may be shorter)
  uint32_t worker = 0;
  uint32_t waiting = 0, running = 0;
  uint64_t queued_prefill_tokens = 0;
  uint64_t kv_blocks = 0;  // KV blocks held by running requests
  double busy_share = 0;   // share of the interval spent in iterations
  std::vector<std::pair<std::string, double>> router_state;  // Router::worker_state
};

struct WorkerTrace {
  double interval_s = 1.0;            // simulated seconds between samples
  std::vector<WorkerSample> samples;  // by time, then worker
};

// ServeOptions::assignment's entry for a request left out: it never arrives.
inline constexpr WorkerId kSkipRequest = UINT32_MAX;

struct RequestTimeline;  // below

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
  // Replicates of an open-loop run: each arrival is delayed by up to this many seconds,
  // uniform and seeded by `seed`, the trace's order kept (docs/serve.md, "Replicates").
  double arrival_jitter_s = 0;
  // Insert a finished request's answer blocks into the cache (a next turn reuses them).
  bool cache_outputs = true;
  double slo_ms = 200;  // TTFT SLO
  uint64_t seed = 1;
  // The cost model of one worker, tensor parallelism included (null: the default model).
  const CostModel* cost_model = nullptr;
  bool check_victims = false;  // verify each victim (tests)
  // Allocation (issue 37): "chunked" (vLLM v1) allocates a prompt's blocks chunk by chunk as
  // its prefill proceeds; "whole" (vLLM v0) needs the whole prompt's blocks at admission.
  std::string allocation = "chunked";
  // Prefill/decode disaggregation (issue 37): prefill_workers + decode_workers workers in two
  // pools (0 and 0: every worker does both). `router` routes to the prefill pool,
  // decode_router to the decode pool; a request's KV crosses the link (bytes/s, latency s)
  // from its prefill worker to its decode worker.
  uint32_t prefill_workers = 0;
  uint32_t decode_workers = 0;
  RouterSpec decode_router{"least_loaded", ""};
  double kv_link_bytes_per_s = 50e9;  // RDMA, 400 Gb/s
  double kv_link_latency_s = 10e-6;
  // P/D second pass (issue 37; docs/serve.md): a decode worker keeps a prefix cache of what it
  // decoded (as vLLM/SGLang decode instances do) and a transfer carries only the blocks the
  // chosen decode worker lacks; false: transferred KV is freed at completion (the first pass).
  bool decode_cache = true;
  // "after-prefill": the KV leaves once the prefill's last layer is done; "layerwise": each
  // layer's KV streams while the prefill's last iteration computes the next (Mooncake, LMCache).
  std::string kv_transfer = "after-prefill";
  // Speed (issue 37): step every iteration through the event queue, as serve mode did before it
  // skipped decode-only stretches (docs/serve.md, "Speed"); the results are the same.
  bool stepped = false;
  // Called now and then with the share of requests completed; may be empty.
  std::function<void(double)> progress;
  // When set, filled with a per-worker sample every worker_trace->interval_s of simulated time
  // from the first arrival to the last completion (it is cleared first).
  WorkerTrace* worker_trace = nullptr;
  // When set, filled with every request's timeline as serve(trace, options, timeline) fills it
  // (serve --request-log).
  RequestTimeline* timeline = nullptr;
  // An analysis hook (as RequestTimeline is): when set, one entry per trace request, request r
  // goes to worker (*assignment)[r] (of the prefill pool with P/D) and `router` decides nothing
  // (it is still echoed in the result); kSkipRequest leaves r out (open loop only), which the
  // serve-mode regret uses to cut a run at a window (docs/routers.md, "Per-decision regret").
  const std::vector<WorkerId>* assignment = nullptr;

  // Memory tiers (issue 37, item 1; docs/serve.md, "Memory tiers"): lower tiers under each
  // worker's HBM in lookup order, capacities in blocks: "dram" and "ssd" per worker, then
  // "remote", one pool the cluster shares. Empty: HBM only.
  std::vector<TierSpec> tiers;
  Placement placement = Placement::kExclusive;
  WriteMode write_mode = WriteMode::kWriteBack;
  // A lower-tier hit's transfer overlaps the iteration's compute (max of the two) instead of
  // preceding it (their sum).
  bool overlap_transfers = false;
  // TensorRT-LLM's minimum priority for offload (`secondary_offload_min_priority`; docs/serve.md,
  // "Memory tiers"): an HBM victim whose retention priority is below it is dropped instead of
  // demoted. -1: off (every victim may be demoted). Write-back only.
  int32_t offload_min_priority = -1;
};

// One lower tier's counters over a run (summed over workers for dram and ssd).
struct TierResult {
  std::string tier;  // "dram", "ssd", "remote"
  std::string policy;
  std::string admission;
  std::string link;
  uint64_t capacity_blocks = 0;  // per worker; the remote pool: the whole pool
  uint64_t hits = 0;             // prompt blocks of completed requests read from this tier
  double hit_rate = 0;           // hits / block_accesses
  uint64_t blocks_read = 0;      // blocks moved up into HBM (every admission, preempted ones too)
  uint64_t blocks_written = 0;   // blocks stored into the tier
  uint64_t evictions = 0;
  uint64_t rejected = 0;  // offered and refused by the admission filter
  uint64_t full = 0;      // admitted but dropped: every block of the tier was held
  double bytes_read = 0;
  double bytes_written = 0;  // the SSD's wear
  // Its link, one FIFO server per worker (the pool's: each worker's own NIC), summed over
  // workers: seconds occupied (reads and writes), by writes, and reads' waits for the link;
  // utilisation = busy / (workers x makespan).
  double link_busy_seconds = 0;
  double link_write_seconds = 0;
  double link_wait_seconds = 0;
  double link_utilisation = 0;
};

// Latency summary of one metric over completed requests, ms (nearest-rank percentiles).
struct LatencyStats {
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
  // 95 % distribution-free intervals of the median and the P99 (core/percentile.h): 0 below and
  // +infinity above where the sample has no rank that bounds them.
  double p50_low = 0, p50_high = 0, p99_low = 0, p99_high = 0;
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
  double arrival_jitter_s = 0;
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
  // Allocation and prefill/decode disaggregation (issue 37).
  std::string allocation = "whole";  // results without the field predate chunked allocation
  uint32_t prefill_workers = 0, decode_workers = 0;
  std::string decode_router;
  double kv_link_bytes_per_s = 0, kv_link_latency_s = 0;
  uint64_t kv_transfers = 0;
  double kv_bytes_transferred = 0;
  double kv_transfer_seconds = 0;                          // summed, link queueing included
  double prefill_utilisation = 0, decode_utilisation = 0;  // mean busy share of each pool
  // P/D second pass: the echoed options (older results read as off / after-prefill), the
  // blocks sent, and the context blocks a decode worker already held at hand-off (not sent).
  bool decode_cache = false;
  std::string kv_transfer;
  uint64_t kv_blocks_transferred = 0;
  uint64_t decode_hit_blocks = 0;
  PolicyStats router_stats;
  double sim_seconds = 0;  // wall time of the simulation

  // Memory tiers (issue 37, item 1): written only when there are lower tiers.
  std::vector<TierResult> tiers;
  std::string tier_placement, tier_write;
  bool overlap_transfers = false;
  uint64_t hbm_hits = 0;  // prompt blocks found computed in HBM
  double hbm_hit_rate = 0;
  double transfer_seconds = 0;  // lower-tier reads, summed over workers
  // The minimum priority for offload (-1: off) and the HBM victims it dropped instead of
  // demoting, summed over workers; both written only when the minimum is set.
  int32_t offload_min_priority = -1;
  uint64_t offload_skipped_priority = 0;

  std::string to_json() const;
  // The configuration a result belongs to (for resuming sweeps).
  std::string key() const;
  std::string tiers_key() const;  // memory tiers' part of key()
};

// Runs the trace through the cluster. Throws ConfigError on a bad configuration.
ServeResult serve(const Trace& trace, const ServeOptions& options);

// Every request's timeline, for tests and plots (indexed by trace request; -1 = never).
struct RequestTimeline {
  std::vector<double> arrival, admitted, first_token, finish;  // seconds
  std::vector<uint32_t> worker;
  std::vector<uint32_t> completions;  // how many times each request completed (must be 1)
  std::vector<uint32_t> hit_blocks;   // prompt blocks found computed at its first admission
};
ServeResult serve(const Trace& trace, const ServeOptions& options, RequestTimeline* timeline);

// A result with only its configuration filled in, as serve() echoes it (its key() is known
// before it runs).
ServeResult planned_result(const Trace& trace, const ServeOptions& options);

// The trace as an offline router and the prefill-work model see it under `options` (open loop):
// every request in arrival order with its arrival time, prompt blocks, and sequence (prompt then
// the answer blocks a worker caches; docs/routers.md, offline_bound). `requests` point into
// `sequences`.
struct ServeFuture {
  std::shared_ptr<const Trace> sequences;
  std::vector<FutureRequest> requests;
};
ServeFuture serve_future(const Trace& trace, const ServeOptions& options);

ServeResult parse_serve_result(const std::string& line, const std::string& path, uint64_t line_no);

}  // namespace kvpolicy
