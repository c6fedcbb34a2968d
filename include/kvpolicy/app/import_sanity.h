// What an imported trace looks like to a prefix cache, measured right after `trace import`: its
// prompt lengths, sessions and ideal (infinite-cache) hit rate, and warnings when the import looks
// degenerate (docs/doctor.md, "The import's sanity report").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/trace/trace.h"

namespace kvpolicy::app {

struct SanityWarning {
  std::string code;  // stable: one_block_prompts, no_session_reuse, no_shared_blocks, ...
  std::string text;  // one sentence, with its measured numbers
};

struct SanityReport {
  uint64_t prompts = 0;
  uint32_t block_tokens = 0;
  uint64_t tokens_median = 0, tokens_p99 = 0;  // prompt tokens per prompt (nearest rank)
  uint64_t blocks_median = 0, blocks_p99 = 0;  // prompt blocks per prompt
  uint64_t sessions = 0;                       // sessions with at least one request
  uint64_t turns_median = 0, turns_max = 0;    // requests per session
  uint64_t session_pairs = 0;                  // consecutive turns of one session
  uint64_t session_pairs_sharing = 0;  // of them, the later shares >= 1 block with the earlier
  uint64_t one_block_prompts = 0;      // prompts of at most one block
  double ideal_block_hit_rate = 0;     // an infinite cache: blocks seen before / block accesses
  double ideal_token_hit_rate = 0;     // its tokens hit / prompt tokens
  std::vector<SanityWarning> warnings;

  // The report as printed after an import's summary: stable wording, one fact a line.
  std::string text() const;
  // One JSON object (the fields above, warnings as [{code, text}]).
  std::string to_json() const;
};

// Measures `trace`; `sorted` says the importer had to sort its rows (a warning of its own).
SanityReport import_sanity(const Trace& trace, bool sorted = false);

// Blocks request r shares with request `before` from the start (their common prefix of keys).
uint32_t common_prefix_blocks(const Trace& trace, size_t before, size_t r);

}  // namespace kvpolicy::app
