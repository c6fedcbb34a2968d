// `kvpolicy leaderboard`: the traces and what runs on each, then one replay sweep over every
// (trace, policy, capacity) cell (app/sweep.h), then the ranking (leaderboard_rank.cc).
#include "kvpolicy/app/leaderboard.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/file_identity.h"
#include "kvpolicy/core/resumable.h"
#include "kvpolicy/trace/generators.h"

namespace kvpolicy::app {
namespace {

constexpr const char* kBuiltin = "builtin";

bool valid_label(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == '+';
  });
}

// "data/arena-test.kvtrace" -> "arena-test": the name without directory and extensions.
std::string default_label(const BoardTrace& t) {
  if (t.builtin()) return t.source == kBuiltin ? std::string(kBuiltin) : t.source.substr(8);
  std::string stem = std::filesystem::path(t.source).filename().string();
  size_t dot = stem.find('.');
  return dot == std::string::npos || dot == 0 ? stem : stem.substr(0, dot);
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t from = 0;
  while (true) {
    size_t comma = text.find(',', from);
    out.push_back(text.substr(from, comma == std::string::npos ? comma : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

// Policies as labels, each once.
void add_unique(std::vector<PolicySpec>& specs, const PolicySpec& s) {
  if (std::none_of(specs.begin(), specs.end(),
                   [&](const PolicySpec& x) { return x.label() == s.label(); }))
    specs.push_back(s);
}

// -p and --seeds name deployable policies: the leaderboard ranks those (Belady is its reference).
std::vector<PolicySpec> deployable(const std::string& text, const std::string& flag) {
  std::vector<PolicySpec> out;
  for (const PolicySpec& s : expand_policy_sets(text)) {
    if (s.label() == "belady") continue;  // runs anyway, as the reference
    if (needs_future(s))
      throw ConfigError(fmt::format(
          "{} '{}': {} reads the trace's future; the leaderboard ranks deployable policies only "
          "(belady runs as the offline reference)",
          flag, text, s.label()));
    add_unique(out, s);
  }
  return out;
}

Trace load_board_trace(const BoardTrace& item, const LeaderboardOptions& o) {
  if (item.builtin()) {
    std::string kind = item.source == kBuiltin ? "conversation" : item.source.substr(8);
    return generate_workload(kind, "", o.seed);
  }
  TraceOptions t = o.load;
  t.path = item.source;
  if (!item.format.empty()) t.format = item.format;
  return load_trace(t);
}

}  // namespace

bool BoardTrace::builtin() const {
  return source == kBuiltin || source.rfind(std::string(kBuiltin) + ":", 0) == 0;
}

std::vector<BoardTrace> parse_board_traces(const std::string& text) {
  if (text.find_first_not_of(" ,") == std::string::npos)
    throw ConfigError("--traces: the list is empty; give one or more [label=]path[@format]");
  std::vector<BoardTrace> out;
  std::set<std::string> labels;
  std::set<std::string> kinds;
  for (auto& g : workload_generators()) kinds.insert(g.name);
  for (const std::string& item : split_commas(text)) {
    if (item.empty())
      throw ConfigError("--traces '" + text + "': an empty item (two commas, or one at an end)");
    BoardTrace t;
    std::string rest = item;
    size_t eq = rest.find('=');
    if (eq != std::string::npos) {
      t.label = rest.substr(0, eq);
      rest = rest.substr(eq + 1);
      if (!valid_label(t.label))
        throw ConfigError("--traces item '" + item + "': bad label '" + t.label +
                          "' (letters, digits, '-', '_', '.', '+')");
    }
    size_t at = rest.rfind('@');
    if (at != std::string::npos && rest.find('/', at) == std::string::npos) {
      t.format = rest.substr(at + 1);
      rest = rest.substr(0, at);
      if (t.format.empty()) throw ConfigError("--traces item '" + item + "': empty @format");
    }
    if (rest.empty()) throw ConfigError("--traces item '" + item + "': no path");
    t.source = rest;
    if (t.builtin()) {
      if (!t.format.empty())
        throw ConfigError("--traces item '" + item + "': a built-in workload takes no @format");
      if (t.source != kBuiltin && !kinds.count(t.source.substr(8)))
        throw ConfigError("--traces item '" + item + "': no built-in workload '" +
                          t.source.substr(8) + "' (builtin, or builtin:KIND with KIND one of " +
                          "trace generate's kinds)");
    } else if (!std::filesystem::exists(t.source)) {
      throw ConfigError("--traces item '" + item + "': no such file '" + t.source + "'");
    }
    if (t.label.empty()) {
      t.label = default_label(t);
      if (!valid_label(t.label))
        throw ConfigError("--traces item '" + item + "': its file name '" + t.label +
                          "' is no label; give one as label=path");
    }
    if (!labels.insert(t.label).second)
      throw ConfigError("--traces: the label '" + t.label + "' is given twice (item '" + item +
                        "'); give each trace its own as label=path");
    out.push_back(std::move(t));
  }
  return out;
}

uint32_t board_wins_needed(size_t sizes) { return uint32_t((3 * sizes + 3) / 4); }

Leaderboard run_leaderboard(const LeaderboardOptions& o) {
  // Everything that needs no trace fails first, before any file is read or written.
  std::vector<BoardTrace> items = parse_board_traces(o.traces);
  std::vector<std::pair<std::string, std::string>> outputs = o.outputs;
  if (!o.grid.json_path.empty()) outputs.emplace_back("--json", o.grid.json_path);
  for (const BoardTrace& item : items) {
    if (item.builtin()) continue;
    std::optional<FileIdentity> in = file_identity(item.source);
    for (auto& [flag, path] : outputs)
      if (in && !path.empty() && file_identity(path) == in)
        throw ConfigError(fmt::format(
            "the output '{}' ({}) is the trace '{}' of --traces item '{}'; write to another file",
            path, flag, item.source, item.label));
  }
  std::vector<CapacitySpec> cap_specs = capacity_specs(o.capacities);
  if (cap_specs.empty()) throw ConfigError("--capacity: the list is empty");
  std::vector<PolicySpec> policies = deployable(o.policies, "--policy");
  std::vector<PolicySpec> seeds = deployable(o.seeds, "--seeds");
  o.load.read_options();  // a bad --sessions fails here
  if (!(o.min_margin_pt >= 0 && o.min_margin_pt <= 100))
    throw ConfigError(
        fmt::format("--min-margin {}: a number of points in [0, 100]", o.min_margin_pt));
  CostModel cost = o.cost.make();
  start_json_output(o.grid);

  std::vector<std::string> written;
  for (auto& c : cap_specs) written.push_back(c.text);
  std::vector<std::string> seed_labels;
  for (auto& s : seeds) seed_labels.push_back(s.label());

  // The traces, each named by its label so that its rows (and resume keys) say which it is.
  std::vector<std::unique_ptr<Trace>> traces;
  std::vector<BoardTraceInfo> infos;
  std::vector<TraceFacts> facts;
  std::vector<std::vector<PolicySpec>> specs;
  std::vector<std::vector<CapacitySpec>> caps;
  for (const BoardTrace& item : items) {
    std::unique_ptr<Trace> t;
    try {
      t = std::make_unique<Trace>(load_board_trace(item, o));
    } catch (const Error& e) {
      throw ConfigError(fmt::format("--traces item '{}': {}", item.label, e.what()));
    }
    BoardTraceInfo info;
    info.label = item.label;
    info.source = item.source;
    info.name = t->name;
    t->name = item.label;
    TraceFacts f = trace_facts(*t);
    info.unique_blocks = f.unique_blocks;
    info.requests = f.requests;
    info.block_accesses = f.block_accesses;
    info.has_scores = t->has_continuation();
    // Policies: -p's (sets expanded through the one rule for what a trace feeds), the seeds that
    // it feeds, LRU always, Belady as the reference.
    std::vector<PolicySpec> run;
    std::string note;
    add_unique(run, {"lru", ""});
    try {
      for (auto& s : policies_the_trace_feeds(o.policies, *t, &note))
        if (!needs_future(s)) add_unique(run, s);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("--policy on trace '{}': {}", item.label, e.what()));
    }
    std::string skipped_seeds;
    for (const PolicySpec& s : seeds) {
      std::string why;
      // Named alone, a policy the trace cannot feed is an error: here it is left out instead.
      bool feeds = true;
      try {
        policies_for_trace(s.label(), info.has_scores, &why);
      } catch (const ConfigError&) {
        feeds = false;
      }
      if (feeds)
        add_unique(run, s);
      else if (note.find(s.label()) == std::string::npos)  // -p's set said so already
        skipped_seeds += (skipped_seeds.empty() ? "" : ", ") + s.label();
    }
    if (!skipped_seeds.empty())
      note += (note.empty() ? "" : "; ") + fmt::format(
                                               "seed policies skipped: {} (the trace has "
                                               "no continuation scores)",
                                               skipped_seeds);
    info.skipped = note;
    add_unique(run, {"belady", ""});
    CostModel at = cost.with_block_tokens(std::max<uint32_t>(t->block_tokens, 1));
    std::vector<CapacitySpec> trace_caps;
    for (const CapacitySpec& c : cap_specs) {
      ResolvedCapacity r = resolve_capacity(c, f.unique_blocks, at);
      trace_caps.push_back(r.capacity);
      info.capacity_blocks.push_back(r.blocks);
    }
    traces.push_back(std::move(t));
    infos.push_back(std::move(info));
    facts.push_back(f);
    specs.push_back(std::move(run));
    caps.push_back(std::move(trace_caps));
  }

  // One sweep over every trace's cells.
  GridOptions grid = o.grid;
  grid.cost_model = &cost;
  std::vector<std::unique_ptr<ReplayCells>> cells;
  std::vector<std::pair<size_t, size_t>> where;  // sweep cell -> (trace, its cell)
  for (size_t t = 0; t < traces.size(); ++t) {
    cells.push_back(std::make_unique<ReplayCells>(
        *traces[t], grid_sweep_configs(*traces[t], specs[t], caps[t], o.seed, grid, &facts[t]),
        &facts[t]));
    for (size_t j = 0; j < cells[t]->size(); ++j) where.emplace_back(t, j);
  }
  Sweep<ReplayResult> sweep;
  for (auto [t, j] : where) {
    sweep.cells.keys.push_back(cells[t]->key(j));
    sweep.cells.weights.push_back(cells[t]->weight(j));
  }
  std::map<std::string, size_t> by_name;
  for (size_t t = 0; t < traces.size(); ++t) by_name[cells[t]->trace_name()] = t;
  const std::string json = grid.json_path;
  sweep.cells.key_of = [&, json](const ResultLine& line) {
    ReplayResult r = parse_result_json(line.text, json, line.line_no);
    auto it = by_name.find(r.trace);
    if (it != by_name.end())
      refuse_stale_row(json, line.line_no, r.trace, r.trace_fingerprint,
                       cells[it->second]->trace_name(), cells[it->second]->fingerprint());
    return result_key(r);
  };
  sweep.run = [&](size_t i, const std::function<void(double)>& progress) {
    return cells[where[i].first]->run(where[i].second, progress);
  };
  sweep.row = [](const ReplayResult& r) { return r.to_json(); };
  sweep.parse = parse_result_json;
  sweep.detail = [&](size_t i) {
    const SweepConfig& c = cells[where[i].first]->config(where[i].second);
    return fmt::format("({} on {} at {} blocks)", c.policy.label(), infos[where[i].first].label,
                       c.capacity_blocks);
  };
  SweepSettings settings = grid_sweep_settings(grid);
  settings.what = "leaderboard";
  std::vector<ReplayResult> results = run_sweep(sweep, settings);
  for (auto& r : results)
    if (r.trace.empty()) throw Error("leaderboard: a replay returned no trace name");
  return rank_leaderboard(std::move(infos), std::move(written), std::move(seed_labels),
                          std::move(results), o.min_margin_pt);
}

}  // namespace kvpolicy::app
