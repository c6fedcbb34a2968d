// Serve mode's options: the checks every run makes first, and the configuration a result
// carries before it runs (its key() identifies the run for --resume).
#include "options.h"

#include <cmath>

#include "assignment.h"
#include "disagg.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/fingerprint.h"
#include "tiers.h"

namespace kvpolicy {

namespace serve_detail {

void check_options(const Trace& trace, const ServeOptions& o) {
  if (o.workers == 0) throw ConfigError("serve: --workers must be at least 1");
  if (o.workers > 4096) throw ConfigError("serve: --workers must be at most 4096");
  if (o.capacity_blocks == 0) throw ConfigError("serve: a worker needs at least one KV block");
  if (o.max_batch_tokens < trace.block_tokens)
    throw ConfigError("serve: the token budget per iteration (" +
                      std::to_string(o.max_batch_tokens) + ") is below one block (" +
                      std::to_string(trace.block_tokens) + " tokens)");
  if (o.max_running == 0) throw ConfigError("serve: --max-running must be at least 1");
  if (!(o.time_scale > 0) || !std::isfinite(o.time_scale))
    throw ConfigError("serve: --time-scale must be a positive number");
  if (!(o.rate >= 0) || !std::isfinite(o.rate))
    throw ConfigError("serve: --rate must be a positive number of requests per second");
  if (!(o.think_time_s >= 0) || !std::isfinite(o.think_time_s))
    throw ConfigError("serve: --think-time must be >= 0");
  if (!(o.arrival_jitter_s >= 0) || !std::isfinite(o.arrival_jitter_s))
    throw ConfigError("serve: --arrival-jitter must be >= 0 seconds");
  if (o.arrival_jitter_s > 0 && o.clients > 0)
    throw ConfigError(
        "serve: --arrival-jitter delays the trace's arrivals, which a closed loop "
        "(--clients) does not use");
  if (o.worker_trace &&
      (!(o.worker_trace->interval_s > 0) || !std::isfinite(o.worker_trace->interval_s)))
    throw ConfigError("serve: --worker-trace-interval must be a positive number of seconds");
  serve_detail::check_tiers(o);
  serve_detail::check_assignment(trace, o);
}

}  // namespace serve_detail

ServeResult planned_result(const Trace& trace, const ServeOptions& o) {
  ServeResult res;
  CostModel cost = o.cost_model ? *o.cost_model : CostModel();
  cost = cost.with_block_tokens(trace.block_tokens);
  res.trace = trace.name;
  res.trace_fingerprint = trace_fingerprint(trace);
  res.assumptions = trace.assumptions.model;
  res.policy = o.policy.name;
  res.params = o.policy.params;
  res.capacity_blocks = o.capacity_blocks;
  res.capacity_fraction = o.capacity_fraction;
  res.capacity_gb = double(o.capacity_blocks) * cost.kv_bytes_per_block() / 1e9;
  res.seed = o.seed;
  res.cost_model = cost.label();
  res.router = o.router.name;
  res.router_params = o.router.params;
  res.workers = serve_detail::total_workers(o);
  res.tensor_parallel = cost.tensor_parallel();
  res.max_batch_tokens = o.max_batch_tokens;
  res.max_running = o.max_running;
  res.time_scale = o.time_scale;
  res.rate = o.rate;
  res.clients = o.clients;
  res.think_time_s = o.think_time_s;
  res.arrival_jitter_s = o.arrival_jitter_s;
  res.cache_outputs = o.cache_outputs;
  res.slo_ms = o.slo_ms;
  res.allocation = o.allocation;
  if (o.prefill_workers && o.decode_workers) {
    res.prefill_workers = o.prefill_workers;
    res.decode_workers = o.decode_workers;
    res.decode_router = o.decode_router.label();
    res.kv_link_bytes_per_s = o.kv_link_bytes_per_s;
    res.kv_link_latency_s = o.kv_link_latency_s;
    res.decode_cache = o.decode_cache;
    res.kv_transfer = o.kv_transfer;
  }
  serve_detail::echo_tiers(o, res);
  return res;
}

}  // namespace kvpolicy
