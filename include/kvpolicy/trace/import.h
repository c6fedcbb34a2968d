// A user's own request log (CSV or JSONL, one request per row, or JSONL lines joined by request
// id; plain, gzip or zstd; a file or standard input) into a Trace: `--map` names the columns
// (JSONL fields by path, such as usage.completion_tokens), prompts come as token ids, text
// (tokenized), OpenAI chat messages (rendered by a chat template, tokenized) or the engine's own
// chained block hashes (integers or strings).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvpolicy/trace/assumed_prompts.h"
#include "kvpolicy/trace/text_trace.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

// Which of the user's columns holds what; an empty name = not mapped.
struct ImportMapping {
  std::string id;             // request id: JSONL lines sharing one are joined (request, response)
  std::string time;           // required: arrival time
  std::string session;        // conversation id (any string); absent = no sessions
  std::string tokens;         // prompt token ids   } exactly one
  std::string text;           // prompt text        } of these
  std::string messages;       // OpenAI chat messages } (prompt)
  std::string hashes;         // per-block hashes, already chained by the engine (taken as keys)
  std::string prompt_tokens;  // prompt length: with hashes (default: blocks x block_tokens), or
                              // alone for a log of lengths only (with ImportOptions::assume)
  std::string output;         // output length in tokens
  std::string output_text;    // output text, tokenized to count it
  std::string turn;           // turn number from 1 (default: order within the session)
  std::string category;       // any string, numbered like request types
  std::string user;           // any string, numbered in order of first appearance
};

// Parses "target=column,target=column,...": targets are the fields of ImportMapping; throws
// ConfigError for an unknown target (listing the valid ones), a repeated one, or a mapping
// without time or without exactly one of tokens, text, messages and hashes. A `preset`
// (import_presets()) gives the mapping first; `spec` overrides it target by target, and a prompt
// target in `spec` replaces the preset's. A mapping of lengths only (prompt_tokens and no
// prompt) is refused, saying what is missing and what would supply it, unless `lengths_only_ok`
// (an import with ImportOptions::assume).
ImportMapping parse_import_mapping(const std::string& spec, const std::string& preset = "",
                                   bool lengths_only_ok = false);

// The named log formats of --preset: name, default mapping, the file format it implies (empty:
// csv or jsonl as detected), what it reads.
struct ImportPreset {
  const char* name;
  const char* map;
  const char* format;
  const char* description;
};
const std::vector<ImportPreset>& import_presets();

struct ImportOptions {
  ImportMapping map;
  // csv, jsonl, or auto: by the file name's extension (after .gz, .zst), else by the first
  // character of the decompressed bytes ('{' = jsonl); vllm-log: vLLM's request log lines
  std::string format = "auto";
  // How chat messages become text: chatml, llama3, plain or a custom format (chat_template.h).
  std::string chat_template = "chatml";
  // Numeric times are in this unit: s, ms, us or ns (integers exactly, or decimals). ISO 8601
  // strings (2025-01-01T12:00:00.123Z) are recognized whatever the unit; "iso" requires them.
  std::string time_unit = "s";
  uint32_t block_tokens = 16;
  bool skip_bad_lines = false;           // count and skip bad rows instead of failing
  const Tokenizer* tokenizer = nullptr;  // required when text, messages or output_text is mapped
  // A log of lengths only (prompt_tokens mapped, no prompt content) is imported under this
  // assumption model (assumed_prompts.h, `key=value,...`; "" = its defaults); unset = such a
  // log is refused.
  std::optional<std::string> assume;
  // Opt-in for `kvpolicy doctor` (docs/doctor.md): keep each row's prompt text, token ids and
  // answer in ImportReport::prompts, so causes of prefix breaks can be told from the content.
  bool keep_prompts = false;
};

// One imported row's prompt as the log had it (ImportOptions::keep_prompts).
struct KeptPrompt {
  uint64_t line = 0;             // the row's line in the log (the prompt's line, when joined)
  std::string text;              // the prompt text (messages rendered); empty unless mapped
  std::vector<uint32_t> tokens;  // its token ids; empty when hashes are mapped
  std::string output_text;       // the answer's text; empty unless output_text is mapped
};

struct ImportReport {
  std::string format;                      // csv or jsonl
  std::string compression;                 // none, gzip or zstd (by the input's first bytes)
  uint64_t lines = 0;                      // physical lines read
  uint64_t rows = 0;                       // requests imported
  uint64_t skipped_rows = 0;               // bad rows skipped (skip_bad_lines)
  std::string first_skipped;               // the first skipped row's error
  bool sorted = false;                     // rows were not in time order and were sorted (stably)
  uint64_t joined_lines = 0;               // with id: lines merged into an earlier line's request
  uint64_t responses_without_request = 0;  // with id: ids with no prompt line (skipped)
  AssumedPromptReport assumed;             // with ImportOptions::assume: what the model made
  // With keep_prompts: one per request, in the trace's order (after the time sort).
  std::vector<KeptPrompt> prompts;
};

// Reads the log into a trace: times from the earliest row (microseconds), sorted stably if out
// of order; sessions numbered in order of their first request; text and tokens hashed into
// `block_tokens`-token blocks with chained keys exactly as `trace build` does (partial last
// block of its own tokens), so rows sharing a prefix share its blocks. A bad row throws one
// InputError "FILE:LINE: column 'NAME': reason" (CSV) or "FILE:LINE: field 'NAME': reason"
// (JSONL), or with skip_bad_lines is skipped and counted. `path` "-" is standard input.
Trace import_trace(const std::string& path, const ImportOptions& opts, ImportReport& report);

// Parses an ISO 8601 date-time (YYYY-MM-DD[T ]hh:mm[:ss[.frac]][Z|+hh:mm|-hh:mm|+hhmm]; no zone =
// UTC) into microseconds since the Unix epoch; false if `s` is not one.
bool parse_iso8601_micros(std::string_view s, Time& micros);

}  // namespace kvpolicy
