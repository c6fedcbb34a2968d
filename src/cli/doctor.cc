// `kvpolicy doctor`: what limits a trace's (or a log's) prefix-cache hit rate, measured and
// ranked, and what to change (app::run_doctor; docs/doctor.md).
#include "kvpolicy/app/doctor.h"

#include <fmt/format.h>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"

namespace kvpolicy::cli {
namespace {

struct DoctorArgs {
  app::DoctorSpec spec;
  std::string json;
};

void run(DoctorArgs& a) {
  a.spec.share_input_options();  // one --format, --block-tokens, --skip-bad-lines
  app::DoctorReport rep = app::run_doctor(a.spec);
  if (!a.json.empty()) write_file_atomically(a.json, rep.to_json() + "\n");
  fmt::print("{}", rep.text());
}

void add(CLI::App& app) {
  auto args = std::make_shared<DoctorArgs>();
  app::DoctorSpec& s = args->spec;
  auto* cmd = app.add_subcommand(
      "doctor",
      "why is the prefix-cache hit rate low? measures and ranks what limits it in a trace or a "
      "log, and what to change");
  add_trace_options(cmd, s.trace, false);
  input_file(cmd->add_option("--input,-i", s.log.input,
                             "a request log (CSV or JSONL), read as `trace import` reads it; "
                             "map text or tokens to have causes told"));
  cmd->add_option("--map", s.log.map, "with --input: target=column,... as in `trace import`");
  cmd->add_option("--preset", s.log.preset,
                  "with --input: a known log format's mapping, as in `trace import` (openai-chat, "
                  "openai-completion, vllm-log, otel-genai)");
  cmd->add_option("--chat-template", s.log.opts.chat_template,
                  "with --input and messages: chatml, llama3, plain or a format, as in `trace "
                  "import`")
      ->capture_default_str();
  cmd->add_option("--time-unit", s.log.opts.time_unit, "with --input: s, ms, us, ns or iso")
      ->check(CLI::IsMember({"s", "ms", "us", "ns", "iso"}))
      ->capture_default_str();
  input_file(cmd->add_option("--tokenizer", s.log.tokenizer,
                             "with --input and text: auto, cl100k, approx, or a rank file"))
      ->capture_default_str();
  add_capacity_option(cmd, s.capacity, true, "",
                      "cache capacity (default: the KV memory the GPU leaves after the weights, "
                      "or 10% of the unique blocks when that holds them all)");
  cmd->add_option("--policy,-p", s.policy, "the deployed eviction policy")->capture_default_str();
  cmd->add_option("--workers", s.workers, "workers of the routing comparison")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_flag("--no-routing", s.skip_routing, "leave out the routing comparison (serve mode)");
  add_cost_options(cmd, s.cost);
  cmd->add_option("--seed", s.seed, "seed of randomized policies and routers")
      ->capture_default_str();
  cmd->add_option("--jobs,-j", s.jobs, "replays at once (0 = every core)")->capture_default_str();
  output_file(cmd->add_option("--json", args->json, "write the findings as one JSON object"));
  cmd->footer(
      "Sections: 1 the finite cache (ideal, the policy, LRU, Belady as an offline bound); 2 "
      "prefix breaks within sessions and their causes; 3 the same across sessions; 4 block size "
      "against prompt lengths; 5 routers (random, session_affinity, cache_aware) in serve mode; "
      "6 remedies, each measured on a counterfactual. With --input, --format (csv, jsonl or "
      "auto), --block-tokens (default 16) and --skip-bad-lines apply to the log; --sessions and "
      "--max-requests to -t only. See docs/doctor.md.");
  cmd->callback([args] { run(*args); });
}

CommandRegistrar registrar(47, add);

}  // namespace
}  // namespace kvpolicy::cli
