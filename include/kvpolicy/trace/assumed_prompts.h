// Prompts for a log of lengths only (timestamps and token counts, such as Azure's LLM inference
// trace), made under a stated, seeded assumption model (`kvpolicy trace import --assume MODEL`):
// which requests share which prefix is the model's, not the log's, so hit rates on the result
// measure the assumptions, not the traffic (docs/formats.md, "Length-only logs").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/core/params.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

// The model, as `key=value,...` (Params): every request starts with one of `system_prompts`
// shared system prompts of `system` tokens (chosen per session by a seeded hash, clamped to the
// session's first prompt). Sessions have a planned length drawn from a geometric distribution
// with mean `turns` (1 = every request alone). In time order, a request continues the open
// session with the longest context that fits it (a session is open while it has turns left and
// its last request is at most `idle` seconds old); the context is its previous prompt plus, with
// reply=output, the previous output (reply=none: the prompt alone), and a request fits only if
// its prompt is at least that long. Otherwise it starts a new session. The rest of every prompt
// is content no other session has.
struct AssumedPromptModel {
  uint32_t system = 512;
  uint32_t system_prompts = 4;
  double turns = 3;
  std::string reply = "output";  // output | none
  double idle = 600;             // seconds
  uint64_t seed = 1;

  // Every parameter, defaults filled in: "system=512,system_prompts=4,...", parsed back alike.
  std::string canonical() const;
  // One line for humans: "lengths from the log; 4 shared system prompts of 512 tokens; ...".
  std::string statement() const;
};

// The declared parameters (Params), for errors and --help.
const std::vector<ParamSpec>& assumed_prompt_params();
// Parses the model ("" = every default); throws ConfigError naming a bad key or value.
AssumedPromptModel parse_assumed_prompt_model(const std::string& text);

// What the model did, for the import's report and the tests.
struct AssumedPromptReport {
  uint64_t sessions = 0;       // sessions started (every request is in one)
  uint64_t continuations = 0;  // requests that continued an open session
};

// Replaces the blocks, sessions and turns of `trace` (times sorted, prompt and output lengths as
// logged, blocks empty) by the model's, keeping every length as it is; sets trace.assumptions.
// Blocks are made from per-position token ids and hashed by text_block_ids, exactly as
// `trace build` and `trace import` hash tokens (chained keys, partial last block of its own).
AssumedPromptReport assume_prompts(Trace& trace, const AssumedPromptModel& model);

// The line every table of results on such a trace starts with: "assumed prompts: STATEMENT
// (kvpolicy trace import --assume MODEL)"; "" for a trace without assumptions.
std::string assumption_line(const Trace::Assumptions& assumptions);

}  // namespace kvpolicy
