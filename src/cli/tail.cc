// `kvpolicy study tail`: the T-LRU paper's Tables 1-3 and Figure 5 on a trace.
#include "kvpolicy/sim/tail.h"

#include <fmt/format.h>

#include <cmath>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::cli {
namespace {

struct TailArgs {
  TraceArgs trace;
  CapacityArgs capacities;
  std::string xi = "50,100,150,200,500";
  double slo_ms = 200;
  double figure_xi_ms = 200;
  CostArgs cost;
  std::string tlru_params;
  std::string threshold_params;
  uint64_t seed = 1;
  std::string json;
};

double number(const std::string& s, const std::string& what) {
  std::optional<double> v = read_number(s);
  if (!v || *v < 0) throw ConfigError(what + ": '" + s + "' is not a non-negative number");
  return *v;
}

std::string pct(double change) {
  return std::isnan(change) ? std::string("n/a") : fmt::format("{:+.1f}%", change * 100);
}

// "5% 9,140 575GB": the share as written (or "-"), blocks and GB of KV, in 22 columns.
std::string cap_label(const ReplayResult& r) {
  std::string share =
      r.capacity_fraction >= 0 ? fmt::format("{:g}%", r.capacity_fraction * 100) : "-";
  return fmt::format("{} {} {}GB", share, with_commas(r.capacity_blocks), gb_text(r.capacity_gb));
}

void print_study(const TailStudy& s, const std::vector<double>& xis, double slo) {
  size_t caps = s.figure.size();
  auto change = [&](size_t c, size_t x) -> const TailChange& {
    return s.changes[c * xis.size() + x];
  };
  auto row_of = [&](size_t c, size_t k) -> const ReplayResult& { return s.runs[s.figure[c][k]]; };
  // Baselines.
  fmt::print(
      "\nBaselines: TTFT in ms (nearest rank) and SLO violations (% of requests over {:g} ms); "
      "Thr = Threshold-LRU\n",
      slo);
  fmt::print("{:<22} | {:>7} {:>7} {:>7} {:>7} {:>6} | {:>7} {:>7} {:>7} {:>7} {:>6}\n",
             "capacity: % blocks GB", "LRU p50", "p90", "p95", "p99", "viol%", "Thr p50", "p90",
             "p95", "p99", "viol%");
  for (size_t c = 0; c < caps; ++c) {
    const ReplayResult &l = row_of(c, 0), &h = row_of(c, 1);
    fmt::print(
        "{:<22} | {:>7.1f} {:>7.1f} {:>7.1f} {:>7.1f} {:>6.2f} | {:>7.1f} {:>7.1f} {:>7.1f} "
        "{:>7.1f} {:>6.2f}\n",
        cap_label(l), l.ttft_p50_ms, l.ttft_p90_ms, l.ttft_p95_ms, l.ttft_p99_ms,
        l.slo_violation_rate * 100, h.ttft_p50_ms, h.ttft_p90_ms, h.ttft_p95_ms, h.ttft_p99_ms,
        h.slo_violation_rate * 100);
  }
  // Tables 1 and 2.
  for (int vs = 0; vs < 2; ++vs) {
    fmt::print(
        "\nT-LRU vs {1}: change of P90 / P95 / P99 TTFT, % (negative = T-LRU lower; the T-LRU "
        "paper's Table {0})\n",
        vs + 1, vs == 0 ? "LRU" : "Threshold-LRU");
    fmt::print("{:<22}", "capacity: % blocks GB");
    for (double x : xis) fmt::print(" | {:^23}", fmt::format("xi = {:g} ms", x));
    fmt::print("\n");
    for (size_t c = 0; c < caps; ++c) {
      fmt::print("{:<22}", cap_label(row_of(c, 0)));
      for (size_t x = 0; x < xis.size(); ++x) {
        const TailChange& ch = change(c, x);
        if (vs == 0)
          fmt::print(" | {:>7} {:>7} {:>7}", pct(ch.p90_vs_lru), pct(ch.p95_vs_lru),
                     pct(ch.p99_vs_lru));
        else
          fmt::print(" | {:>7} {:>7} {:>7}", pct(ch.p90_vs_threshold), pct(ch.p95_vs_threshold),
                     pct(ch.p99_vs_threshold));
      }
      fmt::print("\n");
    }
  }
  // Table 3.
  fmt::print(
      "\nChange in SLO violations (requests over {:g} ms), T-LRU vs LRU / vs Threshold-LRU, and "
      "in the total TTFT above xi (TEL) vs LRU, % (the T-LRU paper's Table 3)\n",
      slo);
  fmt::print("{:<22}", "capacity: % blocks GB");
  for (double x : xis) fmt::print(" | {:^23}", fmt::format("xi = {:g} ms", x));
  fmt::print("\n");
  for (size_t c = 0; c < caps; ++c) {
    fmt::print("{:<22}", cap_label(row_of(c, 0)));
    for (size_t x = 0; x < xis.size(); ++x) {
      const TailChange& ch = change(c, x);
      fmt::print(" | {:>7} {:>7} {:>7}", pct(ch.slo_vs_lru), pct(ch.slo_vs_threshold),
                 pct(ch.tel_vs_lru));
    }
    fmt::print("\n");
  }
  // Figure 5.
  fmt::print(
      "\nTTFT by policy (ms), T-LRU and its oracle variants at xi = {:g} ms; viol% = requests "
      "over the SLO, hit% = block hit rate (the T-LRU paper's Figure 5)\n",
      s.figure_xi_ms);
  fmt::print("{:<22} {:<14} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7}\n", "capacity: % blocks GB",
             "policy", "p50", "p90", "p95", "p99", "mean", "viol%", "hit%");
  for (size_t c = 0; c < caps; ++c)
    for (size_t k = 0; k < s.figure[c].size(); ++k) {
      const ReplayResult& r = row_of(c, k);
      fmt::print("{:<22} {:<14} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>7.2f} {:>7.2f}\n",
                 k == 0 ? cap_label(r) : "", r.policy, r.ttft_p50_ms, r.ttft_p90_ms, r.ttft_p95_ms,
                 r.ttft_p99_ms, r.ttft_mean_ms, r.slo_violation_rate * 100, r.block_hit_rate * 100);
    }
}

void run(const TailArgs& a) {
  TailStudyOptions o;
  o.cost = a.cost.make();
  a.capacities.specs();  // fail before loading
  o.xi_ms.clear();
  for (auto& x : split_list(a.xi)) o.xi_ms.push_back(number(x, "--xi"));
  if (o.xi_ms.empty()) throw ConfigError("--xi: no threshold given");
  o.slo_ms = a.slo_ms;
  o.figure_xi_ms = a.figure_xi_ms;
  o.tlru_params = a.tlru_params;
  o.threshold_params = a.threshold_params;
  o.seed = a.seed;
  for (const char* p : {"lru", "threshold_lru", "tlru"}) PolicyRegistry::instance().get(p);
  Trace trace = a.trace.load();
  o.cost = o.cost.with_block_tokens(trace.block_tokens);
  o.capacities.clear();
  for (auto& c : a.capacities.resolve(count_unique_blocks(trace), o.cost))
    o.capacities.push_back(c.capacity);

  size_t sessions = 0;
  for (size_t r = 0; r < trace.size(); ++r) sessions += trace.turn[r] == 1;
  LinearFit fit = o.cost.linear_fit();
  print_assumptions(trace.assumptions);
  fmt::print("trace {}: {} requests, {} sessions, {}-token blocks\n", trace.name, trace.size(),
             sessions, trace.block_tokens);
  fmt::print(
      "TTFT: replay mode on {} (fit {:.2f} ms + {:.4f} ms a token); xi = {}; "
      "changes are (T-LRU - baseline) / baseline\n",
      o.cost.label(), fit.intercept_ms, fit.slope_ms_per_token, a.xi);

  Progress progress("tail");
  o.progress = [&](double f) { progress.update(f); };
  TailStudy study = run_tail_study(trace, o);
  print_study(study, o.xi_ms, o.slo_ms);
  if (!a.json.empty()) {
    write_file_atomically(a.json, study.to_json() + '\n');
  }
}

CLI::App* add(CLI::App& parent, const std::string& name) {
  auto args = std::make_shared<TailArgs>();
  auto* cmd = parent.add_subcommand(
      name, "tail latency: T-LRU vs LRU and Threshold-LRU (TTFT percentiles, TEL, SLO)");
  args->trace.add(cmd, true);
  args->capacities.add(cmd, "0.01,0.02,0.05,0.1");
  cmd->add_option("--xi", args->xi, "T-LRU thresholds xi, ms")->capture_default_str();
  cmd->add_option("--slo", args->slo_ms, "TTFT SLO, ms")
      ->check(finite_in(0, 1e9))
      ->capture_default_str();
  cmd->add_option("--figure-xi", args->figure_xi_ms,
                  "xi of the comparison of T-LRU's variants (the paper's Figure 5), ms")
      ->check(finite_in(0, 1e9))
      ->capture_default_str();
  args->cost.add(cmd);
  cmd->add_option("--tlru-params", args->tlru_params, "extra T-LRU parameters (e.g. qhat=12)");
  cmd->add_option("--threshold-params", args->threshold_params,
                  "threshold_lru parameters (e.g. threshold_tokens=1024)");
  cmd->add_option("--seed", args->seed, "seed")->capture_default_str();
  output_file(cmd->add_option("--json", args->json, "write the whole study as one JSON object"));
  cmd->footer(
      "Terms: TTFT = time to first token in replay mode (the cost model's prefill of the "
      "uncached tokens, no queueing); p90/p95/p99 = percentiles over requests (nearest rank); "
      "viol% = SLO violations, the share of requests over --slo; xi = T-LRU's latency threshold; "
      "TEL(xi) = tail excess latency, the sum over requests "
      "of max(0, TTFT - xi); changes are (T-LRU - baseline) / baseline, negative = T-LRU better. "
      "Capacity: % of unique blocks as written (- if given otherwise), blocks, GB of KV.");
  cmd->callback([args] { run(*args); });
  return cmd;
}

StudyRegistrar registrar(63, "tail", "tail", add);

}  // namespace
}  // namespace kvpolicy::cli
