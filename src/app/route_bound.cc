#include "kvpolicy/app/route_bound.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/core/percentile.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/route/prefill_model.h"
#include "kvpolicy/serve/regret.h"

namespace kvpolicy::app {
namespace {

void add_gap(JsonObject& o, const char* key, double value) {
  if (std::isnan(value)) {
    o.add_null(key);
  } else {
    o.add(key, value);
  }
}

// Mean and P90 (nearest rank) of per-decision regrets.
std::pair<double, double> mean_p90(std::vector<double> regret) {
  if (regret.empty()) return {0.0, 0.0};
  double sum = 0;
  for (double x : regret) sum += x;
  std::sort(regret.begin(), regret.end());
  return {sum / double(regret.size()), percentile_nearest_rank(regret, 90)};
}

}  // namespace

std::string RouteBoundReport::row_json(const RouteBoundRow& row) const {
  const ServeResult& r = row.result;
  JsonObject o;
  o.add("trace", r.trace)
      .add("router", r.router)
      .add("router_params", r.router_params)
      .raw("offline", row.offline ? "true" : "false")
      .add("policy", r.policy)
      .add("workers", r.workers)
      .add("capacity_blocks", uint64_t{r.capacity_blocks})
      .add("rate", r.rate)
      .add("hit_rate", r.block_hit_rate)
      .add("ttft_mean_ms", r.ttft_ms.mean)
      .add("ttft_p50_ms", r.ttft_ms.p50)
      .add("ttft_p99_ms", r.ttft_ms.p99);
  add_gap(o, "gap_closed_ttft_mean", row.gap_ttft_mean);
  add_gap(o, "gap_closed_ttft_p50", row.gap_ttft_p50);
  add_gap(o, "gap_closed_hit", row.gap_hit);
  o.add("model_hit_rate", row.model_hit_rate)
      .add("model_hit_ceiling", model_hit_ceiling)
      .add("regret_samples", uint64_t{row.regret_samples})
      .add("regret_window", regret_window)
      .add("regret_mean_tokens", row.regret_mean_tokens)
      .add("regret_p90_tokens", row.regret_p90_tokens)
      .add("regret_mode", regret_mode)
      .add("serve_regret_samples", uint64_t{row.serve_regret_samples})
      .add("serve_regret_mean_ms", row.serve_regret_mean_ms)
      .add("serve_regret_p90_ms", row.serve_regret_p90_ms)
      .raw("serve", r.to_json());
  return o.str();
}

std::string expand_router_sets(const std::string& routers) {
  std::string out;
  for (const RouterSpec& r : parse_router_list(routers)) {
    if (r.name == "online" && r.params.empty()) {
      for (const std::string& name : online_router_names()) out += (out.empty() ? "" : ",") + name;
    } else {
      out += (out.empty() ? "" : ",") + r.label();
    }
  }
  return out;
}

RouteBoundReport route_bound(const Trace& trace, const ServeSpec& spec,
                             const RouteBoundOptions& options) {
  if (split_list(spec.workers).size() != 1)
    throw ConfigError("--workers: route-bound takes one worker count");
  if (split_list(spec.capacities).size() != 1)
    throw ConfigError("--capacity: route-bound takes one capacity");
  if (expand_policy_sets(spec.policies).size() != 1)
    throw ConfigError("--policy: route-bound takes one policy");
  if (spec.base.clients > 0)
    throw ConfigError(
        "--clients: route-bound needs an open loop (offline_bound reads arrivals "
        "in advance)");
  if (spec.base.prefill_workers || spec.base.decode_workers)
    throw ConfigError("--prefill-workers: route-bound routes one pool, not P/D");
  if (options.regret_mode != "model" && options.regret_mode != "serve" &&
      options.regret_mode != "both")
    throw ConfigError("--regret-mode: '" + options.regret_mode +
                      "' is not one of model, serve, both");
  const bool model_mode = options.regret_mode != "serve";
  const bool serve_mode = options.regret_mode != "model";
  ServeSpec s = spec;
  // The baseline and the bound run first, once, whether or not they are asked for too.
  s.routers = "round_robin,offline_bound";
  for (const RouterSpec& r : parse_router_list(expand_router_sets(spec.routers)))
    if (r.label() != "round_robin" && r.label() != "offline_bound") s.routers += "," + r.label();
  CostModel cost = s.cost_model();
  std::vector<ServeOptions> configs = s.configs(trace, cost);  // a router named twice runs once
  RouteBoundReport report;
  report.regret_window = options.regret_window;
  report.regret_mode = options.regret_mode;
  if (configs.empty()) return report;
  ServeFuture future = serve_future(trace, configs[0]);
  const auto& requests = future.requests;
  for (const FutureRequest& f : requests) report.prompt_blocks += f.request.blocks.size();
  report.lower_bound_blocks = prefill_lower_bound(requests, configs[0].workers, LoadCap{});
  report.model_hit_ceiling =
      report.prompt_blocks ? 1.0 - double(report.lower_bound_blocks) / double(report.prompt_blocks)
                           : 0.0;
  std::vector<size_t> decisions = model_mode
                                      ? sampled_decisions(requests.size(), options.regret_sample)
                                      : std::vector<size_t>{};
  std::vector<size_t> serve_decisions =
      serve_mode ? sampled_decisions(requests.size(), options.serve_regret_sample)
                 : std::vector<size_t>{};
  for (ServeOptions& o : configs) {
    o.cost_model = &cost;
    RequestTimeline timeline;
    RouteBoundRow row;
    row.result = serve(trace, o, &timeline);
    row.offline = router_needs_future(o.router);
    std::vector<WorkerId> assignment(timeline.worker.begin(), timeline.worker.end());
    uint64_t cost_blocks = model_cost(requests, assignment, o.workers, o.capacity_blocks);
    row.model_hit_rate =
        report.prompt_blocks ? 1.0 - double(cost_blocks) / double(report.prompt_blocks) : 0.0;
    if (!decisions.empty()) {
      std::vector<double> regret = model_regret(requests, assignment, o.workers, o.capacity_blocks,
                                                decisions, options.regret_window);
      for (double& x : regret) x *= trace.block_tokens;
      row.regret_samples = regret.size();
      std::tie(row.regret_mean_tokens, row.regret_p90_tokens) = mean_p90(std::move(regret));
    }
    if (!serve_decisions.empty()) {
      std::vector<double> regret =
          serve_regret(trace, o, timeline, serve_decisions, options.regret_window);
      row.serve_regret_samples = regret.size();
      std::tie(row.serve_regret_mean_ms, row.serve_regret_p90_ms) = mean_p90(std::move(regret));
    }
    report.rows.push_back(std::move(row));
  }
  const ServeResult& rr = report.rows[0].result;
  const ServeResult& bound = report.rows[1].result;
  for (RouteBoundRow& row : report.rows) {
    row.gap_ttft_mean = gap_closed(row.result.ttft_ms.mean, rr.ttft_ms.mean, bound.ttft_ms.mean);
    row.gap_ttft_p50 = gap_closed(row.result.ttft_ms.p50, rr.ttft_ms.p50, bound.ttft_ms.p50);
    row.gap_hit = gap_closed(row.result.block_hit_rate, rr.block_hit_rate, bound.block_hit_rate);
  }
  return report;
}

}  // namespace kvpolicy::app
