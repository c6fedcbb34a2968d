// A user's own request log (CSV or JSONL) imported as a native trace, as both front ends ask for
// it: the file written, and what it holds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kvpolicy/app/import_sanity.h"
#include "kvpolicy/trace/import.h"

namespace kvpolicy::app {

struct ImportSpec {
  std::string input;               // the log: FILE.csv or FILE.jsonl (gzip, zstd), or "-" (stdin)
  std::string map;                 // target=column,... (parse_import_mapping)
  std::string preset;              // a named log format (import_presets()); --map overrides it
  std::string out;                 // FILE.kvtrace
  std::string tokenizer = "auto";  // for text, messages, output_text: auto, cl100k, approx, a file
  ImportOptions opts;  // format, chat template, time unit, block size, skip_bad_lines, assume
};

// A log read into a trace as `trace import` reads it, for commands that work on it in memory.
struct ImportedLog {
  Trace trace;
  ImportReport report;
  std::unique_ptr<Tokenizer> tokenizer;  // the one that tokenized text or messages, else null
};

// Reads spec.input with spec's mapping (its preset, then --map), format, chat template and
// tokenizer; skipped rows and sorting are noted on stderr. spec.out is not used. Throws
// ConfigError on a bad option, InputError on a bad row.
ImportedLog read_log(const ImportSpec& spec);

// What an import wrote.
struct ImportSummary {
  std::string input, out, format;
  std::string compression;  // none, gzip or zstd
  std::string tokenizer;    // the tokenizer's name when text was tokenized, else empty
  uint64_t requests = 0, sessions = 0, skipped_rows = 0, lines = 0;
  uint64_t block_accesses = 0, unique_blocks = 0;
  uint32_t block_tokens = 0;
  uint64_t prompt_tokens = 0, output_tokens = 0;
  double duration_s = 0;                   // from the first to the last request
  bool sorted = false;                     // rows were not in time order and were sorted (stably)
  uint64_t joined_lines = 0;               // with id: lines merged into another's request
  uint64_t responses_without_request = 0;  // with id: skipped, no line with the prompt
  // With opts.assume (a log of lengths only): the model, defaults filled in, and its statement;
  // and how many requests it made continue a session.
  Trace::Assumptions assumptions;
  uint64_t continuations = 0;
  SanityReport sanity;  // import_sanity of the trace written
};

// Imports spec.input and writes spec.out; notes (skipped rows, sorting, the tokenizer chosen) go
// to stderr. Throws ConfigError on a bad option, InputError on a bad row.
ImportSummary import_to_native(const ImportSpec& spec);

}  // namespace kvpolicy::app
