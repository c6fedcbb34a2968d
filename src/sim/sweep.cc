#include "kvpolicy/sim/sweep.h"

#include <fmt/format.h>

#include <cmath>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/resumable.h"
#include "kvpolicy/sim/result_schema.h"
#include "kvpolicy/trace/fingerprint.h"
#include "kvpolicy/trace/json_record.h"

namespace kvpolicy {

std::vector<SweepConfig> grid_configs(const std::vector<PolicySpec>& policies,
                                      const std::vector<CapacitySpec>& capacities,
                                      size_t unique_blocks, const ReplayOptions& base,
                                      double dram_ratio) {
  std::vector<SweepConfig> configs;
  for (auto& cap : capacities) {
    size_t blocks = cap.blocks(unique_blocks);
    for (auto& spec : policies) {
      SweepConfig c;
      c.policy = spec;
      c.capacity_blocks = blocks;
      c.capacity_fraction = cap.fraction();
      c.options = base;
      c.options.dram_capacity_blocks = static_cast<size_t>(std::llround(dram_ratio * blocks));
      configs.push_back(std::move(c));
    }
  }
  return configs;
}

std::string result_key(const ReplayResult& r) {
  // (the minimum priority for offload only when set: older keys stay as they were)
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{:g}|{:g}{}", trace_identity(r.trace),
                     r.trace_fingerprint, r.policy, r.params, r.capacity_blocks,
                     r.dram_capacity_blocks, r.dram_policy, r.seed, r.cost_model, r.xi_ms, r.slo_ms,
                     r.offload_min_priority >= 0
                         ? fmt::format("|offload>={}", r.offload_min_priority)
                         : std::string());
}

ReplayResult parse_result_json(const std::string& line, const std::string& path, uint64_t line_no) {
  JsonRecord j(line, path, line_no);
  ReplayResult r;
  for (const ResultField& f : replay_result_fields())
    if (f.read) f.read(j, r);
  return r;
}

namespace {
bool reads_future(const SweepConfig& c) {
  return needs_future(c.policy) ||
         (c.options.dram_capacity_blocks > 0 && needs_future(c.options.dram_policy));
}
}  // namespace

ReplayCells::ReplayCells(std::string trace_name, std::string fingerprint, uint32_t block_tokens,
                         double infinite_hit_rate, uint64_t block_accesses,
                         std::vector<SweepConfig> configs, ReplayFn replay_one)
    : trace_name_(std::move(trace_name)),
      fingerprint_(std::move(fingerprint)),
      block_tokens_(block_tokens),
      infinite_hit_rate_(infinite_hit_rate),
      block_accesses_(block_accesses),
      configs_(std::move(configs)),
      replay_one_(std::move(replay_one)) {}

ReplayCells::ReplayCells(const Trace& trace, std::vector<SweepConfig> configs,
                         const TraceFacts* facts)
    : ReplayCells(trace.name, trace_fingerprint(trace), trace.block_tokens,
                  (facts ? *facts : trace_facts(trace)).infinite_hit_rate,
                  trace.num_block_accesses(), std::move(configs), {}) {
  replay_one_ = [this, &trace](const SweepConfig& c, const ReplayOptions& opts) {
    bool future = reads_future(c);
    if (future) std::call_once(oracle_once_, [&] { oracle_ = compute_oracle(trace); });
    return replay(trace, future ? &oracle_ : nullptr, c.policy, c.capacity_blocks, opts);
  };
}

std::string ReplayCells::key(size_t i) const {
  // What the replay would echo back.
  const SweepConfig& c = configs_[i];
  ReplayResult r;
  r.trace = trace_name_;
  r.trace_fingerprint = fingerprint_;
  r.policy = c.policy.name;
  r.params = c.policy.params;
  r.capacity_blocks = c.capacity_blocks;
  r.dram_capacity_blocks = c.options.dram_capacity_blocks;
  r.dram_policy = c.options.dram_capacity_blocks ? c.options.dram_policy.label() : "";
  if (c.options.dram_capacity_blocks) r.offload_min_priority = c.options.offload_min_priority;
  r.seed = c.options.seed;
  r.cost_model = replay_cost_model(block_tokens_, c.options).label();
  r.xi_ms = c.options.xi_ms;
  r.slo_ms = c.options.slo_ms;
  return result_key(r);
}

double ReplayCells::weight(size_t i) const {
  return double(block_accesses_) * (reads_future(configs_[i]) ? 2 : 1);
}

ReplayResult ReplayCells::run(size_t i, const std::function<void(double)>& progress) const {
  const SweepConfig& c = configs_[i];
  ReplayOptions opts = c.options;
  opts.progress = progress;
  ReplayResult r = replay_one_(c, opts);
  r.capacity_fraction = c.capacity_fraction;
  r.infinite_hit_rate = infinite_hit_rate_;
  return r;
}

std::vector<ReplayResult> run_cells(const ReplayCells& cells, unsigned jobs) {
  std::vector<ReplayResult> results(cells.size());
  parallel_for(cells.size(), jobs, [&](size_t i) { results[i] = cells.run(i); });
  return results;
}

std::vector<ReplayResult> run_sweep(const Trace& trace, const std::vector<SweepConfig>& configs,
                                    unsigned jobs, const TraceFacts* facts) {
  return run_cells(ReplayCells(trace, configs, facts), jobs);
}

}  // namespace kvpolicy
