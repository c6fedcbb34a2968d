// `kvpolicy compare`: every policy over several capacities, as one table of hit rates with
// Belady and the infinite cache as references and each policy's share of the LRU-to-Belady gap.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "command.h"
#include "common.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/sim/sim.h"
#include "report.h"

namespace kvpolicy::cli {
namespace {

struct CompareArgs {
  TraceArgs trace;
  std::string policies;  // empty = every registered policy
  std::string capacities = "0.02,0.05,0.1,0.2";
  uint64_t seed = 1;
  GridOptions grid;
};

constexpr const char* kBaseline = "lru";
constexpr const char* kOptimum = "belady";
// Below this LRU-to-Belady gap (0.1 percentage points) the share closed is noise.
constexpr double kMinGap = 0.001;

struct Row {
  PolicySpec spec;
  std::vector<ReplayResult> results;  // one per capacity, in order; empty if it failed
  std::string error;
  double mean_hit() const {
    double s = 0;
    for (auto& r : results) s += r.block_hit_rate;
    return results.empty() ? -1 : s / results.size();
  }
};

std::string cap_header(const Capacity& c, size_t unique) {
  size_t b = c.blocks(unique);
  std::string blocks = b >= 10000 ? fmt::format("{}k", (b + 500) / 1000) : fmt::format("{}", b);
  return c.is_fraction() ? fmt::format("{} ({})", c.label(), blocks) : blocks;
}

void print_tables(const Trace& trace, const TraceFacts& facts, const std::vector<Capacity>& caps,
                  std::vector<Row>& rows) {
  fmt::print("workload: {}\n", trace.name);
  fmt::print("  {} requests, {} block accesses, {} unique blocks of {} tokens\n\n", facts.requests,
             facts.block_accesses, facts.unique_blocks, trace.block_tokens);

  const Row* lru = nullptr;
  const Row* opt = nullptr;
  for (auto& r : rows) {
    if (r.spec.label() == kBaseline && !r.results.empty()) lru = &r;
    if (r.spec.label() == kOptimum && !r.results.empty()) opt = &r;
  }
  std::vector<Row*> ranked;
  for (auto& r : rows)
    if (&r != opt) ranked.push_back(&r);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](Row* a, Row* b) { return a->mean_hit() > b->mean_hit(); });

  size_t name_w = 24;
  for (auto& r : rows) name_w = std::max(name_w, r.spec.label().size() + 11);
  size_t col_w = 12;
  for (auto& c : caps) col_w = std::max(col_w, cap_header(c, facts.unique_blocks).size() + 2);

  auto header = [&](const char* title) {
    fmt::print("{:<{}}", title, name_w);
    for (auto& c : caps) fmt::print("{:>{}}", cap_header(c, facts.unique_blocks), col_w);
  };
  auto name_of = [&](const Row& r) {
    std::string n = r.spec.label();
    if (&r == lru) n += " (baseline)";
    if (needs_future(r.spec) && &r != opt) n += " (offline)";
    return n;
  };

  fmt::print("block hit rate %, capacity = share of unique blocks (blocks)\n");
  header("policy");
  fmt::print("{:>10}\n", "ns/access");
  for (Row* r : ranked) {
    fmt::print("{:<{}}", name_of(*r), name_w);
    if (r->results.empty()) {
      fmt::print("  failed: {}\n", r->error);
      continue;
    }
    double ns = 0;
    for (auto& res : r->results) {
      fmt::print("{:>{}.2f}", res.block_hit_rate * 100, col_w);
      ns += res.ns_per_access;
    }
    fmt::print("{:>10.1f}\n", ns / r->results.size());
  }
  fmt::print("{}\n", std::string(name_w + col_w * caps.size() + 10, '-'));
  if (opt) {
    fmt::print("{:<{}}", "belady (offline optimum)", name_w);
    double ns = 0;
    for (auto& res : opt->results) {
      fmt::print("{:>{}.2f}", res.block_hit_rate * 100, col_w);
      ns += res.ns_per_access;
    }
    fmt::print("{:>10.1f}\n", ns / opt->results.size());
  }
  fmt::print("{:<{}}", "infinite cache", name_w);
  for (size_t i = 0; i < caps.size(); ++i)
    fmt::print("{:>{}.2f}", facts.infinite_hit_rate * 100, col_w);
  fmt::print("\n");

  if (!lru || !opt) {
    fmt::print("\n(gap closed needs both {} and {})\n", kBaseline, kOptimum);
    return;
  }
  fmt::print(
      "\ngap closed towards Belady, % (LRU = 0, Belady = 100; negative = worse than LRU; - = "
      "LRU within 0.1 points of Belady)\n");
  header("policy");
  fmt::print("\n");
  for (Row* r : ranked) {
    if (r->results.empty() || r == lru) continue;
    fmt::print("{:<{}}", name_of(*r), name_w);
    for (size_t i = 0; i < caps.size(); ++i) {
      double gap = opt->results[i].block_hit_rate - lru->results[i].block_hit_rate;
      if (gap < kMinGap) {
        fmt::print("{:>{}}", "-", col_w);  // LRU (nearly) optimal: a share of nothing
      } else {
        double closed = (r->results[i].block_hit_rate - lru->results[i].block_hit_rate) / gap;
        fmt::print("{:>{}.1f}", closed * 100, col_w);
      }
    }
    fmt::print("\n");
  }
}

void run(const CompareArgs& args) {
  auto caps = parse_capacities(args.capacities);
  std::vector<PolicySpec> specs;
  if (args.policies.empty()) {
    for (auto& n : PolicyRegistry::instance().names()) specs.push_back({n, ""});
  } else {
    specs = parse_policy_list(args.policies);
    // The references are always there, so the gap can be shown.
    for (const char* ref : {kBaseline, kOptimum}) {
      bool present = std::any_of(specs.begin(), specs.end(),
                                 [&](const PolicySpec& s) { return s.label() == ref; });
      if (!present) specs.push_back({ref, ""});
    }
  }
  for (auto& s : specs) PolicyRegistry::instance().get(s.name);  // fail before loading
  start_json_output(args.grid);

  auto start = std::chrono::steady_clock::now();
  Trace trace = args.trace.path.empty() ? default_workload(args.seed) : args.trace.load();
  TraceFacts facts = trace_facts(trace);
  oracle_scores_without_continuation(trace, specs);

  // One grid per policy, so one failing policy is reported without losing the others.
  std::vector<Row> rows;
  std::vector<ReplayResult> all;
  for (auto& spec : specs) {
    Row row{spec, {}, {}};
    try {
      row.results = run_grid(trace, {spec}, caps, args.seed, args.grid);
      all.insert(all.end(), row.results.begin(), row.results.end());
    } catch (const Error& e) {
      row.error = e.what();
    }
    rows.push_back(std::move(row));
  }
  print_tables(trace, facts, caps, rows);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("\n{} policies x {} capacities in {:.1f} s (seed {})\n", specs.size(), caps.size(),
             secs, args.seed);

  std::string failed;
  for (auto& r : rows)
    if (!r.error.empty()) failed += (failed.empty() ? "" : ", ") + r.spec.label();
  if (!failed.empty()) throw Error("policies failed: " + failed);
}

void add(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand(
      "compare",
      "every policy at several capacities on a trace, or on the built-in conversation workload");
  args->trace.add(cmd, false);
  cmd->add_option("--policy,-p", args->policies,
                  "policies, comma-separated, each name[:key=value,...] (default: all; lru and "
                  "belady are always added as references)");
  cmd->add_option("--capacity,-c", args->capacities,
                  "capacities: below 1 a fraction of unique blocks, else blocks")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of the built-in workload and randomized policies")
      ->capture_default_str();
  add_sweep_options(cmd, args->grid);
  cmd->callback([args] { run(*args); });
}

CommandRegistrar registrar(10, add);

}  // namespace
}  // namespace kvpolicy::cli
