#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <optional>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/sim/result_schema.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/sim/tail.h"
#include "kvpolicy/trace/fingerprint.h"
#include "replay_run.h"

namespace kvpolicy {

TraceFacts trace_facts(const Trace& trace) {
  TraceFacts f;
  f.requests = trace.size();
  f.block_accesses = trace.num_block_accesses();
  f.unique_blocks = count_unique_blocks(trace);
  for (uint32_t t : trace.prompt_tokens) f.prompt_tokens += t;
  // With an infinite cache every block seen before hits (its prefix was seen too).
  f.infinite_hit_rate =
      f.block_accesses ? double(f.block_accesses - f.unique_blocks) / f.block_accesses : 0;
  return f;
}

double thread_cpu_seconds() {
  // CPU time of this thread: on a shared machine, wall time also counts other jobs' turns.
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

CostModel replay_cost_model(uint32_t block_tokens, const ReplayOptions& opts) {
  // TTFT and the policies' cost estimates use the trace's block size.
  return (opts.cost_model ? *opts.cost_model : CostModel())
      .with_block_tokens(std::max<uint32_t>(block_tokens, 1));
}

CostModel replay_cost_model(const Trace& trace, const ReplayOptions& opts) {
  return replay_cost_model(trace.block_tokens, opts);
}

std::string replay_cost_model_label(const Trace& trace, const ReplayOptions& opts) {
  return replay_cost_model(trace, opts).label();
}

namespace {
PolicyContext replay_context(uint32_t block_tokens, const OracleView* future, const CostModel& cost,
                             const ReplayOptions& opts) {
  PolicyContext ctx;
  ctx.block_tokens = block_tokens;
  ctx.seed = opts.seed;
  if (future) ctx.future = *future;
  ctx.cost_model = &cost;
  if (opts.hints) ctx.retention.emplace();
  return ctx;
}
}  // namespace

ReplayRun::ReplayRun(const std::string& trace_name, uint32_t block_tokens, const OracleView* future,
                     const PolicySpec& spec, size_t capacity_blocks, const ReplayOptions& opts)
    : opts_(opts),
      block_tokens_(block_tokens),
      cost_(replay_cost_model(block_tokens, opts)),
      cache_(capacity_blocks, spec, replay_context(block_tokens, future, cost_, opts),
             opts.dram_capacity_blocks, opts.dram_policy) {
  cache_.set_checking(opts.check_victims);
  if (opts.dram_capacity_blocks) {
    cache_.set_offload_min_priority(opts.offload_min_priority);
    res_.offload_min_priority = opts.offload_min_priority;
  }
  res_.trace = trace_name;
  res_.policy = spec.name;
  res_.params = spec.params;
  res_.offline =
      needs_future(spec) || (opts.dram_capacity_blocks > 0 && needs_future(opts.dram_policy));
  res_.capacity_blocks = capacity_blocks;
  res_.capacity_gb = double(capacity_blocks) * cost_.kv_bytes_per_block() / 1e9;
  res_.seed = opts.seed;
  res_.dram_capacity_blocks = opts.dram_capacity_blocks;
  if (opts.dram_capacity_blocks) res_.dram_policy = opts.dram_policy.label();
  if (opts.ttft_ms) opts.ttft_ms->clear();
}

void ReplayRun::start() {
  start_ = std::chrono::steady_clock::now();
  start_cpu_ = thread_cpu_seconds();
}

ReplayResult ReplayRun::finish() {
  ReplayResult& res = res_;
  res.replay_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  res.replay_cpu_seconds = thread_cpu_seconds() - start_cpu_;
  res.block_hit_rate = res.block_accesses ? double(res.block_hits) / res.block_accesses : 0;
  res.hbm_hit_rate =
      res.block_accesses ? double(res.block_hits - res.dram_hits) / res.block_accesses : 0;
  res.dram_hit_rate = res.block_accesses ? double(res.dram_hits) / res.block_accesses : 0;
  res.token_hit_rate = res.prompt_tokens ? double(res.token_hits) / res.prompt_tokens : 0;
  res.ns_per_access = res.block_accesses ? res.replay_seconds * 1e9 / res.block_accesses : 0;
  size_t cached = std::max<size_t>(1, cache_.tree().size());
  res.bytes_per_block = double(cache_.memory_bytes()) / cached;
  res.policy_stats = cache_.policy().stats();
  res.cost_model = cost_.label();
  set_tail_metrics(res, tally_.metrics(cost_, block_tokens_, opts_.xi_ms, opts_.slo_ms));
  return std::move(res);
}

ReplayResult replay(const Trace& trace, const Oracle* oracle, const PolicySpec& spec,
                    size_t capacity_blocks, const ReplayOptions& opts) {
  OracleView future;
  if (oracle) future = oracle->view(trace);
  ReplayOptions hinted;
  const ReplayOptions* o = &opts;
  if (trace.has_hints() && !opts.hints) {
    hinted = opts;
    hinted.hints = true;
    o = &hinted;
  }
  ReplayRun run(trace.name, trace.block_tokens, oracle ? &future : nullptr, spec, capacity_blocks,
                *o);
  if (opts.ttft_ms) opts.ttft_ms->reserve(trace.size());
  size_t n = trace.size();
  size_t report_every = std::max<size_t>(1, n / 100);
  run.start();
  for (size_t r = 0; r < n; ++r) {
    run.access(request_view(trace, r));
    if (opts.progress && r % report_every == 0) opts.progress(double(r) / n);
  }
  ReplayResult r = run.finish();
  r.trace_fingerprint = trace_fingerprint(trace);
  r.assumptions = trace.assumptions.model;
  return r;
}

std::optional<bool> ReplayResult::model_fitted() const {
  for (auto& [key, value] : policy_stats)
    if (key == "model_fitted") return value > 0;
  return std::nullopt;
}

std::string ReplayResult::to_json() const {
  JsonObject o;
  for (const ResultField& f : replay_result_fields()) f.write(*this, o);
  return o.str();
}

}  // namespace kvpolicy
