// `kvpolicy trace import`: a user's own request log (CSV or JSONL) into a native trace.
#include <fmt/format.h>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/app/import.h"

namespace kvpolicy::cli {
namespace {

using ImportArgs = app::ImportSpec;

void run(const ImportArgs& a) {
  app::ImportSummary s = app::import_to_native(a);
  std::string session_text = s.sessions == 0
                                 ? "no sessions (simulate infers them from shared prefixes)"
                                 : fmt::format("{} sessions", s.sessions);
  fmt::print(
      "{} ({}): {} requests, {}, {} skipped rows\n"
      "{} block accesses of {} tokens, {} unique blocks; {} prompt tokens, {} output tokens; "
      "{:.3f} s from first to last request\n",
      s.input, s.format, s.requests, session_text, s.skipped_rows, s.block_accesses, s.block_tokens,
      s.unique_blocks, s.prompt_tokens, s.output_tokens, s.duration_s);
  // On stderr: the vocabulary's path is the machine's, not the trace's.
  if (!s.tokenizer.empty()) fmt::print(stderr, "kvpolicy: tokenized text with {}\n", s.tokenizer);
  if (!s.assumptions.empty())
    fmt::print("{}; {} of {} requests continue a session\n", assumption_line(s.assumptions),
               s.continuations, s.requests);
  fmt::print("{}", s.sanity.text());  // import_sanity: docs/doctor.md
  fmt::print("wrote {}\n", s.out);
}

void add(CLI::App& app) {
  CLI::App* trace = trace_command(app);
  auto args = std::make_shared<ImportArgs>();
  auto* cmd = trace->add_subcommand(
      "import", "import your own request log (CSV or JSONL, one request per row) as a trace");
  input_file(cmd->add_option("--input,-i", args->input, "the log: FILE.csv or FILE.jsonl"))
      ->required();
  cmd->add_option("--map", args->map,
                  "target=column,...: time (required); one of tokens, text, hashes (the "
                  "prompt); optional session, prompt_tokens (with hashes; alone with --assume), "
                  "output or output_text, turn, category, user")
      ->required();
  cmd->add_option_function<std::string>(
      "--assume", [args](const std::string& model) { args->opts.assume = model; },
      "MODEL: import a log of lengths only (--map prompt_tokens=COLUMN, no prompt "
      "content) under this stated assumption model, key=value,... ('' = defaults: " +
          AssumedPromptModel{}.canonical() +
          "): shared system prompts of `system` tokens, sessions of geometric length "
          "with mean `turns`; stored in the trace and printed above every table "
          "(docs/formats.md, Length-only logs)");
  output_file(cmd->add_option("--out,-o", args->out, "FILE.kvtrace"))->required();
  cmd->add_option("--format", args->opts.format, "csv, jsonl, or auto (by extension)")
      ->check(CLI::IsMember({"auto", "csv", "jsonl"}))
      ->capture_default_str();
  cmd->add_option("--time-unit", args->opts.time_unit,
                  "unit of numeric times: s, ms, us or ns; iso requires ISO 8601 date-times "
                  "(recognized with any unit)")
      ->check(CLI::IsMember({"s", "ms", "us", "ns", "iso"}))
      ->capture_default_str();
  cmd->add_option("--block-tokens", args->opts.block_tokens, "tokens per KV block")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  input_file(
      cmd->add_option("--tokenizer", args->tokenizer,
                      "for text and output_text: auto, cl100k, approx, or a tiktoken rank file"))
      ->capture_default_str();
  cmd->add_flag("--skip-bad-lines", args->opts.skip_bad_lines,
                "skip and count bad rows (the first error is shown)");
  cmd->callback([args] { run(*args); });
}

CommandRegistrar registrar(46, add);

}  // namespace
}  // namespace kvpolicy::cli
