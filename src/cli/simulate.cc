// `kvpolicy simulate`: replay a trace through policies at several capacities.
#include <fmt/format.h>

#include <algorithm>

#include "command.h"
#include "common.h"
#include "distributed.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/sim/stream_replay.h"
#include "kvpolicy/trace/hints.h"
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
  int32_t offload_min_priority = -1;
  double xi_ms = 200;
  double slo_ms = 200;
  std::string shard;
  bool stream = false, no_stream = false;  // neither: an oracleGeneral file streams
};

// The trace and the capacities resolved against it; its facts counted once, for the
// capacities, the sweep and the table.
struct Loaded {
  Trace trace;
  TraceFacts facts;
  std::vector<CapacitySpec> caps;
  std::vector<PolicySpec> specs;  // those the trace can feed
};

// --stream: every configuration reads the trace as a stream; offline policies get the external
// oracle (one forward and one reverse pass, through temporary files), capacities given as a share
// of unique blocks a counting pass (a map of the unique keys). Sessions are kept as read.
void simulate_streamed(const SimulateArgs& args, const CostModel& cost, const GridOptions& grid) {
  if (args.trace.sessions == "infer")
    throw ConfigError("--stream keeps sessions as read: --sessions infer needs the whole trace");
  if (!args.trace.hints.empty())
    throw ConfigError("--hint needs the whole trace: replay without --stream");
  ReadOptions ropts = args.trace.read_options();
  StreamOpener open = [&] { return open_trace_stream(args.trace.path, args.trace.format, ropts); };
  ReplayOptions base = grid_replay_options(args.seed, grid);
  // Name, block size and whether it carries continuation scores: from the first chunk.
  Trace first;
  open()->next(first, 1);
  auto specs = policies_the_trace_feeds(args.policies, first);
  bool need_oracle = false, need_unique = false;
  for (auto& s : specs) need_oracle |= needs_future(s);
  need_oracle |= grid.dram_ratio > 0 && needs_future(grid.dram_policy);
  for (auto& c : args.capacities.specs()) need_unique |= c.is_fraction();

  std::unique_ptr<ExternalOracle> oracle;
  StreamFacts facts;
  if (need_oracle) {
    auto stream = open();
    oracle = std::make_unique<ExternalOracle>(*stream);
    facts = oracle->facts();
  } else if (need_unique) {
    facts = stream_facts(*open());
  } else {  // blocks, tokens or GB: no counting pass
    facts.name = first.name;
    facts.block_tokens = first.block_tokens;
  }
  // Resuming compares rows with the trace's content: one more pass when none counted it.
  if (grid.resume && facts.fingerprint.empty()) facts.fingerprint = stream_fingerprint(*open());
  std::vector<CapacitySpec> caps;
  for (auto& c : args.capacities.resolve(
           facts.unique_blocks, cost.with_block_tokens(std::max<uint32_t>(facts.block_tokens, 1))))
    caps.push_back(c.capacity);
  auto configs = distinct_grid_configs(specs, caps, facts.unique_blocks, base, grid.dram_ratio);
  auto cells = stream_cells(open, facts, oracle.get(), configs);
  auto results = run_sweep(replay_sweep(*cells, grid.json_path), grid_sweep_settings(grid));
  // Requests and accesses as the replays counted them (no pass counted them when not needed).
  TraceFacts shown;
  shown.requests = results.empty() ? facts.requests : results[0].requests;
  shown.block_accesses = results.empty() ? facts.block_accesses : results[0].block_accesses;
  shown.unique_blocks = facts.unique_blocks;
  shown.prompt_tokens = facts.prompt_tokens;
  shown.infinite_hit_rate = results.empty() ? 0 : results[0].infinite_hit_rate;
  print_table(facts.name, facts.block_tokens, shown, results, first.assumptions);
  if (!grid.csv_path.empty()) write_csv(grid.csv_path, results);
}

void add(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  auto* cmd = app.add_subcommand("simulate", "replay a trace through policies at capacities");
  args->trace.add(cmd, true);
  add_hint_options(cmd, args->trace);
  add_policy_option(cmd, args->policies, "policies");
  args->capacities.add(cmd, "0.02,0.05,0.1,0.2", "HBM capacities");
  cmd->add_option("--seed", args->seed, "seed of randomized policies")->capture_default_str();
  cmd->add_option("--dram", args->dram_ratio,
                  "DRAM tier capacity as a multiple of each HBM capacity (0 = one tier)")
      ->check(finite_in(0, 1000))
      ->capture_default_str();
  cmd->add_option("--dram-policy", args->dram_policy, "policy of the DRAM tier")
      ->capture_default_str();
  cmd->add_option("--offload-min-priority", args->offload_min_priority,
                  "with --dram: minimum retention priority (0-100) an HBM victim needs to be "
                  "demoted; below it the block is dropped (TensorRT-LLM's "
                  "secondary_offload_min_priority, whose default is 30 in its eviction policy). "
                  "Unset: off, every victim may be demoted")
      ->check(CLI::Range(0, 100));
  args->cost.add(cmd);
  cmd->add_option("--xi", args->xi_ms, "threshold of the tail excess latency TEL, ms")
      ->check(finite_in(0, 1e9))
      ->capture_default_str();
  cmd->add_option("--slo", args->slo_ms, "TTFT SLO for the violation rate, ms")
      ->check(finite_in(0, 1e9))
      ->capture_default_str();
  add_sweep_options(cmd, args->grid);
  add_shard_option(cmd, args->shard);
  auto* stream = cmd->add_flag(
      "--stream", args->stream,
      "read the trace as a stream, never whole: memory is the cache plus a buffer (native, "
      "oracle-general, mooncake; sessions kept as read; see docs/formats.md). An oracleGeneral "
      "file streams unless --no-stream");
  cmd->add_flag("--no-stream", args->no_stream, "read the whole trace into memory")
      ->excludes(stream);
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
    grid.offload_min_priority = args->offload_min_priority;
    grid.cost_model = cost.get();
    grid.xi_ms = args->xi_ms;
    grid.slo_ms = args->slo_ms;
    for (auto& s : specs) PolicyRegistry::instance().get(s.name);  // fail before loading
    parse_hint_rules(args->trace.hints);
    PolicyRegistry::instance().get(grid.dram_policy.name);
    if (grid.resume && grid.json_path.empty()) throw ConfigError("--resume needs --json FILE");
    SweepPlacement where = sweep_placement(args->shard, grid.jobs);
    auto load = [&] {
      auto loaded = std::make_shared<Loaded>();
      loaded->trace = args->trace.load();
      std::string quiet;  // a worker rank prints nothing
      app::ReplayPlan plan =
          app::plan_replay_grid(loaded->trace, args->policies, args->capacities.text, *cost,
                                where.worker() ? &quiet : nullptr);
      loaded->facts = std::move(plan.facts);
      loaded->specs = std::move(plan.specs);
      loaded->caps = std::move(plan.caps);
      return loaded;
    };
    if (where.worker()) {  // loads the trace on its first cell, prints nothing
      app::work_on_rank(where, [&] {
        auto loaded = load();
        auto cells = std::make_shared<ReplayCells>(
            loaded->trace,
            grid_sweep_configs(loaded->trace, loaded->specs, loaded->caps, args->seed, grid,
                               &loaded->facts),
            &loaded->facts);
        return [loaded, cells](size_t i) { return cells->run(i).to_json(); };
      });
      return;
    }
    start_json_output(grid);
    // An oracleGeneral file (a block per request, no sessions) replays the same streamed as
    // whole, in a tenth of the memory: it streams unless told not to.
    bool stream =
        args->stream || (!args->no_stream && !where.sharded && !where.comm &&
                         args->trace.sessions != "infer" && args->trace.hints.empty() &&
                         (args->trace.format == "auto" ? detect_format(args->trace.path)
                                                       : args->trace.format) == "oracle-general");
    if (stream) {
      if (where.sharded || where.comm)
        throw ConfigError("--stream runs on one process: no --shard or mpirun yet");
      return simulate_streamed(*args, *cost, grid);
    }
    auto loaded = load();
    const Trace& trace = loaded->trace;
    auto results =
        run_grid(trace, loaded->specs, loaded->caps, args->seed, grid, where, &loaded->facts);
    print_table(trace, results, &loaded->facts);
    if (!grid.csv_path.empty()) write_csv(grid.csv_path, results);
  });
}

CommandRegistrar registrar(20, add);

}  // namespace
}  // namespace kvpolicy::cli
