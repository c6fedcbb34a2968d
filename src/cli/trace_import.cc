// `kvpolicy trace import`: a user's own request log (CSV or JSONL, plain, gzip or zstd, a file or
// standard input) into a native trace.
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
  std::string input = s.input == "-" ? "<stdin>" : s.input;
  std::string format =
      s.compression == "none" ? s.format : fmt::format("{}, {}", s.format, s.compression);
  if (s.joined_lines || s.responses_without_request)
    fmt::print(stderr,
               "kvpolicy: joined {} line(s) into the request of their id; {} response(s) "
               "without a request line skipped\n",
               s.joined_lines, s.responses_without_request);
  fmt::print(
      "{} ({}): {} requests, {}, {} skipped rows\n"
      "{} block accesses of {} tokens, {} unique blocks; {} prompt tokens, {} output tokens; "
      "{:.3f} s from first to last request\n",
      input, format, s.requests, session_text, s.skipped_rows, s.block_accesses, s.block_tokens,
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
      "import",
      "import your own request log (CSV or JSONL, one request per row or lines joined by id) "
      "as a trace");
  input_file(cmd->add_option("--input,-i", args->input,
                             "the log: FILE.csv or FILE.jsonl, plain, gzip or zstd (told by its "
                             "first bytes), or - for standard input"))
      ->required();
  std::string presets;
  for (const ImportPreset& p : import_presets())
    presets += fmt::format("{}{} ({})", presets.empty() ? "" : "; ", p.name, p.map);
  cmd->add_option("--map", args->map,
                  "target=column,...: time (required); one of tokens, text, messages, hashes "
                  "(the prompt); optional id (joins JSONL lines), session, prompt_tokens (with "
                  "hashes; alone with --assume), output or output_text, turn, category, user. "
                  "JSONL columns are paths: usage.completion_tokens, messages[-1].content");
  cmd->add_option_function<std::string>(
      "--assume", [args](const std::string& model) { args->opts.assume = model; },
      "MODEL: import a log of lengths only (--map prompt_tokens=COLUMN, no prompt "
      "content) under this stated assumption model, key=value,... ('' = defaults: " +
          AssumedPromptModel{}.canonical() +
          "): shared system prompts of `system` tokens, sessions of geometric length "
          "with mean `turns`; stored in the trace and printed above every table "
          "(docs/formats.md, Length-only logs)");
  cmd->add_option("--preset", args->preset,
                  "a known log format's mapping, overridden target by target by --map "
                  "(vllm-log and otel-genai also set --format): " +
                      presets)
      ->check(CLI::IsMember([] {
        std::vector<std::string> names;
        for (const ImportPreset& p : import_presets()) names.push_back(p.name);
        return names;
      }()));
  cmd->add_option("--chat-template", args->opts.chat_template,
                  "how messages= becomes the prompt text: chatml, llama3, plain, or a format "
                  "with {role} and {content} (\\n escapes), e.g. '{role}: {content}\\n'")
      ->capture_default_str();
  output_file(cmd->add_option("--out,-o", args->out, "FILE.kvtrace"))->required();
  cmd->add_option("--format", args->opts.format,
                  "csv, jsonl, vllm-log (vLLM's request log lines), otlp-json (OpenTelemetry "
                  "spans), or auto (by extension, else by the first character)")
      ->check(CLI::IsMember({"auto", "csv", "jsonl", "vllm-log", "otlp-json"}))
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
                      "for text, messages and output_text: auto, cl100k, approx, or a tiktoken "
                      "rank file"))
      ->capture_default_str();
  cmd->add_flag("--skip-bad-lines", args->opts.skip_bad_lines,
                "skip and count bad rows (the first error is shown)");
  cmd->callback([args] { run(*args); });
}

CommandRegistrar registrar(46, add);

}  // namespace
}  // namespace kvpolicy::cli
