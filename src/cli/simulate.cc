// `kvpolicy simulate`: replay a trace through policies at several capacities.
#include <fmt/format.h>

#include <algorithm>

#include "command.h"
#include "common.h"
#include "distributed.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/sim/sim.h"
#include "report.h"

namespace kvpolicy::cli {
namespace {

struct SimulateArgs {
  TraceArgs trace;
  std::string policies = "lru,belady";
  CapacityArgs capacities;
  CostArgs cost;
  uint64_t seed = 1;
  GridOptions grid;
  double dram_ratio = 0;
  std::string dram_policy = "lru";
  double xi_ms = 200;
  double slo_ms = 200;
  std::string shard;
};

// The trace and the capacities resolved against it.
struct Loaded {
  Trace trace;
  std::vector<Capacity> caps;
};

void add(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  auto* cmd = app.add_subcommand("simulate", "replay a trace through policies at capacities");
  args->trace.add(cmd, true);
  add_policy_option(cmd, args->policies, "policies");
  args->capacities.add(cmd, "0.02,0.05,0.1,0.2", "HBM capacities");
  cmd->add_option("--seed", args->seed, "seed of randomized policies")->capture_default_str();
  cmd->add_option("--dram", args->dram_ratio,
                  "DRAM tier capacity as a multiple of each HBM capacity (0 = one tier)")
      ->check(finite_in(0, 1000))
      ->capture_default_str();
  cmd->add_option("--dram-policy", args->dram_policy, "policy of the DRAM tier")
      ->capture_default_str();
  args->cost.add(cmd);
  cmd->add_option("--xi", args->xi_ms, "threshold of the tail excess latency TEL, ms")
      ->check(finite_in(0, 1e9))
      ->capture_default_str();
  cmd->add_option("--slo", args->slo_ms, "TTFT SLO for the violation rate, ms")
      ->check(finite_in(0, 1e9))
      ->capture_default_str();
  add_sweep_options(cmd, args->grid);
  add_shard_option(cmd, args->shard);
  cmd->footer(
      "Terms: hit % = share of prompt blocks found cached; token % = share of prompt tokens; "
      "capacity = as a share of the trace's unique blocks, then blocks and GB of KV (through "
      "--model and --kv-dtype). TTFT is replay mode's: the cost model's prefill time of the "
      "uncached tokens, no queueing; slo % = requests over --slo. TEL (in --json) = sum of "
      "max(0, TTFT - xi).");
  cmd->callback([args] {
    auto cost = std::make_shared<CostModel>(args->cost.make());
    auto specs = expand_policy_sets(args->policies);
    args->capacities.specs();  // fail before loading
    GridOptions& grid = args->grid;
    grid.dram_ratio = args->dram_ratio;
    grid.dram_policy = parse_policy_spec(args->dram_policy);
    grid.cost_model = cost.get();
    grid.xi_ms = args->xi_ms;
    grid.slo_ms = args->slo_ms;
    for (auto& s : specs) PolicyRegistry::instance().get(s.name);  // fail before loading
    PolicyRegistry::instance().get(grid.dram_policy.name);
    if (grid.resume && grid.json_path.empty()) throw ConfigError("--resume needs --json FILE");
    SweepPlacement where = sweep_placement(args->shard, grid.jobs);
    auto load = [&] {
      auto loaded = std::make_shared<Loaded>();
      loaded->trace = args->trace.load();
      for (auto& c : args->capacities.resolve(
               count_unique_blocks(loaded->trace),
               cost->with_block_tokens(std::max<uint32_t>(loaded->trace.block_tokens, 1))))
        loaded->caps.push_back(c.capacity);
      return loaded;
    };
    if (where.worker()) {  // loads the trace on its first cell, prints nothing
      work_on_rank(*where.comm, [&] {
        auto loaded = load();
        auto cells = std::make_shared<ReplayCells>(
            loaded->trace,
            grid_sweep_configs(loaded->trace, specs, loaded->caps, args->seed, grid));
        return [loaded, cells](size_t i) { return cells->run(i).to_json(); };
      });
      return;
    }
    start_json_output(grid);
    auto loaded = load();
    const Trace& trace = loaded->trace;
    auto results = run_grid(trace, specs, loaded->caps, args->seed, grid, where);
    print_table(trace, results);
    if (!grid.csv_path.empty()) write_csv(grid.csv_path, results);
  });
}

CommandRegistrar registrar(20, add);

}  // namespace
}  // namespace kvpolicy::cli
