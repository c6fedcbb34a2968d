// `kvpolicy trace characterize`: the workload analysis of "KVCache Cache in the Wild" section 3
// (ideal hit rate, skew, single- vs multi-turn hits, reuse times per category with exponential
// fits, lifespans, the capacity an ideal policy needs), as text, JSON and CSV.
#include <fmt/format.h>

#include "command.h"
#include "common.h"
#include "kvpolicy/characterize.h"
#include "kvpolicy/cost_model.h"

namespace kvpolicy::cli {
namespace {

struct CharacterizeArgs {
  TraceArgs trace;
  bool infer = false;
  std::string json, csv_dir;
  std::string model = CostModel::kDefaultModel;
  double kv_bytes_per_token = 0;  // 0 = the model's
  uint32_t turn_buckets = 5;
};

void run(const CharacterizeArgs& a) {
  CharacterizeOptions opts;
  opts.turn_buckets = a.turn_buckets;
  opts.kv_bytes_per_token =
      a.kv_bytes_per_token > 0 ? a.kv_bytes_per_token : find_model(a.model).kv_bytes_per_token();
  TraceArgs load = a.trace;
  if (a.infer) load.sessions = "infer";
  Trace trace = load.load();
  Characterization c = characterize(trace, opts);
  fmt::print("{}", summary(c));
  if (!a.json.empty()) open_output(a.json) << to_json(c) << '\n';
  if (!a.csv_dir.empty()) write_csv(c, a.csv_dir);
}

void add(CLI::App& app) {
  // `trace` belongs to trace_cmd.cc (order 40); this adds one subcommand to it.
  CLI::App* trace = nullptr;
  try {
    trace = app.get_subcommand("trace");
  } catch (const CLI::OptionNotFound&) {
    trace = app.add_subcommand("trace", "trace tools");
  }
  auto args = std::make_shared<CharacterizeArgs>();
  auto* cmd = trace->add_subcommand(
      "characterize", "reuse, skew, reuse times per category, lifespans, ideal capacity");
  args->trace.add(cmd, true);
  cmd->add_flag("--infer-sessions", args->infer,
                "same as --sessions infer (by default sessions are inferred when absent)");
  cmd->add_option("--turn-buckets", args->turn_buckets,
                  "category = request type x turn bucket 1, 2, ..., n+")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--model", args->model, "model whose KV bytes per token size capacities in GB")
      ->capture_default_str();
  cmd->add_option("--kv-bytes-per-token", args->kv_bytes_per_token,
                  "KV bytes per token (overrides --model)");
  cmd->add_option("--json", args->json, "write every number and curve as one JSON object");
  cmd->add_option("--csv-dir", args->csv_dir, "write CSV files for plotting into this folder");
  cmd->callback([args] { run(*args); });
}

// After `trace` (order 40) exists.
CommandRegistrar registrar(42, add);

}  // namespace
}  // namespace kvpolicy::cli
