#include "kvpolicy/sim/sweep.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>
#include <fstream>
#include <map>
#include <mutex>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/resumable.h"

namespace kvpolicy {

std::string result_key(const ReplayResult& r) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{:g}|{:g}", r.trace, r.policy, r.params,
                     r.capacity_blocks, r.dram_capacity_blocks, r.dram_policy, r.seed, r.cost_model,
                     r.xi_ms, r.slo_ms);
}

ReplayResult parse_result_json(const std::string& line, const std::string& path, uint64_t line_no) {
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  auto fail = [&](const std::string& field, const std::string& what) {
    throw InputError(path, line_no, field, what);
  };
  if (parser.parse(line).get(obj)) fail("", "not a JSON object");
  ReplayResult r;
  auto str = [&](const char* key, std::string& out) {
    std::string_view v;
    if (obj[key].get(v)) fail(key, "missing or not a string");
    out = v;
  };
  auto num = [&](const char* key, auto& out) {
    double v;
    if (obj[key].get(v)) fail(key, "missing or not a number");
    out = static_cast<std::remove_reference_t<decltype(out)>>(v);
  };
  str("trace", r.trace);
  str("policy", r.policy);
  str("params", r.params);
  str("dram_policy", r.dram_policy);
  str("cost_model", r.cost_model);
  num("capacity_blocks", r.capacity_blocks);
  double fraction;
  r.capacity_fraction = obj["capacity_fraction"].get(fraction) ? -1 : fraction;
  num("seed", r.seed);
  num("requests", r.requests);
  num("block_accesses", r.block_accesses);
  num("block_hits", r.block_hits);
  num("block_hit_rate", r.block_hit_rate);
  num("prompt_tokens", r.prompt_tokens);
  num("token_hits", r.token_hits);
  num("token_hit_rate", r.token_hit_rate);
  num("infinite_hit_rate", r.infinite_hit_rate);
  num("evictions", r.evictions);
  num("uncached_blocks", r.uncached_blocks);
  num("replay_seconds", r.replay_seconds);
  double cpu;
  r.replay_cpu_seconds = obj["replay_cpu_seconds"].get(cpu) ? 0 : cpu;
  num("ns_per_access", r.ns_per_access);
  num("bytes_per_block", r.bytes_per_block);
  num("dram_capacity_blocks", r.dram_capacity_blocks);
  num("dram_hits", r.dram_hits);
  num("demotions", r.demotions);
  num("hbm_hit_rate", r.hbm_hit_rate);
  num("dram_hit_rate", r.dram_hit_rate);
  num("ttft_p50_ms", r.ttft_p50_ms);
  num("ttft_p90_ms", r.ttft_p90_ms);
  num("ttft_p95_ms", r.ttft_p95_ms);
  num("ttft_p99_ms", r.ttft_p99_ms);
  num("ttft_mean_ms", r.ttft_mean_ms);
  num("tel_ms", r.tel_ms);
  num("xi_ms", r.xi_ms);
  num("slo_ms", r.slo_ms);
  num("slo_violation_rate", r.slo_violation_rate);
  simdjson::dom::object stats;
  if (!obj["policy_stats"].get(stats)) {
    for (auto [key, value] : stats) {
      double v;
      r.policy_stats.push_back({std::string(key), value.get(v) ? std::nan("") : v});
    }
  }
  return r;
}

namespace {

// Results already in the file, by key.
std::map<std::string, ReplayResult> read_finished(const std::string& path) {
  std::map<std::string, ReplayResult> done;
  for (auto& line : read_complete_lines(path)) {
    ReplayResult r = parse_result_json(line.text, path, line.line_no);
    done[result_key(r)] = std::move(r);
  }
  return done;
}

}  // namespace

std::vector<ReplayResult> run_sweep(const Trace& trace, const std::vector<SweepConfig>& configs,
                                    const SweepOptions& options) {
  bool need_oracle = false;
  for (auto& c : configs) {
    need_oracle |= PolicyRegistry::instance().get(c.policy.name).needs_future;
    need_oracle |= c.options.dram_capacity_blocks > 0 &&
                   PolicyRegistry::instance().get(c.options.dram_policy.name).needs_future;
  }
  Oracle oracle;
  if (need_oracle) oracle = compute_oracle(trace);
  TraceFacts facts = trace_facts(trace);

  std::vector<ReplayResult> results(configs.size());
  std::map<std::string, ReplayResult> finished;
  if (options.resume && !options.json_path.empty()) finished = read_finished(options.json_path);
  std::ofstream out;
  if (!options.json_path.empty()) {
    out.open(options.json_path, std::ios::app);
    if (!out) throw ConfigError("cannot write '" + options.json_path + "'");
  }

  // A result's key is known before it runs: fill in what the replay would echo back.
  auto planned = [&](const SweepConfig& c) {
    ReplayResult r;
    r.trace = trace.name;
    r.policy = c.policy.name;
    r.params = c.policy.params;
    r.capacity_blocks = c.capacity_blocks;
    r.dram_capacity_blocks = c.options.dram_capacity_blocks;
    r.dram_policy = c.options.dram_capacity_blocks ? c.options.dram_policy.label() : "";
    r.seed = c.options.seed;
    r.cost_model = replay_cost_model_label(trace, c.options);
    r.xi_ms = c.options.xi_ms;
    r.slo_ms = c.options.slo_ms;
    return result_key(r);
  };
  std::vector<size_t> todo;
  for (size_t i = 0; i < configs.size(); ++i) {
    auto it = finished.find(planned(configs[i]));
    if (it != finished.end()) {
      results[i] = it->second;
    } else {
      todo.push_back(i);
    }
  }

  std::mutex mu;
  size_t completed = configs.size() - todo.size();
  parallel_for(todo.size(), options.jobs, [&](size_t k) {
    const SweepConfig& c = configs[todo[k]];
    ReplayOptions opts = c.options;
    std::string label = c.policy.label() + " at " + std::to_string(c.capacity_blocks);
    opts.progress = [&](double f) {
      std::lock_guard lock(mu);
      if (options.progress) options.progress((completed + f) / configs.size(), label);
    };
    ReplayResult r =
        replay(trace, need_oracle ? &oracle : nullptr, c.policy, c.capacity_blocks, opts);
    r.capacity_fraction = c.capacity_fraction;
    r.infinite_hit_rate = facts.infinite_hit_rate;
    std::lock_guard lock(mu);
    if (out.is_open()) out << r.to_json() << std::endl;  // flushed: nothing lost on a kill
    results[todo[k]] = std::move(r);
    ++completed;
  });
  return results;
}

}  // namespace kvpolicy
