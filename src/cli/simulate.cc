// `kvpolicy simulate`: replay a trace through policies at several capacities.
#include <fmt/format.h>

#include "command.h"
#include "common.h"
#include "kvpolicy/sim.h"
#include "report.h"

namespace kvpolicy::cli {
namespace {

struct SimulateArgs {
  TraceArgs trace;
  std::string policies = "lru,belady";
  std::string capacities = "0.02,0.05,0.1,0.2";
  uint64_t seed = 1;
  std::string json;
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
  cmd->add_option("--json", args->json, "write one JSON object per result to this file");
  cmd->callback([args] {
    auto specs = parse_policy_list(args->policies);
    auto caps = parse_capacities(args->capacities);
    for (auto& s : specs) PolicyRegistry::instance().get(s.name);  // fail before loading
    Trace trace = args->trace.load();
    auto results = run_grid(trace, specs, caps, args->seed);
    print_table(trace, results);
    if (!args->json.empty()) write_json(args->json, results);
  });
}

CommandRegistrar registrar(20, add);

}  // namespace
}  // namespace kvpolicy::cli
