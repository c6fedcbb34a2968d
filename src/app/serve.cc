#include "kvpolicy/app/serve.h"

#include <fmt/format.h>

#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/route/router.h"
#include "kvpolicy/trace/fingerprint.h"

namespace kvpolicy::app {

CostModel ServeSpec::cost_model() const {
  // kv_dtype is passed even when auto, as serve always did (it is part of the results' key).
  return CostModel::make(cost.model, cost.gpu,
                         cost.cost_params + (cost.cost_params.empty() ? "" : ",") +
                             fmt::format("tp={},kv_dtype={}", tp, cost.kv_dtype));
}

std::vector<uint32_t> ServeSpec::validate() const {
  for (auto& r : parse_router_list(routers)) RouterRegistry::instance().get(r.name);
  for (auto& p : expand_policy_sets(policies)) PolicyRegistry::instance().get(p.name);
  capacity_specs(capacities);
  if (!(base.rate >= 0)) throw ConfigError("--rate must be >= 0 requests per second");
  std::vector<uint32_t> worker_counts;
  for (const std::string& w : split_list(workers)) {
    worker_counts.push_back(
        static_cast<uint32_t>(checked_uint(w, 1, 4096, "--workers (a worker count)")));
  }
  if (worker_counts.empty()) throw ConfigError("--workers: no worker count given");
  // P/D pools fix the worker count: one run, whatever --workers lists (serve() checks the rest).
  if ((base.prefill_workers || base.decode_workers) && worker_counts.size() > 1)
    throw ConfigError(
        "--workers: with --prefill-workers and --decode-workers the cluster has their sum; "
        "give one worker count (or none)");
  // Memory tiers: flags checked before a long load (sizes need the trace).
  tier_specs(size_t{1} << 20, 1, size_t{1} << 20, 1, 1.0);
  parse_placement(placement);
  parse_write_mode(write);
  if (offload_min_priority < -1 || offload_min_priority > 100)
    throw ConfigError("--offload-min-priority: " + std::to_string(offload_min_priority) +
                      " is not a priority from 0 to 100");
  if (offload_min_priority >= 0 && parse_write_mode(write) == WriteMode::kWriteThrough)
    throw ConfigError(
        "--offload-min-priority: filters the blocks HBM evicts (write-back); with --write "
        "write-through every block is written down when computed");
  return worker_counts;
}

std::vector<ServeOptions> ServeSpec::configs(const Trace& trace, const CostModel& cost) const {
  std::vector<uint32_t> worker_counts = validate();
  auto router_specs = parse_router_list(routers);
  auto policy_specs = policies_the_trace_feeds(policies, trace);
  size_t unique = count_unique_blocks(trace);
  CostModel at_trace = cost.with_block_tokens(trace.block_tokens);
  std::vector<ServeOptions> out;
  for (const CapacitySpec& cap : capacity_specs(capacities)) {
    size_t per_gpu = cap.blocks(unique, trace.block_tokens, at_trace.kv_bytes_per_block());
    for (uint32_t w : worker_counts)
      for (auto& router : router_specs)
        for (auto& policy : policy_specs) {
          ServeOptions o = base;
          o.workers = w;
          o.router = router;
          o.policy = policy;
          o.capacity_blocks = per_gpu * cost.tensor_parallel();
          o.capacity_fraction = cap.fraction();
          o.cache_outputs = !no_cache_outputs;
          o.tiers = tier_specs(o.capacity_blocks, w, unique, trace.block_tokens,
                               at_trace.kv_bytes_per_block());
          if (!o.tiers.empty()) {
            o.placement = parse_placement(placement);
            o.write_mode = parse_write_mode(write);
            o.overlap_transfers = overlap_transfers;
            o.offload_min_priority = offload_min_priority;
          }
          out.push_back(o);
        }
  }
  // What ServeResult::key varies within one sweep (the rest is the sweep's own).
  drop_repeated_configs(
      out,
      [](const ServeOptions& o) {
        return fmt::format("{}|{}|{}|{}", o.router.label(), o.policy.label(), o.workers,
                           o.capacity_blocks);
      },
      [](const ServeOptions& o) {
        return fmt::format("{} / {} / {} workers at {} blocks", o.router.label(), o.policy.label(),
                           o.workers, with_commas(o.capacity_blocks));
      });
  return out;
}

Sweep<ServeResult> serve_cells(const Trace& trace, const std::vector<ServeOptions>& configs,
                               const std::string& json_path) {
  Sweep<ServeResult> sweep;
  for (const ServeOptions& c : configs) {
    sweep.cells.keys.push_back(planned_result(trace, c).key());
    // A policy that reads the future carries the oracle, as in replay's ReplayCells::weight.
    sweep.cells.weights.push_back(double(trace.num_block_accesses()) *
                                  (needs_future(c.policy) ? 2 : 1));
  }
  sweep.cells.key_of = [json_path, name = trace.name,
                        fingerprint = trace_fingerprint(trace)](const ResultLine& line) {
    ServeResult r = parse_serve_result(line.text, json_path, line.line_no);
    refuse_stale_row(json_path, line.line_no, r.trace, r.trace_fingerprint, name, fingerprint);
    return r.key();
  };
  sweep.run = [&trace, &configs](size_t i, const std::function<void(double)>& progress) {
    ServeOptions o = configs[i];
    o.progress = progress;
    return serve(trace, o);
  };
  sweep.row = [](const ServeResult& r) { return r.to_json(); };
  sweep.parse = parse_serve_result;
  sweep.detail = [&configs](size_t i) {
    const ServeOptions& o = configs[i];
    return o.router.label() + " / " + o.policy.label() + " / " + std::to_string(o.workers) +
           " workers";
  };
  return sweep;
}

std::vector<ServeResult> serve_sweep(const Trace& trace, const ServeSpec& spec,
                                     const std::string& what, const SweepPlacement& where) {
  if (spec.resume && spec.json_path.empty()) throw ConfigError("--resume needs --json FILE");
  CostModel cost = spec.cost_model();
  std::vector<ServeOptions> configs = spec.configs(trace, cost);
  for (auto& c : configs) c.cost_model = &cost;
  if (!spec.json_path.empty()) check_writable(spec.json_path);  // emptied at the first row
  SweepSettings settings;
  settings.jobs = spec.jobs;
  settings.json_path = spec.json_path;
  settings.resume = spec.resume;
  settings.what = what;
  settings.where = where;
  return run_sweep(serve_cells(trace, configs, spec.json_path), settings);
}

}  // namespace kvpolicy::app
