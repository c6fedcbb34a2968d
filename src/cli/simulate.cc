// `kvpolicy simulate`: replay a trace through policies at several capacities.
#include <fmt/format.h>

#include "command.h"
#include "common.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/sim/sim.h"
#include "report.h"

namespace kvpolicy::cli {
namespace {

struct SimulateArgs {
  TraceArgs trace;
  std::string policies = "lru,belady";
  std::string capacities = "0.02,0.05,0.1,0.2";
  uint64_t seed = 1;
  GridOptions grid;
  double dram_ratio = 0;
  std::string dram_policy = "lru";
  std::string model = CostModel::kDefaultModel;
  std::string gpu = CostModel::kDefaultGpu;
  std::string cost_params;
  double xi_ms = 200;
  double slo_ms = 200;
};

void add(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  auto* cmd = app.add_subcommand("simulate", "replay a trace through policies at capacities");
  args->trace.add(cmd, true);
  cmd->add_option("--policy,-p", args->policies,
                  "policies, comma-separated, each name[:key=value,...]")
      ->capture_default_str();
  cmd->add_option("--capacity,-c", args->capacities,
                  "capacities: below 1 a fraction of unique blocks, else blocks")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of randomized policies")->capture_default_str();
  cmd->add_option("--dram", args->dram_ratio,
                  "DRAM tier capacity as a multiple of each HBM capacity (0 = one tier)")
      ->check(finite_in(0, 1000))
      ->capture_default_str();
  cmd->add_option("--dram-policy", args->dram_policy, "policy of the DRAM tier")
      ->capture_default_str();
  cmd->add_option("--model", args->model, "cost model: a model preset or 'linear'")
      ->capture_default_str();
  cmd->add_option("--gpu", args->gpu, "cost model: a GPU preset")->capture_default_str();
  cmd->add_option("--cost-params", args->cost_params,
                  "cost model options, key=value,... (see `kvpolicy cost-model --help`)");
  cmd->add_option("--xi", args->xi_ms, "threshold of the tail excess latency TEL, ms")
      ->check(finite_in(0, 1e9))
      ->capture_default_str();
  cmd->add_option("--slo", args->slo_ms, "TTFT SLO for the violation rate, ms")
      ->check(finite_in(0, 1e9))
      ->capture_default_str();
  add_sweep_options(cmd, args->grid);
  cmd->callback([args] {
    auto cost =
        std::make_shared<CostModel>(CostModel::make(args->model, args->gpu, args->cost_params));
    auto specs = parse_policy_list(args->policies);
    auto caps = parse_capacities(args->capacities);
    GridOptions& grid = args->grid;
    grid.dram_ratio = args->dram_ratio;
    grid.dram_policy = parse_policy_spec(args->dram_policy);
    grid.cost_model = cost.get();
    grid.xi_ms = args->xi_ms;
    grid.slo_ms = args->slo_ms;
    for (auto& s : specs) PolicyRegistry::instance().get(s.name);  // fail before loading
    PolicyRegistry::instance().get(grid.dram_policy.name);
    start_json_output(grid);
    Trace trace = args->trace.load();
    auto results = run_grid(trace, specs, caps, args->seed, grid);
    print_table(trace, results);
  });
}

CommandRegistrar registrar(20, add);

}  // namespace
}  // namespace kvpolicy::cli
