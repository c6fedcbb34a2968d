#include "kvpolicy/app/mrc.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kvpolicy/app/progress.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/core/numbers.h"

namespace kvpolicy::app {
namespace {

// "30%" or 0.3.
double parse_target(const std::string& text) {
  bool percent = !text.empty() && text.back() == '%';
  std::string number = percent ? text.substr(0, text.size() - 1) : text;
  std::optional<double> read = read_number(number);
  if (!read) throw ConfigError("--target-hit '" + text + "' is not a number (write 30% or 0.3)");
  double v = *read;
  if (percent || v > 1) v /= 100;
  if (v <= 0 || v > 1) throw ConfigError("--target-hit '" + text + "' must be in (0%, 100%]");
  return v;
}

// Capacities from lo to hi, spaced geometrically (or linearly), whole blocks, each once.
std::vector<size_t> spaced(size_t lo, size_t hi, uint32_t points, bool linear) {
  std::vector<size_t> out;
  for (uint32_t i = 0; i < points; ++i) {
    double f = points == 1 ? 1.0 : double(i) / (points - 1);
    double c = linear ? lo + f * double(hi - lo) : lo * std::pow(double(hi) / lo, f);
    out.push_back(std::clamp<size_t>(static_cast<size_t>(std::llround(c)), lo, hi));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string point_json(const Trace& trace, const MrcCurve& c, const ReplayResult& r,
                       double block_bytes, size_t unique) {
  JsonObject o;
  o.add("kind", "point").add("trace", trace.name).add("policy", c.spec.name);
  o.add("params", c.spec.params).add("method", c.method);
  o.add("capacity_blocks", r.capacity_blocks);
  o.add("capacity_gb", double(r.capacity_blocks) * block_bytes / 1e9);
  o.add("capacity_share", unique ? double(r.capacity_blocks) / unique : 0.0);
  o.add("kv_bytes_per_block", block_bytes, 1).add("block_tokens", trace.block_tokens);
  o.add("block_accesses", r.block_accesses).add("block_hits", r.block_hits);
  o.add("block_hit_rate", r.block_hit_rate);
  o.add("prompt_tokens", r.prompt_tokens).add("token_hits", r.token_hits);
  o.add("token_hit_rate", r.token_hit_rate);
  o.add("ttft_mean_ms", r.ttft_mean_ms, 3).add("ttft_p50_ms", r.ttft_p50_ms, 3);
  o.add("ttft_p90_ms", r.ttft_p90_ms, 3).add("ttft_p99_ms", r.ttft_p99_ms, 3);
  o.add("evictions", r.evictions).add("uncached_blocks", r.uncached_blocks);
  o.add("infinite_hit_rate", r.infinite_hit_rate).add("cost_model", r.cost_model);
  o.add("seed", r.seed);
  return o.str();
}

std::string target_json(const Trace& trace, const MrcCurve& c, double target, double block_bytes) {
  JsonObject o;
  o.add("kind", "target").add("trace", trace.name).add("policy", c.spec.name);
  o.add("params", c.spec.params)
      .add("method", c.method == std::string("stack") ? "exact" : "bisection");
  o.add("target_hit_rate", target);
  if (c.target->capacity_blocks) {
    o.add("capacity_blocks", *c.target->capacity_blocks);
    o.add("capacity_gb", double(*c.target->capacity_blocks) * block_bytes / 1e9);
  } else {
    o.add_null("capacity_blocks").add_null("capacity_gb");
  }
  o.add("block_hit_rate", c.target->block_hit_rate);
  o.raw("non_monotone", c.target->non_monotone ? "true" : "false");
  o.add("replays", c.target->replays);
  return o.str();
}

}  // namespace

CostModel mrc_cost_model(const MrcOptions& o) {
  std::string params = o.cost.cost_params;
  params += (params.empty() ? "" : ",") + std::string("kv_dtype=") + o.cost.kv_dtype;
  return CostModel::make(o.cost.model, o.cost.gpu, params);
}

std::optional<double> check_mrc_options(const MrcOptions& o) {
  auto specs = expand_policy_sets(o.policies);  // names, or the sets online, offline, all
  for (auto& s : specs) PolicyRegistry::instance().get(s.name);  // fail before loading
  parse_capacity(o.min);                                         // fail before loading
  parse_capacity(o.max);
  std::optional<double> target;
  if (!o.target_hit.empty()) target = parse_target(o.target_hit);
  if (o.points < 1) throw ConfigError("--points must be at least 1");
  return target;
}

std::shared_ptr<MrcPlan> make_mrc_plan(const MrcOptions& a, const CostModel& cost,
                                       const Trace* trace) {
  CapacitySpec min_spec = parse_capacity(a.min), max_spec = parse_capacity(a.max);
  auto plan = std::make_shared<MrcPlan>();
  MrcPlan& p = *plan;
  p.cost = cost;
  p.trace = trace ? *trace : load_trace(a.trace);
  p.specs = policies_the_trace_feeds(a.policies, p.trace);
  p.facts = trace_facts(p.trace);
  p.at_trace = p.cost.with_block_tokens(p.trace.block_tokens);
  p.block_bytes = p.at_trace.kv_bytes_per_block();
  p.lo = min_spec.blocks(p.facts.unique_blocks, p.trace.block_tokens, p.block_bytes);
  p.hi = max_spec.blocks(p.facts.unique_blocks, p.trace.block_tokens, p.block_bytes);
  if (p.lo > p.hi)
    throw ConfigError(fmt::format("--min {} ({} blocks) is above --max {} ({} blocks)", a.min, p.lo,
                                  a.max, p.hi));
  p.caps = spaced(p.lo, p.hi, a.points, a.linear);
  p.opts.seed = a.seed;
  p.opts.cost_model = &p.cost;
  for (auto& spec : p.specs)
    if (spec.label() != "lru")
      for (size_t c : p.caps) p.configs.push_back({spec, c, -1, p.opts});
  return plan;
}

std::vector<ReplayResult> run_mrc_replays(const MrcPlan& p, unsigned jobs) {
  if (p.configs.empty()) return {};
  SweepOptions sweep;
  sweep.jobs = jobs;
  Progress progress("replay");
  sweep.progress = [&](double f, const std::string& what) { progress.update(f, "(" + what + ")"); };
  return run_sweep(p.trace, p.configs, sweep);
}

MrcRun mrc_curves(std::shared_ptr<MrcPlan> plan, const std::vector<ReplayResult>& replays) {
  MrcRun run;
  run.plan = plan;
  for (auto& spec : plan->specs) {
    if (spec.label() == "lru") {
      run.distances = lru_stack_distances(plan->trace);
      run.curves.push_back(
          {spec, "stack", lru_curve(plan->trace, run.distances, plan->caps, plan->opts), {}});
      continue;
    }
    run.curves.push_back({spec, "replay", {}, {}});
  }
  size_t k = 0;
  for (auto& c : run.curves)
    if (std::string(c.method) == "replay")
      for (size_t i = 0; i < plan->caps.size(); ++i) c.points.push_back(replays[k++]);
  return run;
}

void find_mrc_targets(MrcRun& run, double target) {
  const MrcPlan& p = *run.plan;
  run.target = target;
  std::optional<Oracle> oracle;
  for (auto& c : run.curves)
    if (needs_future(c.spec) && !oracle) oracle = compute_oracle(p.trace);
  for (auto& c : run.curves) {
    TargetSearch s;
    if (std::string(c.method) == "stack") {
      s.capacity_blocks = lru_capacity_for_hit_rate(run.distances, target);
      s.block_hit_rate = p.facts.infinite_hit_rate;
      if (s.capacity_blocks)
        s.block_hit_rate =
            lru_curve(p.trace, run.distances, std::span(&*s.capacity_blocks, 1), p.opts)[0]
                .block_hit_rate;
    } else {
      s = search_capacity_for_hit_rate(p.trace, oracle ? &*oracle : nullptr, c.spec, c.points,
                                       target, p.opts);
    }
    c.target = s;
  }
}

MrcRun run_mrc(const MrcOptions& o, const Trace* trace) {
  std::optional<double> target = check_mrc_options(o);
  auto plan = make_mrc_plan(o, mrc_cost_model(o), trace);
  MrcRun run = mrc_curves(plan, run_mrc_replays(*plan, o.jobs));
  if (target) find_mrc_targets(run, *target);
  return run;
}

std::vector<std::string> mrc_rows(const MrcRun& run) {
  const MrcPlan& p = *run.plan;
  std::vector<std::string> out;
  for (auto& c : run.curves) {
    for (auto& r : c.points)
      out.push_back(point_json(p.trace, c, r, p.block_bytes, p.facts.unique_blocks));
    if (c.target) out.push_back(target_json(p.trace, c, *run.target, p.block_bytes));
  }
  return out;
}

std::string kv_label(const CostModel& cost) {
  if (cost.is_linear())
    return fmt::format("linear cost model, {:g} KV bytes/token", cost.kv_bytes_per_token());
  double bytes = cost.options().kv_dtype_bytes;
  if (bytes == 0) bytes = cost.model().dtype_bytes;
  std::string dtype = bytes == 1 ? "fp8" : bytes == 2 ? "fp16" : fmt::format("{:g}-byte", bytes);
  return cost.model().name + " " + dtype;
}

}  // namespace kvpolicy::app
