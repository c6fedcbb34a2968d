// `kvpolicy trace import`: a user's own request log (CSV or JSONL) into a native trace.
#include <fmt/format.h>

#include <unordered_set>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/import.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::cli {
namespace {

struct ImportArgs {
  std::string input;
  std::string map;
  std::string out;
  std::string tokenizer = "auto";
  ImportOptions opts;
};

void run(ImportArgs& a) {
  if (a.out.size() < 8 || a.out.compare(a.out.size() - 8, 8, ".kvtrace") != 0)
    throw ConfigError("--out must end in .kvtrace");
  a.opts.map = parse_import_mapping(a.map);
  std::unique_ptr<Tokenizer> tok;
  if (!a.opts.map.text.empty() || !a.opts.map.output_text.empty()) {
    std::string note;
    tok = make_tokenizer(a.tokenizer, &note);
    if (!note.empty()) fmt::print(stderr, "kvpolicy: {}\n", note);
    a.opts.tokenizer = tok.get();
  }
  ImportReport rep;
  Trace t = import_trace(a.input, a.opts, rep);
  if (rep.skipped_rows)
    fmt::print(stderr, "kvpolicy: skipped {} bad row(s) of {} lines; first: {}\n", rep.skipped_rows,
               rep.lines, rep.first_skipped);
  if (rep.sorted)
    fmt::print(stderr, "kvpolicy: {}: rows were not in time order; sorted (stably)\n", a.input);
  write_native(t, a.out);

  std::unordered_set<SessionId> sessions;
  uint64_t prompt = 0, output = 0;
  for (size_t r = 0; r < t.size(); ++r) {
    if (t.session[r] != kNoSession) sessions.insert(t.session[r]);
    prompt += t.prompt_tokens[r];
    output += t.output_tokens[r];
  }
  std::string session_text = sessions.empty()
                                 ? "no sessions (simulate infers them from shared prefixes)"
                                 : fmt::format("{} sessions", sessions.size());
  fmt::print(
      "{} ({}): {} requests, {}, {} skipped rows\n"
      "{} block accesses of {} tokens, {} unique blocks; {} prompt tokens, {} output tokens; "
      "{:.3f} s from first to last request\n",
      a.input, rep.format, t.size(), session_text, rep.skipped_rows, t.num_block_accesses(),
      t.block_tokens, count_unique_blocks(t), prompt, output,
      t.size() ? double(t.time.back()) / kMicrosPerSecond : 0.0);
  // On stderr: the vocabulary's path is the machine's, not the trace's.
  if (tok) fmt::print(stderr, "kvpolicy: tokenized text with {}\n", tok->name());
  fmt::print("wrote {}\n", a.out);
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
                  "prompt); optional session, prompt_tokens (with hashes), output or "
                  "output_text, turn, category, user")
      ->required();
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
