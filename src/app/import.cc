#include "kvpolicy/app/import.h"

#include <fmt/format.h>

#include <memory>
#include <unordered_set>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/text_trace.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::app {

ImportedLog read_log(const ImportSpec& spec) {
  ImportOptions opts = spec.opts;
  if (spec.map.empty() && spec.preset.empty())
    throw ConfigError("trace import: give --map TARGET=COLUMN,... or --preset NAME");
  opts.map = parse_import_mapping(spec.map, spec.preset, opts.assume.has_value());
  for (const ImportPreset& p : import_presets())
    if (spec.preset == p.name && *p.format && (opts.format.empty() || opts.format == "auto"))
      opts.format = p.format;
  ImportedLog log;
  if (!opts.map.text.empty() || !opts.map.messages.empty() || !opts.map.output_text.empty()) {
    std::string note;
    log.tokenizer = make_tokenizer(spec.tokenizer, &note);
    if (!note.empty()) fmt::print(stderr, "kvpolicy: {}\n", note);
    opts.tokenizer = log.tokenizer.get();
  }
  log.trace = import_trace(spec.input, opts, log.report);
  const ImportReport& rep = log.report;
  if (rep.skipped_rows)
    fmt::print(stderr, "kvpolicy: skipped {} bad row(s) of {} lines; first: {}\n", rep.skipped_rows,
               rep.lines, rep.first_skipped);
  if (rep.sorted)
    fmt::print(stderr, "kvpolicy: {}: rows were not in time order; sorted (stably)\n", spec.input);
  return log;
}

ImportSummary import_to_native(const ImportSpec& spec) {
  const std::string& out = spec.out;
  if (out.size() < 8 || out.compare(out.size() - 8, 8, ".kvtrace") != 0)
    throw ConfigError("--out must end in .kvtrace");
  ImportedLog log = read_log(spec);
  Trace& t = log.trace;
  const ImportReport& rep = log.report;
  // A log read from standard input has no name of its own: the trace is named by its file.
  if (spec.input == "-") t.name = out;
  write_native(t, out);

  ImportSummary s;
  s.input = spec.input;
  s.out = out;
  s.format = rep.format;
  s.compression = rep.compression;
  s.joined_lines = rep.joined_lines;
  s.responses_without_request = rep.responses_without_request;
  if (log.tokenizer) s.tokenizer = log.tokenizer->name();
  std::unordered_set<SessionId> sessions;
  for (size_t r = 0; r < t.size(); ++r) {
    if (t.session[r] != kNoSession) sessions.insert(t.session[r]);
    s.prompt_tokens += t.prompt_tokens[r];
    s.output_tokens += t.output_tokens[r];
  }
  s.requests = t.size();
  s.sessions = sessions.size();
  s.skipped_rows = rep.skipped_rows;
  s.lines = rep.lines;
  s.block_accesses = t.num_block_accesses();
  s.block_tokens = t.block_tokens;
  s.unique_blocks = count_unique_blocks(t);
  s.duration_s = t.size() ? double(t.time.back()) / kMicrosPerSecond : 0.0;
  s.sorted = rep.sorted;
  s.assumptions = t.assumptions;
  s.continuations = rep.assumed.continuations;
  s.sanity = import_sanity(t, rep.sorted);
  return s;
}

}  // namespace kvpolicy::app
