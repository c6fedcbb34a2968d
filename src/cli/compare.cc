// `kvpolicy compare`: every policy over several capacities, as one table of hit rates with
// Belady and the infinite cache as references and each policy's share of the LRU-to-Belady gap.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
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
  std::string policies = "all";  // lru and belady are always added as references
  CapacityArgs capacities;
  CostArgs cost;
  uint64_t seed = 1;
  GridOptions grid;
};

constexpr const char* kBaseline = "lru";
constexpr const char* kOptimum = "belady";
// Below this LRU-to-Belady gap (0.1 percentage points) the share closed is noise.
constexpr double kMinGap = 0.001;

struct Row {
  PolicySpec spec;
  bool offline = false;               // reads the trace's future: a reference, not deployable
  std::vector<ReplayResult> results;  // one per capacity, in order; empty if it failed
  std::string error;
  double mean_hit() const {
    double s = 0;
    for (auto& r : results) s += r.block_hit_rate;
    return results.empty() ? -1 : s / results.size();
  }
};

// Rows with the same hits at every capacity, said in one line rather than left for the reader to
// spot ("guarded = lru; fpb = laru = belady"), with the defaults that make a policy another: a
// parameter naming a policy (guarded's inner) or the oracle (a predictor reading Belady's next
// use).
void print_identical_rows(const std::vector<Row>& rows) {
  std::vector<std::vector<const Row*>> groups;
  auto hits = [](const Row& r) {
    std::vector<uint64_t> h;
    for (auto& res : r.results) h.push_back(res.block_hits);
    return h;
  };
  for (const Row& r : rows) {
    if (r.results.empty()) continue;
    auto same = std::find_if(groups.begin(), groups.end(),
                             [&](auto& g) { return hits(*g.front()) == hits(r); });
    if (same == groups.end())
      groups.push_back({&r});
    else
      same->push_back(&r);
  }
  std::string line, why;
  auto& registry = PolicyRegistry::instance();
  auto names = registry.names();
  for (auto& g : groups) {
    if (g.size() < 2) continue;
    std::string members;
    for (const Row* r : g) {
      members += (members.empty() ? "" : " = ") + r->spec.label();
      if (!r->spec.params.empty()) continue;
      for (const ParamSpec& p : registry.get(r->spec.name).params)
        if (p.default_value == "oracle" ||
            std::find(names.begin(), names.end(), p.default_value) != names.end())
          why += (why.empty() ? "" : ", ") +
                 fmt::format("{}:{}={}", r->spec.name, p.name, p.default_value);
    }
    line += (line.empty() ? "" : "; ") + members;
  }
  if (line.empty()) return;
  fmt::print("\nidentical rows (the same hits at every capacity): {}{}\n", line,
             why.empty() ? "" : " (their defaults: " + why + ")");
}

void print_tables(const Trace& trace, const TraceFacts& facts, const CostModel& cost,
                  const std::vector<ResolvedCapacity>& caps, std::vector<Row>& rows) {
  print_assumptions(trace.assumptions);
  fmt::print("workload: {}\n", trace.name);
  fmt::print("  {} requests, {} block accesses, {} unique blocks of {} tokens\n", facts.requests,
             facts.block_accesses, facts.unique_blocks, trace.block_tokens);
  fmt::print("  KV memory through {}: {:.3g} MB a block\n\n", cost.label(),
             cost.kv_bytes_per_block() / 1e6);

  const Row* lru = nullptr;
  const Row* opt = nullptr;
  for (auto& r : rows) {
    if (r.spec.label() == kBaseline && !r.results.empty()) lru = &r;
    if (r.spec.label() == kOptimum && !r.results.empty()) opt = &r;
  }
  // Deployable policies first, best mean hit rate on top; the offline references below a line.
  std::vector<Row*> online, offline;
  for (auto& r : rows) (r.offline ? offline : online).push_back(&r);
  auto by_hit = [](Row* a, Row* b) { return a->mean_hit() > b->mean_hit(); };
  std::stable_sort(online.begin(), online.end(), by_hit);
  std::stable_sort(offline.begin(), offline.end(), by_hit);

  size_t name_w = 24;
  for (auto& r : rows) name_w = std::max(name_w, r.spec.label().size() + 11);
  size_t col_w = 12;
  for (auto& c : caps) col_w = std::max(col_w, c.written().size() + 2);

  auto header = [&](const std::string& title, bool units) {
    fmt::print("{:<{}}", title, name_w);
    for (auto& c : caps) fmt::print("{:>{}}", c.written(), col_w);
    if (!units) return;
    fmt::print("\n{:<{}}", "  = blocks", name_w);
    for (auto& c : caps) fmt::print("{:>{}}", with_commas(c.blocks), col_w);
    fmt::print("\n{:<{}}", "  = GB of KV", name_w);
    for (auto& c : caps) fmt::print("{:>{}}", gb_text(c.gb), col_w);
    fmt::print("\n{:<{}}", "  = % of unique blocks", name_w);
    for (auto& c : caps) fmt::print("{:>{}}", percent_text(c.unique_share), col_w);
  };
  auto name_of = [&](const Row& r) {
    std::string n = r.spec.label();
    if (&r == lru) n += " (baseline)";
    if (&r == opt) n += " (optimum)";
    return n;
  };
  std::string line(name_w + col_w * caps.size() + 10, '-');
  auto print_row = [&](const Row& r) {
    fmt::print("{:<{}}", name_of(r), name_w);
    if (r.results.empty()) {
      fmt::print("  failed: {}\n", r.error);
      return;
    }
    double ns = 0;
    for (auto& res : r.results) {
      fmt::print("{:>{}.2f}", res.block_hit_rate * 100, col_w);
      ns += res.ns_per_access;
    }
    fmt::print("{:>10.1f}\n", ns / r.results.size());
  };

  fmt::print("block hit rate, % (share of block accesses found cached); capacity\n");
  header("", true);
  fmt::print("\n{:<{}}{:>{}}\n", "deployable policies", name_w + col_w * caps.size(), "ns/access",
             10);
  for (Row* r : online) print_row(*r);
  fmt::print("{}\n", line);
  if (!offline.empty()) fmt::print("offline references (read the trace's future)\n");
  for (Row* r : offline) print_row(*r);
  fmt::print("{:<{}}", "infinite cache", name_w);
  for (size_t i = 0; i < caps.size(); ++i)
    fmt::print("{:>{}.2f}", facts.infinite_hit_rate * 100, col_w);
  fmt::print("\n");
  print_identical_rows(rows);

  if (!lru || !opt) {
    fmt::print("\n(gap closed and the recommendation need both {} and {})\n", kBaseline, kOptimum);
    return;
  }
  fmt::print(
      "\ngap closed towards Belady, % (LRU = 0, Belady = 100; negative = worse than LRU; - = "
      "LRU within 0.1 points of Belady)\n");
  header("policy", false);
  fmt::print("\n");
  auto gap_row = [&](const Row& r) {
    if (r.results.empty() || &r == lru || &r == opt) return;
    fmt::print("{:<{}}", name_of(r), name_w);
    for (size_t i = 0; i < caps.size(); ++i) {
      double gap = opt->results[i].block_hit_rate - lru->results[i].block_hit_rate;
      if (gap < kMinGap) {
        fmt::print("{:>{}}", "-", col_w);  // LRU (nearly) optimal: a share of nothing
      } else {
        double closed = (r.results[i].block_hit_rate - lru->results[i].block_hit_rate) / gap;
        fmt::print("{:>{}.1f}", closed * 100, col_w);
      }
    }
    fmt::print("\n");
  };
  for (Row* r : online) gap_row(*r);
  bool offline_rows = std::any_of(offline.begin(), offline.end(),
                                  [&](Row* r) { return r != opt && !r->results.empty(); });
  if (offline_rows) fmt::print("{}\n", line);
  for (Row* r : offline) gap_row(*r);

  // The answer a user came for: which deployable policy to run at each capacity.
  fmt::print("\n");
  for (size_t i = 0; i < caps.size(); ++i) {
    const Row* best = nullptr;
    for (Row* r : online)
      if (!r->results.empty() &&
          (!best || r->results[i].block_hit_rate > best->results[i].block_hit_rate))
        best = r;
    if (!best) continue;
    double best_hit = best->results[i].block_hit_rate;
    double lru_hit = lru->results[i].block_hit_rate;
    double gap = opt->results[i].block_hit_rate - lru_hit;
    std::string at = caps[i].label();
    if (gap < kMinGap) {
      fmt::print("best deployable policy at {}: lru (it is within 0.1 points of Belady)\n", at);
      continue;
    }
    if (best == lru || best_hit <= lru_hit) {
      fmt::print("best deployable policy at {}: lru (no deployable policy beats it)\n", at);
      continue;
    }
    fmt::print(
        "best deployable policy at {}: {}, {:+.2f} points over LRU, closes {:.1f} % of the gap "
        "to Belady\n",
        at, best->spec.label(), (best_hit - lru_hit) * 100, (best_hit - lru_hit) / gap * 100);
  }
}

// The references are always there, so the gap can be shown.
void add_references(std::vector<PolicySpec>& specs) {
  for (const char* ref : {kBaseline, kOptimum}) {
    bool present = std::any_of(specs.begin(), specs.end(),
                               [&](const PolicySpec& s) { return s.label() == ref; });
    if (!present) specs.push_back({ref, ""});
  }
}

void run(const CompareArgs& args) {
  args.capacities.specs();  // fail before loading
  std::vector<PolicySpec> specs = expand_policy_sets(args.policies);
  add_references(specs);
  for (auto& s : specs) PolicyRegistry::instance().get(s.name);  // fail before loading
  CostModel cost = args.cost.make();
  start_json_output(args.grid);

  auto start = std::chrono::steady_clock::now();
  Trace trace = args.trace.path.empty() ? default_workload(args.seed) : args.trace.load();
  TraceFacts facts = trace_facts(trace);
  CostModel at_trace = cost.with_block_tokens(std::max<uint32_t>(trace.block_tokens, 1));
  auto caps = args.capacities.resolve(facts.unique_blocks, at_trace);
  std::vector<CapacitySpec> grid_caps;
  for (auto& c : caps) grid_caps.push_back(c.capacity);
  std::string skipped;  // said under the table, so the run does not open with it
  specs = policies_the_trace_feeds(args.policies, trace, &skipped);
  add_references(specs);
  GridOptions grid = args.grid;
  grid.cost_model = &cost;

  // One grid per policy, so one failing policy is reported without losing the others. The first
  // grid that succeeds starts the results file afresh (unless --resume); the others append to it.
  std::vector<Row> rows;
  for (auto& spec : specs) {
    Row row{spec, needs_future(spec), {}, {}};
    try {
      row.results = run_grid(trace, {spec}, grid_caps, args.seed, grid);
      grid.resume = true;
      warn_unfitted_models(row.results);
    } catch (const Error& e) {
      row.error = e.what();
    }
    rows.push_back(std::move(row));
  }
  print_tables(trace, facts, at_trace, caps, rows);
  if (!skipped.empty()) fmt::print("\n{}\n", skipped);
  if (!grid.csv_path.empty()) {
    std::vector<ReplayResult> all;
    for (auto& r : rows) all.insert(all.end(), r.results.begin(), r.results.end());
    write_csv(grid.csv_path, all);
  }
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
  add_policy_option(cmd, args->policies,
                    "policies (lru and belady are always added as references)");
  args->capacities.add(cmd, "0.02,0.05,0.1,0.2");
  args->cost.add(cmd);
  cmd->add_option("--seed", args->seed, "seed of the built-in workload and randomized policies")
      ->capture_default_str();
  add_sweep_options(cmd, args->grid);
  cmd->footer(
      "Terms: block hit rate = share of prompt blocks found cached. Deployable (online) policies "
      "read only the past; offline references (belady, oracle variants) read the trace's future "
      "and bound what any policy can reach. Gap closed = (policy - LRU) / (Belady - LRU): 0 is "
      "LRU, 100 is Belady. Capacity columns: as written, then blocks, GB of KV (through --model "
      "and --kv-dtype) and % of the trace's unique blocks.");
  cmd->callback([args] { run(*args); });
}

CommandRegistrar registrar(10, add);

}  // namespace
}  // namespace kvpolicy::cli
