#include "kvpolicy/app/serve.h"

#include <fmt/format.h>

#include "kvpolicy/app/progress.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/route/router.h"

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

std::vector<ServeResult> run_serve_configs(const Trace& trace,
                                           const std::vector<ServeOptions>& configs,
                                           const ServeSpec& spec, const std::string& what) {
  Progress progress(what);
  ServeSweepOptions so;
  so.jobs = spec.jobs;
  so.json_path = spec.json_path;
  so.resume = spec.resume;
  so.progress = [&](double f, const std::string& label) { progress.update(f, label); };
  return run_serve_sweep(trace, configs, so);
}

std::vector<ServeResult> serve_sweep(const Trace& trace, const ServeSpec& spec,
                                     const std::string& what) {
  if (spec.resume && spec.json_path.empty()) throw ConfigError("--resume needs --json FILE");
  CostModel cost = spec.cost_model();
  std::vector<ServeOptions> configs = spec.configs(trace, cost);
  for (auto& c : configs) c.cost_model = &cost;
  if (!spec.json_path.empty()) check_writable(spec.json_path);  // emptied at the first row
  return run_serve_configs(trace, configs, spec, what);
}

}  // namespace kvpolicy::app
