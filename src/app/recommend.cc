// `kvpolicy recommend`: the candidates measured at one capacity (replayed on a trace through the
// app layer's grid, or read from a finished run's rows), the choice and its margin over LRU.
#include "kvpolicy/app/recommend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include "kvpolicy/app/mrc.h"
#include "kvpolicy/app/replay.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/sim/sweep.h"
#include "kvpolicy/trace/json_record.h"

namespace kvpolicy::app {
namespace {

// One row of a result file, as recommend needs it.
struct Row {
  uint64_t line = 0;
  std::string trace, policy, cost_model;
  bool offline = false;
  size_t capacity_blocks = 0;
  double capacity_gb = 0, capacity_share = -1, block_hit_rate = 0;
  uint32_t block_tokens = 0;      // 0: the row does not say (replay rows)
  double kv_bytes_per_block = 0;  // 0: the row does not say (replay rows)
  uint64_t block_accesses = 0;
};

// The rows of a compare, simulate or mrc --json file: replay rows with one tier, and mrc's
// points (its targets skipped). Every problem is an InputError naming the file, line and field.
std::vector<Row> read_rows(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", "cannot open the result file");
  std::vector<Row> rows;
  std::string text;
  uint64_t no = 0, two_tier = 0;
  while (std::getline(in, text)) {
    ++no;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    JsonRecord j(text, path, no);
    if (j.str_or("mode", "") == "serve")
      j.fail("mode", "a serve-mode row; recommend reads compare, simulate and mrc rows");
    Row row;
    row.line = no;
    if (std::string kind = j.str_or("kind", ""); !kind.empty()) {
      if (kind == "target") continue;
      if (kind != "point") j.fail("kind", "'" + kind + "' is not an mrc row's point or target");
      MrcRow m;
      for (const auto& f : mrc_point_fields())
        if (f.read) f.read(j, m);
      row.trace = m.trace;
      row.policy = PolicySpec{m.policy, m.params}.label();
      row.cost_model = m.cost_model;
      row.capacity_blocks = m.capacity_blocks;
      row.capacity_gb = m.capacity_gb;
      row.capacity_share = m.capacity_share;
      row.block_hit_rate = m.block_hit_rate;
      row.block_tokens = m.block_tokens;
      row.kv_bytes_per_block = m.kv_bytes_per_block;
      row.block_accesses = m.block_accesses;
    } else {
      ReplayResult r = parse_result_json(text, path, no);
      if (r.dram_capacity_blocks > 0) {
        ++two_tier;
        continue;
      }
      row.trace = r.trace;
      row.policy = PolicySpec{r.policy, r.params}.label();
      row.offline = r.offline;
      row.cost_model = r.cost_model;
      row.capacity_blocks = r.capacity_blocks;
      row.capacity_gb = r.capacity_gb;
      row.capacity_share = r.capacity_fraction;
      row.block_hit_rate = r.block_hit_rate;
      row.block_accesses = r.block_accesses;
    }
    if (row.policy.empty()) j.fail("policy", "empty");
    if (!(row.block_hit_rate >= 0 && row.block_hit_rate <= 1))
      j.fail("block_hit_rate", "not a share in [0, 1]");
    if (row.capacity_blocks < 1) j.fail("capacity_blocks", "below one block");
    if (!(row.capacity_gb >= 0) || !std::isfinite(row.capacity_gb))
      j.fail("capacity_gb", "not a finite number >= 0");
    rows.push_back(std::move(row));
  }
  if (rows.empty())
    throw InputError(path, 0, "",
                     two_tier ? "every row has a DRAM tier (--dram); recommend reads one-tier rows"
                              : "no result rows (compare, simulate or mrc --json output)");
  return rows;
}

// The rows' capacity `text` names (or their only one): the nearest in its unit within 1 %.
size_t pick_capacity(const std::vector<Row>& rows, const std::string& text,
                     const std::string& path) {
  std::set<size_t> caps;
  for (const Row& r : rows) caps.insert(r.capacity_blocks);
  std::string list;
  for (size_t c : caps) list += (list.empty() ? "" : ", ") + with_commas(c);
  if (text.empty()) {
    if (caps.size() == 1) return *caps.begin();
    throw ConfigError(fmt::format("{} holds {} capacities ({} blocks): choose one with -c", path,
                                  caps.size(), list));
  }
  CapacitySpec want = capacity_specs(text, true).front();
  auto value = [&](const Row& r) -> double {
    switch (want.unit) {
      case CapacitySpec::Unit::kBlocks:
        return double(r.capacity_blocks);
      case CapacitySpec::Unit::kFraction:
        return r.capacity_share;
      case CapacitySpec::Unit::kBytes:
        return r.capacity_gb * 1e9;
      case CapacitySpec::Unit::kTokens:
        return r.block_tokens ? double(r.capacity_blocks) * r.block_tokens : -1;
    }
    return -1;
  };
  const Row* best = nullptr;
  double best_gap = 0;
  for (const Row& r : rows) {
    double v = value(r);
    if (v < 0) continue;
    double gap = std::abs(v - want.value) / std::max(want.value, 1e-12);
    if (!best || gap < best_gap) best = &r, best_gap = gap;
  }
  if (!best || best_gap > 0.01)
    throw ConfigError(
        fmt::format("{} has no row at capacity {} (its capacities: {} blocks)", path, text, list));
  return best->capacity_blocks;
}

// The rows' block size: --block-tokens, an mrc row's, or the one that makes the rows' GB of KV
// match the cost model's KV bytes per token.
uint32_t rows_block_tokens(const Row& r, const RecommendOptions& o, const CostModel& cost) {
  if (o.trace.block_tokens) return o.trace.block_tokens;
  if (r.block_tokens) return r.block_tokens;
  double b = r.capacity_gb * 1e9 / double(r.capacity_blocks) / cost.kv_bytes_per_token();
  if (r.capacity_gb >= 0.1 && std::llround(b) >= 1 && std::abs(b - std::llround(b)) < 0.02 * b)
    return static_cast<uint32_t>(std::llround(b));
  throw ConfigError(fmt::format(
      "{}: the rows carry no block size and their GB of KV ({} at {} blocks, {}) do not match "
      "{}'s KV bytes per token: give --block-tokens (and --model as the run had it)",
      o.results, r.capacity_gb, r.capacity_blocks, r.cost_model, cost.label()));
}

void refuse_offline(const PolicySpec& spec) {
  if (needs_future(spec))
    throw ConfigError(fmt::format(
        "policy {} reads the trace's future (each block's next use): it is a replay-only "
        "reference that no engine can run; recommend takes an online policy (kvpolicy policies "
        "lists them)",
        spec.label()));
}

// Best first; on an exact tie LRU first (nothing to install), then as given.
void sort_candidates(std::vector<RecommendCandidate>& c) {
  std::stable_sort(c.begin(), c.end(), [](const auto& a, const auto& b) {
    if (a.block_hit_rate != b.block_hit_rate) return a.block_hit_rate > b.block_hit_rate;
    return a.policy == "lru" && b.policy != "lru";
  });
}

// The choice among the candidates: the forced one, or the best online one.
const RecommendCandidate& choose(const Recommendation& r, const std::string& forced,
                                 const std::string& where) {
  for (const RecommendCandidate& c : r.candidates) {
    if (!forced.empty() ? c.policy == forced : !c.offline) return c;
  }
  if (!forced.empty())
    throw ConfigError(
        fmt::format("{} has no row for policy {} at {} blocks", where, forced, r.capacity_blocks));
  throw ConfigError(where + " has no online policy's row at that capacity");
}

void from_results(const RecommendOptions& o, Recommendation& r) {
  std::vector<Row> rows = read_rows(o.results);
  std::set<std::string> traces;
  for (const Row& row : rows) traces.insert(row.trace);
  if (traces.size() > 1)
    throw ConfigError(fmt::format("{} holds rows of {} traces ({}, ...): give one trace's rows",
                                  o.results, traces.size(), *traces.begin()));
  size_t cap = pick_capacity(rows, o.capacity, o.results);
  CostModel cost = o.cost.make();
  const Row* first = nullptr;
  std::set<std::string> seen;
  for (const Row& row : rows) {
    if (row.capacity_blocks != cap || !seen.insert(row.policy).second) continue;
    if (!first) first = &row;
    bool offline = row.offline;
    PolicySpec spec = parse_policy_spec(row.policy);
    try {
      offline = offline || needs_future(spec);
    } catch (const ConfigError& e) {
      throw InputError(o.results, row.line, "policy", e.what());
    }
    r.candidates.push_back({row.policy, row.block_hit_rate, offline});
    if (row.policy == "lru") r.lru_hit_rate = row.block_hit_rate;
  }
  if (!seen.count("lru"))
    throw ConfigError(fmt::format(
        "{} has no lru row at {} blocks: the margin over LRU needs one (run with -p ...,lru)",
        o.results, cap));
  r.source = "results";
  r.input = o.results;
  r.trace = first->trace;
  r.capacity_blocks = cap;
  r.capacity_gb = first->capacity_gb;
  r.capacity_share = first->capacity_share;
  r.cost_model = first->cost_model;
  r.block_accesses = first->block_accesses;
  r.block_tokens = rows_block_tokens(*first, o, cost);
  // KV bytes per block: the row's (mrc), else the cost model's at that block size when it
  // agrees with the rows' GB of KV (3 decimals in replay rows), else those GB over the blocks.
  double exact = cost.with_block_tokens(r.block_tokens).kv_bytes_per_block();
  double from_gb = r.capacity_gb * 1e9 / double(cap);
  if (first->kv_bytes_per_block > 0)
    r.kv_bytes_per_block = first->kv_bytes_per_block;
  else if (r.capacity_gb <= 0 || std::abs(from_gb - exact) <= 0.01 * exact)
    r.kv_bytes_per_block = exact;
  else
    r.kv_bytes_per_block = from_gb;
  r.capacity_gb = r.kv_bytes_per_block * double(cap) / 1e9;
}

void from_trace(const RecommendOptions& o, Recommendation& r) {
  if (o.capacity.empty())
    throw ConfigError("recommend needs -c CAPACITY with a trace (blocks, 5%, 10000t or 40GB)");
  capacity_specs(o.capacity, true);  // fail before loading
  CostModel cost = o.cost.make();
  std::string policies = o.policy.empty() ? o.among : o.policy;
  policies += ",lru";
  for (const PolicySpec& s : expand_policy_sets(policies)) PolicyRegistry::instance().get(s.name);
  Trace trace = load_trace(o.trace);
  // A set's members the trace cannot feed (LPC without scores) are said on stderr.
  ReplayPlan plan = plan_replay_grid(trace, policies, o.capacity, cost);
  GridOptions grid;
  grid.cost_model = &cost;
  grid.jobs = o.jobs;
  std::vector<ReplayResult> results =
      run_grid(trace, plan.specs, plan.caps, o.seed, grid, {}, &plan.facts);
  CostModel at_trace = cost.with_block_tokens(std::max<uint32_t>(trace.block_tokens, 1));
  for (const ReplayResult& res : results) {
    std::string label = PolicySpec{res.policy, res.params}.label();
    r.candidates.push_back({label, res.block_hit_rate, res.offline});
    if (label == "lru") r.lru_hit_rate = res.block_hit_rate;
  }
  r.source = "trace";
  r.input = o.trace.path;
  r.trace = trace.name;
  r.capacity_blocks = results.front().capacity_blocks;
  r.capacity_gb = results.front().capacity_gb;
  r.capacity_share =
      double(r.capacity_blocks) / double(std::max<size_t>(plan.facts.unique_blocks, 1));
  r.cost_model = results.front().cost_model;
  r.block_accesses = results.front().block_accesses;
  r.block_tokens = trace.block_tokens;
  r.kv_bytes_per_block = at_trace.kv_bytes_per_block();
  r.varied_categories = std::any_of(trace.category.begin(), trace.category.end(),
                                    [&](CategoryId c) { return c != trace.category.front(); });
  // A randomized winner's hit rate moves with the seed: two more seeds measure how far.
  sort_candidates(r.candidates);
  std::string forced = o.policy.empty() ? "" : parse_policy_spec(o.policy).label();
  const RecommendCandidate& best = choose(r, forced, o.trace.path);
  PolicySpec spec = parse_policy_spec(best.policy);
  if (PolicyRegistry::instance().get(spec.name).randomized) {
    double lo = best.block_hit_rate, hi = lo;
    for (uint64_t s : {o.seed + 1, o.seed + 2})
      for (const ReplayResult& res : run_grid(trace, {spec}, plan.caps, s, grid, {}, &plan.facts))
        lo = std::min(lo, res.block_hit_rate), hi = std::max(hi, res.block_hit_rate);
    r.seed_spread_points = 100 * (hi - lo);
  }
}

}  // namespace

double hit_rate_noise_points(double a, double b, uint64_t accesses) {
  double n = double(std::max<uint64_t>(accesses, 1));
  double se = std::sqrt((a * (1 - a) + b * (1 - b)) / n);
  return std::max(0.1, 100 * 2 * se);
}

Recommendation run_recommend(const RecommendOptions& o) {
  if (o.results.empty() == o.trace.path.empty())
    throw ConfigError("recommend: give either a trace (-t) or a result file (--from)");
  if (!o.policy.empty()) {
    PolicySpec forced = parse_policy_spec(o.policy);
    PolicyRegistry::instance().get(forced.name);
    refuse_offline(forced);
  }
  Recommendation r;
  if (o.results.empty())
    from_trace(o, r);
  else
    from_results(o, r);
  sort_candidates(r.candidates);
  std::string forced = o.policy.empty() ? "" : parse_policy_spec(o.policy).label();
  const RecommendCandidate& best = choose(r, forced, r.input);
  PolicySpec spec = parse_policy_spec(best.policy);
  r.policy = best.policy;
  r.forced = !forced.empty();
  r.randomized = PolicyRegistry::instance().get(spec.name).randomized;
  r.block_hit_rate = best.block_hit_rate;
  r.margin_points = 100 * (r.block_hit_rate - r.lru_hit_rate);
  r.noise_points = hit_rate_noise_points(r.block_hit_rate, r.lru_hit_rate, r.block_accesses);
  if (r.seed_spread_points > r.noise_points) r.noise_points = r.seed_spread_points;
  r.within_noise = std::abs(r.margin_points) < r.noise_points;
  r.engines = engine_configs(r);
  return r;
}

}  // namespace kvpolicy::app
