#include "report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/sim/result_schema.h"
#include "kvpolicy/sim/sweep.h"

namespace kvpolicy::cli {

void add_sweep_options(CLI::App* cmd, GridOptions& grid) {
  cmd->add_option("--jobs,-j", grid.jobs, "replays at once (0 = every core)")
      ->capture_default_str();
  output_file(
      cmd->add_option("--json", grid.json_path, "write one JSON object per result to this file"));
  output_file(cmd->add_option("--csv", grid.csv_path,
                              "write one CSV row per result to this file (at the end)"));
  cmd->add_flag("--resume", grid.resume,
                "keep the results already in --json and run only the missing configurations");
}

void print_table(const Trace& trace, const std::vector<ReplayResult>& results,
                 const TraceFacts* known_facts) {
  TraceFacts facts = known_facts ? *known_facts : trace_facts(trace);
  print_table(trace.name, trace.block_tokens, facts, results, trace.assumptions);
}

void print_table(const std::string& trace_name, uint32_t block_tokens, const TraceFacts& facts,
                 const std::vector<ReplayResult>& results, const Trace::Assumptions& assumptions) {
  print_assumptions(assumptions);
  // A streamed replay with capacities in blocks does not count the unique blocks.
  std::string unique =
      facts.unique_blocks ? std::to_string(facts.unique_blocks) : std::string("(uncounted)");
  fmt::print("trace {}: {} requests, {} block accesses, {} unique blocks of {} tokens\n",
             trace_name, facts.requests, facts.block_accesses, unique, block_tokens);
  if (facts.unique_blocks)
    fmt::print("infinite cache: block hit rate {:.2f}%\n", facts.infinite_hit_rate * 100);
  if (!results.empty())
    fmt::print("TTFT: replay mode (prefill of uncached tokens, no queueing) on {}; SLO {:g} ms\n",
               results[0].cost_model, results[0].slo_ms);
  fmt::print("\n");
  bool tiers = false;
  for (auto& r : results) tiers |= r.dram_capacity_blocks > 0;
  fmt::print("{:<28} {:>9} {:>10} {:>8} {:>9} {:>9} {:>11} {:>9}", "policy", "% unique", "blocks",
             "GB of KV", "hit %", "token %", "evictions", "ns/acc");
  if (tiers) fmt::print(" {:>10} {:>8} {:>8}", "dram blks", "hbm %", "dram %");
  fmt::print(" {:>9} {:>9} {:>9} {:>7}", "p50 ms", "p90 ms", "p99 ms", "slo %");
  fmt::print("\n");
  for (auto& r : results) {
    // The share as written, or the one a block count or memory size amounts to.
    double share = r.capacity_fraction >= 0
                       ? r.capacity_fraction
                       : double(r.capacity_blocks) / std::max<size_t>(facts.unique_blocks, 1);
    std::string cap = r.capacity_fraction >= 0 ? fmt::format("{:g}%", share * 100)
                      : facts.unique_blocks    ? fmt::format("({}%)", percent_text(share))
                                               : std::string("-");
    std::string name = r.params.empty() ? r.policy : r.policy + ":" + r.params;
    fmt::print("{:<28} {:>9} {:>10} {:>8} {:>9.2f} {:>9.2f} {:>11} {:>9.1f}", name, cap,
               r.capacity_blocks, gb_text(r.capacity_gb), r.block_hit_rate * 100,
               r.token_hit_rate * 100, r.evictions, r.ns_per_access);
    if (tiers)
      fmt::print(" {:>10} {:>8.2f} {:>8.2f}", r.dram_capacity_blocks, r.hbm_hit_rate * 100,
                 r.dram_hit_rate * 100);
    fmt::print(" {:>9.1f} {:>9.1f} {:>9.1f} {:>7.2f}", r.ttft_p50_ms, r.ttft_p90_ms, r.ttft_p99_ms,
               r.slo_violation_rate * 100);
    fmt::print("\n");
  }
  std::fflush(stdout);
  warn_unfitted_models(results);
}

void warn_unfitted_models(const std::vector<ReplayResult>& results) {
  for (auto& r : results)
    if (r.model_fitted() == false)
      fmt::print(stderr,
                 "kvpolicy: warning: {} at {} blocks: its model was never fitted (the trace is "
                 "shorter than what the fit waits for), so the row is the policy without it "
                 "(model_fitted: false)\n",
                 r.params.empty() ? r.policy : r.policy + ":" + r.params, r.capacity_blocks);
}

void write_json(const std::string& path, const std::vector<ReplayResult>& results) {
  std::string out;
  for (auto& r : results) out += r.to_json() + '\n';
  write_file_atomically(path, out);
}

namespace {
// RFC 4180: a field holding a comma, quote or newline is quoted, quotes doubled.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
}  // namespace

void write_csv(const std::string& path, const std::vector<ReplayResult>& results) {
  std::vector<const ResultField*> columns;
  std::string out;
  for (const std::string& name : replay_csv_columns()) {
    columns.push_back(&replay_result_field(name));
    out += (out.empty() ? "" : ",") + name;
  }
  out += '\n';
  for (auto& r : results) {
    for (size_t i = 0; i < columns.size(); ++i) {
      std::string cell = columns[i]->csv(r);
      out += (i ? "," : "") + (columns[i]->type == "string" ? csv_field(cell) : cell);
    }
    out += '\n';
  }
  write_file_atomically(path, out);
}

}  // namespace kvpolicy::cli
