#include "kvpolicy/app/inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/hints.h"

namespace kvpolicy::app {

ReadOptions TraceOptions::read_options() const {
  if (sessions != "auto" && sessions != "infer" && sessions != "keep")
    throw ConfigError("sessions must be auto, infer or keep, got '" + sessions + "'");
  ReadOptions opts;
  opts.skip_bad_lines = skip_bad_lines;
  opts.block_tokens = block_tokens;
  opts.max_requests = max_requests;
  return opts;
}

Trace load_trace(const TraceOptions& o, size_t* continued_requests) {
  ReadOptions opts = o.read_options();
  ReadReport report;
  Trace t = read_trace(o.path, o.format, opts, &report);
  if (report.skipped_lines)
    fmt::print(stderr, "kvpolicy: skipped {} bad line(s) of {}; first: {}\n", report.skipped_lines,
               report.lines, report.first_skipped);
  if (report.sorted)
    fmt::print(stderr, "kvpolicy: {}: timestamps were out of order; sorted\n", o.path);
  bool has_sessions =
      std::any_of(t.session.begin(), t.session.end(), [](SessionId s) { return s != kNoSession; });
  size_t continued = 0;
  if (o.sessions == "infer" || (o.sessions == "auto" && !has_sessions)) {
    continued = infer_sessions(t, o.session_min_blocks);
    fmt::print(stderr,
               "kvpolicy: sessions inferred from shared prefixes: {} of {} requests continue an "
               "earlier one\n",
               continued, t.size());
  }
  if (continued_requests) *continued_requests = continued;
  if (!o.hints.empty()) {
    std::vector<HintRule> rules = parse_hint_rules(o.hints);
    apply_hint_rules(t, rules, o.hint_seed);
  }
  return t;
}

CostModel CostOptions::make(const std::string& extra) const {
  std::string params = cost_params;
  // Only when asked, so a run with the defaults keeps the cost model label it always had.
  auto append = [&](const std::string& item) { params += (params.empty() ? "" : ",") + item; };
  if (kv_dtype != "auto") append("kv_dtype=" + kv_dtype);
  if (!extra.empty()) append(extra);
  return CostModel::make(model, gpu, params);
}

std::string with_commas(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string gb_text(double gb) {
  if (gb >= 100) return fmt::format("{:.0f}", gb);
  if (gb >= 10) return fmt::format("{:.1f}", gb);
  if (gb >= 1) return fmt::format("{:.2f}", gb);
  if (!(gb > 0)) return "0";
  // Three significant digits in fixed notation ({:.3g} writes 1e-05).
  int decimals = std::min(15, 2 - int(std::floor(std::log10(gb))));
  return fmt::format("{:.{}f}", gb, decimals);
}

std::string percent_text(double share) {
  return share < 1 ? fmt::format("{:.3g}", share * 100) : with_commas(uint64_t(share * 100 + 0.5));
}

std::string ResolvedCapacity::label() const {
  if (capacity.is_fraction())
    return fmt::format("{} ({} blocks, {} GB)", capacity.label(), with_commas(blocks), gb_text(gb));
  return fmt::format("{} ({} blocks, {} GB, {}% of unique)", text, with_commas(blocks), gb_text(gb),
                     percent_text(unique_share));
}

std::string ResolvedCapacity::written() const {
  return capacity.is_fraction() ? capacity.label() : text;
}

ResolvedCapacity resolve_capacity(const CapacitySpec& spec, size_t unique_blocks,
                                  const CostModel& cost) {
  ResolvedCapacity r;
  r.text = spec.text;
  r.capacity = replay_capacity(spec, unique_blocks, cost.block_tokens(), cost.kv_bytes_per_block());
  r.blocks = r.capacity.blocks(unique_blocks);
  r.gb = double(r.blocks) * cost.kv_bytes_per_block() / 1e9;
  r.unique_share = unique_blocks ? double(r.blocks) / double(unique_blocks) : 0;
  return r;
}

std::vector<CapacitySpec> capacity_specs(const std::string& text, bool single) {
  auto out = parse_capacity_list(text);
  if (single && out.size() != 1) throw ConfigError("--capacity takes one capacity here");
  return out;
}

std::vector<ResolvedCapacity> resolve_capacities(const std::string& text, size_t unique_blocks,
                                                 const CostModel& cost, bool single) {
  std::vector<ResolvedCapacity> out;
  for (const CapacitySpec& spec : capacity_specs(text, single))
    out.push_back(resolve_capacity(spec, unique_blocks, cost));
  return out;
}

std::vector<PolicySpec> policies_the_trace_feeds(const std::string& text, const Trace& trace,
                                                 std::string* skipped) {
  std::string note;
  std::vector<PolicySpec> out = policies_for_trace(text, trace.has_continuation(), &note);
  if (skipped)
    *skipped = note;
  else if (!note.empty())
    fmt::print(stderr, "kvpolicy: {}\n", note);
  return out;
}

std::string expand_policy_sets_text(const std::string& text) {
  std::string out;
  for (auto& s : expand_policy_sets(text)) out += (out.empty() ? "" : ",") + s.label();
  return out;
}

std::vector<bool> first_of_each(const std::vector<std::string>& keys,
                                const std::vector<std::string>& labels) {
  std::vector<bool> keep(keys.size(), true);
  std::set<std::string> seen;
  std::string repeated;
  for (size_t i = 0; i < keys.size(); ++i) {
    keep[i] = seen.insert(keys[i]).second;
    if (!keep[i]) repeated += (repeated.empty() ? "" : ", ") + labels[i];
  }
  if (!repeated.empty())
    fmt::print(stderr, "kvpolicy: given more than once, run once: {}\n", repeated);
  return keep;
}

}  // namespace kvpolicy::app
