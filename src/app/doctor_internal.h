// The parts of `kvpolicy doctor` (docs/doctor.md) shared by its files; not a public header.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kvpolicy/app/doctor.h"
#include "kvpolicy/trace/import.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy::app::doctor {

// The cause codes, in the order causes are tried (doctor_content.cc).
inline constexpr const char* kVolatile = "timestamp_or_id";
inline constexpr const char* kTemplate = "tokenizer_or_template";
inline constexpr const char* kReordered = "reordered";
inline constexpr const char* kSystemPrompt = "system_prompt";
inline constexpr const char* kOther = "other";

// What two prompts' content says about where and why they part.
struct Diff {
  std::string cause;          // one of the codes above
  size_t at = 0;              // where the content first differs (characters, or tokens)
  std::string before, after;  // excerpts around `at`: the earlier prompt, the later
  std::string anchor;         // kVolatile in text: the constant text just before the volatile span
  size_t agree_after = 0;     // kVolatile: how long both agree again after the span
  // kVolatile in token ids: the tokens just before the span, and the span's length (the longer).
  std::vector<uint32_t> token_anchor;
  size_t span_tokens = 0;
};

// A volatile span in token ids: the tokens before it and how many tokens it covers.
struct TokenAnchor {
  std::vector<uint32_t> before;
  size_t span = 0;
};

// Content of one request: its text (may be empty) and token ids (may be empty).
struct Content {
  std::string_view text;
  const std::vector<uint32_t>* tokens = nullptr;
};

// Classifies why `later` stops sharing `earlier`'s prefix (their contents differ before
// `earlier` ends). With text: every cause; with tokens only: kVolatile (a short run of tokens)
// or kOther.
Diff classify(const Content& earlier, const Content& later);

// True when the first difference of two texts is a short volatile run (digits, hex, date
// separators) after which they agree again for a while; fills d's at, anchor and agree_after.
bool volatile_span(std::string_view a, std::string_view b, Diff& d);

// A message of a prompt text with recognisable boundaries (a line "role:", ChatML's
// <|im_start|>role, Llama 3's <|start_header_id|>role<|end_header_id|>).
struct Message {
  size_t start = 0, end = 0;  // in the text, header included
  std::string content;        // trimmed, whitespace collapsed, end-of-turn markers removed
};
// The messages of `text`; empty when it has fewer than two (nothing to tell from them).
std::vector<Message> split_messages(std::string_view text);
// Counterfactuals of section 6: `text` with its first message replaced by `first` (raw, header
// included); `text` with its messages in the order of their first appearance in `first_seen`
// (content -> rank; new messages are added in their order).
std::string replace_first_message(std::string_view text, std::string_view first);
std::string stable_message_order(std::string_view text, std::map<std::string, size_t>& first_seen);

// 30 characters either side of `at`, on one line, cut at UTF-8 character boundaries.
std::string excerpt_of(std::string_view text, size_t at);

// `text` with the volatile run after each anchor replaced by "#": the counterfactual of masking a
// timestamp or id (docs/doctor.md, "What to change").
std::string mask_volatile(std::string_view text, const std::vector<std::string>& anchors);

// The index of the histogram bucket of block position `block`: 0, 1, [2,3], [4,7], ...
size_t position_bucket(uint32_t block);
std::string bucket_label(size_t bucket);

// Sections 2 and 3 (doctor_breaks.cc). `prompts` is null for a trace of block keys only. The
// anchors of the volatile spans found are counted in `anchors`.
struct AnchorCounts {
  std::map<std::string, uint64_t> text;
  std::map<std::vector<uint32_t>, std::pair<uint64_t, size_t>> tokens;  // count, longest span
  void add(const Diff& d, bool from_text);
};
BreakSection within_sessions(const Trace& trace, const std::vector<KeptPrompt>* prompts,
                             AnchorCounts& anchors);
BreakSection across_sessions(const Trace& trace, const std::vector<KeptPrompt>* prompts,
                             AnchorCounts& anchors);
// With answers' text (output_text mapped): whether each turn that extends its session's previous
// prompt carries the previous answer as generated (what an engine that caches outputs holds).
BreakSection answers_within_sessions(const Trace& trace, const std::vector<KeptPrompt>* prompts);
// The most frequent anchors, at most `n`.
std::vector<std::string> top_anchors(const AnchorCounts& anchors, size_t n = 8);
std::vector<TokenAnchor> top_token_anchors(const AnchorCounts& anchors, size_t n = 8);
// `tokens` with the span after each anchor's first occurrence replaced by one sentinel token.
std::vector<uint32_t> mask_volatile_tokens(const std::vector<uint32_t>& tokens,
                                           const std::vector<TokenAnchor>& anchors);

// `trace` with every request's prompt re-blocked from `tokens` at `block_tokens` (times,
// sessions, outputs kept): the counterfactual traces of the remedies.
Trace rebuild(const Trace& trace, const std::vector<std::vector<uint32_t>>& tokens,
              uint32_t block_tokens);

}  // namespace kvpolicy::app::doctor

#include <memory>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/text_trace.h"

namespace kvpolicy::app::doctor {

// The diagnosed input: the trace, and for a log each row's prompt and the tokenizer it used.
struct Input {
  Trace trace;
  std::vector<KeptPrompt> prompts;  // empty for a trace file (-t)
  std::unique_ptr<Tokenizer> tokenizer;
  bool sorted = false;
  size_t inferred = 0;  // requests load_trace put into an earlier one's session (inferred sessions)
  bool has_text() const;
  bool has_tokens() const;  // every prompt's token ids (text logs have them too)
};

// Replays the measurements share (doctor_measure.cc), at the capacity of section 1.
struct Measured {
  CapacitySpec capacity;
  std::vector<ReplayResult> at_capacity;   // policy, lru, belady, s3fifo, gdsf
  ReplayResult doubled;                    // the policy at twice the capacity
  std::vector<std::string> anchors;        // volatile spans' anchors in text (sections 2, 3)
  std::vector<TokenAnchor> token_anchors;  // ... in token ids (a log of tokens)
};

HitRates hit_of(const ReplayResult& r);
HitRates ideal_of(const Trace& trace);
// Replays `policies` (names, each once) at `caps` on `trace` (app::run_grid).
std::vector<ReplayResult> replays(const Trace& trace, const std::vector<std::string>& policies,
                                  const std::vector<CapacitySpec>& caps, const DoctorSpec& spec,
                                  const CostModel& cost);
void measure_cache(const Input& in, const DoctorSpec& spec, const CostModel& cost, Measured& m,
                   DoctorReport& rep);
void measure_block_size(const Input& in, const DoctorSpec& spec, const CostModel& cost,
                        const Measured& m, DoctorReport& rep);
void measure_routing(const Input& in, const DoctorSpec& spec, const Measured& m, DoctorReport& rep);
void measure_remedies(const Input& in, const DoctorSpec& spec, const CostModel& cost,
                      const Measured& m, DoctorReport& rep);

}  // namespace kvpolicy::app::doctor
