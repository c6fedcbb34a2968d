// `kvpolicy doctor`: what limits a trace's prefix-cache hit rate, measured and ranked — the finite
// cache, prefix breaks within and across sessions (with their causes told from the prompts'
// content), the block size, the router — and what to change, each remedy measured on a
// counterfactual trace (docs/doctor.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/app/import.h"
#include "kvpolicy/app/inputs.h"
#include "kvpolicy/trace/import.h"

namespace kvpolicy::app {

struct DoctorSpec {
  TraceOptions trace;    // -t: any trace simulate reads (its path empty when a log is given)
  ImportSpec log;        // --input: a user's log, as `trace import` reads it (log.out unused)
  std::string capacity;  // "" = the KV memory the GPU leaves after the weights (see docs)
  std::string policy = "lru";
  uint32_t workers = 4;
  CostOptions cost;
  unsigned jobs = 0;  // replays at once; 0 = every core
  uint64_t seed = 1;
  bool skip_routing = false;  // leave out the serve runs of section 5

  // One set of input options for both inputs, as the front ends take them: trace.format,
  // trace.block_tokens (0 = 16 for a log) and trace.skip_bad_lines applied to the log when
  // log.input is set; throws ConfigError on a log's format other than csv, jsonl or auto, a log
  // without log.map, or log.map without a log.
  void share_input_options();
};

// One instance of a cause: where the prompt broke and what both sides hold there.
struct BreakExample {
  uint64_t line = 0, previous_line = 0;  // log lines (a trace's request numbers, from 1)
  uint32_t block = 0;                    // the first block not shared
  std::string before, after;             // excerpts around the difference: previous, this
};

struct BreakCause {
  std::string code;  // timestamp_or_id, system_prompt, reordered, tokenizer_or_template, other
  uint64_t count = 0;
  std::vector<BreakExample> examples;  // up to 3
};

// Where prompts stop sharing a prefix with the prompt they are compared with.
struct BreakSection {
  uint64_t pairs = 0;   // prompts compared
  uint64_t breaks = 0;  // of them, broke before the compared prompt's last full block
  // Counts of the first unshared block's position: [0], [1], [2,3], [4,7], ... (powers of 2).
  std::vector<uint64_t> histogram;
  std::vector<BreakCause> causes;  // by count, highest first; empty without content
  std::string basis;               // what was compared, and what content told the causes
};

// A cache's hit rates on one trace.
struct HitRates {
  double block = 0, token = 0;
};

struct RouterRow {
  std::string router;
  HitRates hit;
  double ttft_p50_ms = 0, ttft_p90_ms = 0;
  double queue_wait_p50_ms = 0;  // of TTFT, the median wait before the first prefill step
};

struct Remedy {
  std::string what;     // the change, in words
  std::string setting;  // the command or setting to change
  HitRates before, after;
  // A remedy that changes the prompts: the ideal (infinite-cache) hit rate of the trace as it
  // is and as changed, which says what the change allows beyond the capacity measured.
  bool changes_prompts = false;
  HitRates ideal_before, ideal_after;
  double gain_token_points() const { return 100 * (after.token - before.token); }
  double gain_block_points() const { return 100 * (after.block - before.block); }
};

struct DoctorReport {
  std::string input;
  uint64_t requests = 0, unique_blocks = 0;
  uint32_t block_tokens = 0;
  std::string content;  // text, tokens or blocks: what the prompts were read as
  SanityReport sanity;
  // 1. The finite cache.
  std::string capacity_label;  // "12,000 blocks (…)" and how it was chosen
  size_t capacity_blocks = 0;
  std::string policy;  // the policy of sections 1 and 5 (-p)
  HitRates ideal, policy_hit, lru, belady;
  // 2, 3. Prefix breaks within sessions and across them.
  BreakSection within, across;
  BreakSection answers;  // with output_text mapped: turns not carrying the previous answer as given
  // 4. Block size against prompt lengths.
  uint64_t shorter_than_block = 0;       // prompts shorter than one block
  double partial_block_token_share = 0;  // prompt tokens in partial last blocks
  uint32_t small_block_tokens = 0;       // 0: not measured (no token ids, or B already small)
  HitRates small_ideal, small_policy;    // at small_block_tokens, the same KV memory
  // 5. Routers on `workers` workers.
  uint32_t workers = 0;
  std::vector<RouterRow> routers;
  // 6. Remedies, by measured token-hit gain, highest first.
  std::vector<Remedy> remedies;
  double seconds = 0;  // wall time of the whole diagnosis

  std::string text() const;     // as `kvpolicy doctor` prints it
  std::string to_json() const;  // one JSON object (docs/doctor.md)
};

// Loads the input, measures every section and the remedies. Throws ConfigError or InputError.
DoctorReport run_doctor(const DoctorSpec& spec);

}  // namespace kvpolicy::app
