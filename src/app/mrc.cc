#include "kvpolicy/app/mrc.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kvpolicy/app/progress.h"
#include "kvpolicy/app/replay.h"
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

using namespace result_fields;
using Row = MrcRow;

// The first fields of both kinds of row.
std::vector<ResultFieldOf<Row>> row_head() {
  std::vector<ResultFieldOf<Row>> f;
  f.push_back(text("kind", &Row::kind, "`point` (a capacity on a curve) or `target`"));
  f.push_back(text("trace", &Row::trace, "the trace's name (its path as given)"));
  f.push_back(optional_text("assumptions", &Row::assumptions,
                            "as in replay: the trace's assumption model, when its prompts are "
                            "assumed"));
  f.push_back(text("policy", &Row::policy, "policy name"));
  f.push_back(text("params", &Row::params, "its `key=value,...` parameters as given"));
  return f;
}

std::vector<ResultFieldOf<Row>> point_fields() {
  auto f = row_head();
  f.push_back(
      text("method", &Row::method, "`stack` (LRU's one pass over stack distances) or `replay`"));
  f.push_back(integer("capacity_blocks", &Row::capacity_blocks, "blocks", "the capacity"));
  f.push_back(number("capacity_gb", &Row::capacity_gb, 6, -1, "GB",
                     "`capacity_blocks` as KV memory through the cost model"));
  f.push_back(number("capacity_share", &Row::capacity_share, 6, -1, "",
                     "`capacity_blocks` / the trace's unique blocks"));
  f.push_back(number("kv_bytes_per_block", &Row::kv_bytes_per_block, 1, -1, "bytes",
                     "KV bytes of one block (model, dtype, block tokens)"));
  f.push_back(integer("block_tokens", &Row::block_tokens, "tokens", "tokens per block"));
  f.push_back(
      integer("block_accesses", &Row::block_accesses, "blocks", "prompt blocks over all requests"));
  f.push_back(integer("block_hits", &Row::block_hits, "blocks", "of them found cached"));
  f.push_back(
      number("block_hit_rate", &Row::block_hit_rate, 6, -1, "", "`block_hits` / `block_accesses`"));
  f.push_back(integer("prompt_tokens", &Row::prompt_tokens, "tokens", "prompt tokens"));
  f.push_back(integer("token_hits", &Row::token_hits, "tokens", "of them found cached"));
  f.push_back(
      number("token_hit_rate", &Row::token_hit_rate, 6, -1, "", "`token_hits` / `prompt_tokens`"));
  const char* ttft = "replay-mode TTFT (prefill of uncached tokens, no queueing)";
  f.push_back(number("ttft_mean_ms", &Row::ttft_mean_ms, 3, -1, "ms", ttft));
  f.push_back(number("ttft_p50_ms", &Row::ttft_p50_ms, 3, -1, "ms", ttft));
  f.push_back(number("ttft_p90_ms", &Row::ttft_p90_ms, 3, -1, "ms", ttft));
  f.push_back(number("ttft_p99_ms", &Row::ttft_p99_ms, 3, -1, "ms", ttft));
  f.push_back(integer("evictions", &Row::evictions, "blocks", "blocks dropped from the cache"));
  f.push_back(integer("uncached_blocks", &Row::uncached_blocks, "blocks",
                      "prompt blocks not inserted because every cached block was pinned"));
  f.push_back(number("infinite_hit_rate", &Row::infinite_hit_rate, 6, -1, "",
                     "hit rate of an infinite cache on this trace"));
  f.push_back(text("cost_model", &Row::cost_model, "the cost model whose prefill times give TTFT"));
  f.push_back(integer("seed", &Row::seed, "", "seed of randomized policies"));
  return f;
}

// capacity_blocks and capacity_gb of a target: null when no capacity reached it.
ResultFieldOf<Row> reached_number(std::string name, bool blocks, std::string unit,
                                  std::string desc) {
  std::string key = name;
  return {name,
          blocks ? "int or null" : "number or null",
          std::move(unit),
          std::move(desc),
          [key, blocks](const Row& r, JsonObject& o) {
            if (!r.reached)
              o.add_null(key);
            else if (blocks)
              o.add(key, r.capacity_blocks);
            else
              o.add(key, r.capacity_gb);
          },
          [key, blocks](const JsonRecord& j, Row& r) {
            r.reached = j.num_or(key.c_str(), -1) >= 0;
            if (!r.reached) return;
            if (blocks)
              j.get(key.c_str(), r.capacity_blocks);
            else
              j.get(key.c_str(), r.capacity_gb);
          }};
}

std::vector<ResultFieldOf<Row>> target_fields() {
  auto f = row_head();
  f.push_back(text("method", &Row::method,
                   "`exact` (LRU's stack distances) or `bisection` (replays between the curve's "
                   "points)"));
  f.push_back(number("target_hit_rate", &Row::target_hit_rate, 6, -1, "",
                     "the block hit rate asked for (`--target-hit`)"));
  f.push_back(reached_number("capacity_blocks", true, "blocks",
                             "the smallest capacity found that reaches it; null if none"));
  f.push_back(reached_number("capacity_gb", false, "GB", "the same as KV memory"));
  f.push_back(number("block_hit_rate", &Row::block_hit_rate, 6, -1, "",
                     "the block hit rate there (or the best on the curve when not reached)"));
  f.push_back(
      flag<Row>("non_monotone", &Row::non_monotone,
                "the curve's hit rate was not monotone in capacity: the smallest point found, "
                "not a proven minimum"));
  f.push_back(integer("replays", &Row::replays, "", "extra replays the bisection ran"));
  return f;
}

Row head_row(const Trace& trace, const MrcCurve& c, const char* kind) {
  Row row;
  row.kind = kind;
  row.trace = trace.name;
  row.assumptions = trace.assumptions.model;
  row.policy = c.spec.name;
  row.params = c.spec.params;
  return row;
}

std::string point_json(const Trace& trace, const MrcCurve& c, const ReplayResult& r,
                       double block_bytes, size_t unique) {
  Row row = head_row(trace, c, "point");
  row.method = c.method;
  row.capacity_blocks = r.capacity_blocks;
  row.capacity_gb = double(r.capacity_blocks) * block_bytes / 1e9;
  row.capacity_share = unique ? double(r.capacity_blocks) / unique : 0.0;
  row.kv_bytes_per_block = block_bytes;
  row.block_tokens = trace.block_tokens;
  row.block_accesses = r.block_accesses;
  row.block_hits = r.block_hits;
  row.block_hit_rate = r.block_hit_rate;
  row.prompt_tokens = r.prompt_tokens;
  row.token_hits = r.token_hits;
  row.token_hit_rate = r.token_hit_rate;
  row.ttft_mean_ms = r.ttft_mean_ms;
  row.ttft_p50_ms = r.ttft_p50_ms;
  row.ttft_p90_ms = r.ttft_p90_ms;
  row.ttft_p99_ms = r.ttft_p99_ms;
  row.evictions = r.evictions;
  row.uncached_blocks = r.uncached_blocks;
  row.infinite_hit_rate = r.infinite_hit_rate;
  row.cost_model = r.cost_model;
  row.seed = r.seed;
  JsonObject o;
  for (const auto& f : mrc_point_fields()) f.write(row, o);
  return o.str();
}

std::string target_json(const Trace& trace, const MrcCurve& c, double target, double block_bytes) {
  Row row = head_row(trace, c, "target");
  row.method = c.method == std::string("stack") ? "exact" : "bisection";
  row.target_hit_rate = target;
  row.reached = c.target->capacity_blocks.has_value();
  if (row.reached) {
    row.capacity_blocks = *c.target->capacity_blocks;
    row.capacity_gb = double(*c.target->capacity_blocks) * block_bytes / 1e9;
  }
  row.block_hit_rate = c.target->block_hit_rate;
  row.non_monotone = c.target->non_monotone;
  row.replays = c.target->replays;
  JsonObject o;
  for (const auto& f : mrc_target_fields()) f.write(row, o);
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

std::vector<ReplayResult> run_mrc_replays(const MrcPlan& p, unsigned jobs,
                                          const SweepPlacement& where) {
  if (p.configs.empty() && !where.comm) return {};
  ReplayCells cells(p.trace, p.configs);
  Sweep<ReplayResult> sweep = replay_sweep(cells, "");
  // A row from a rank has its hit rates recomputed exactly from the counts it carries.
  sweep.parse = [](const std::string& text, const std::string& path, uint64_t line_no) {
    ReplayResult r = parse_result_json(text, path, line_no);
    r.block_hit_rate = r.block_accesses ? double(r.block_hits) / r.block_accesses : 0;
    r.hbm_hit_rate = r.block_hit_rate;
    r.token_hit_rate = r.prompt_tokens ? double(r.token_hits) / r.prompt_tokens : 0;
    return r;
  };
  SweepSettings settings;
  settings.jobs = jobs;
  settings.what = "replay";
  settings.where = where;
  return run_sweep(sweep, settings);
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

const std::vector<ResultFieldOf<MrcRow>>& mrc_point_fields() {
  static const std::vector<ResultFieldOf<MrcRow>> fields = point_fields();
  return fields;
}

const std::vector<ResultFieldOf<MrcRow>>& mrc_target_fields() {
  static const std::vector<ResultFieldOf<MrcRow>> fields = target_fields();
  return fields;
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
