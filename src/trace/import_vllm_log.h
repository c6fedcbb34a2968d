// vLLM's request log (`--enable-log-requests`: "Received request ID: prompt: '...', params: ...,
// prompt_token_ids: [...]" lines) as JSONL that `trace import` reads like any other
// (docs/formats.md, "Presets"). Internal to src/trace (import).
#pragma once

#include <cstdint>
#include <string>

namespace kvpolicy {

// One JSON line per "Received request" line of `data` ({"id", "time", "prompt"}: the token ids
// when logged, else the prompt's text), and an empty line for every other line, so the JSONL's
// line numbers are the log's. A request line it cannot read throws an InputError naming path and
// line, or with `skip` is left empty, counted in `skipped` and the first error kept; no request
// line at all throws.
std::string vllm_log_to_jsonl(const std::string& path, const std::string& data, bool skip,
                              uint64_t& skipped, std::string& first_skipped);

}  // namespace kvpolicy
