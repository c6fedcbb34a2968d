// `kvpolicy recommend`: the policy to run at a capacity and its configuration in vLLM, SGLang and
// LMCache (app::run_recommend; docs/engines.md).
#include "kvpolicy/app/recommend.h"

#include <fmt/format.h>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"

namespace kvpolicy::cli {
namespace {

struct RecommendArgs {
  app::RecommendOptions options;
  std::string json;
  bool matrix = false;
};

void add(CLI::App& app) {
  auto args = std::make_shared<RecommendArgs>();
  app::RecommendOptions& o = args->options;
  auto* cmd = app.add_subcommand(
      "recommend",
      "the policy to run at a capacity (from a trace, or a compare/simulate/mrc --json file) and "
      "its ready-to-paste configuration in vLLM, SGLang and LMCache");
  add_trace_options(cmd, o.trace, false);
  input_file(cmd->add_option("--from", o.results,
                             "a finished run's rows (compare, simulate or mrc --json) instead of "
                             "a trace; --block-tokens gives their block size if they lack it"));
  add_capacity_option(cmd, o.capacity, true, "",
                      "the capacity (required with a trace; with --from, which of its "
                      "capacities when it holds several)");
  cmd->add_option("--among", o.among,
                  "the candidates replayed on a trace (a policy list; sets online, all expand)")
      ->capture_default_str();
  cmd->add_option("--policy,-p", o.policy,
                  "force this policy (an online spec) instead of the best; its margin over LRU "
                  "is still measured");
  add_cost_options(cmd, o.cost);
  cmd->add_option("--seed", o.seed, "seed of randomized policies")->capture_default_str();
  cmd->add_option("--jobs,-j", o.jobs, "replays at once (0 = every core)")->capture_default_str();
  output_file(cmd->add_option("--json", args->json, "write the recommendation as one JSON object"));
  cmd->add_flag("--matrix", args->matrix,
                "print docs/engines.md's capability matrix (every policy x engine) and exit");
  cmd->footer(
      "Chooses the online policy with the best block hit rate at the capacity (LRU on a tie), "
      "says its margin over LRU and whether that is within noise (two standard errors of the "
      "difference, at least 0.1 points), and prints per engine the install line, the "
      "configuration and the launch line; an engine that cannot run it with every request field it "
      "reads gets the best candidate it runs in full, and says why. Offline policies "
      "(Belady, oracle predictors) are refused: no engine can run them. See docs/engines.md; "
      "--json fields in docs/formats.md.");
  cmd->callback([args] {
    if (args->matrix) {
      fmt::print("{}", app::engine_matrix_markdown());
      return;
    }
    app::Recommendation r = app::run_recommend(args->options);
    if (!args->json.empty()) write_file_atomically(args->json, r.to_json() + "\n");
    fmt::print("{}", r.text());
  });
}

CommandRegistrar registrar(48, add);

}  // namespace
}  // namespace kvpolicy::cli
