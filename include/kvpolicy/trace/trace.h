// The in-memory columnar trace: one row per request, prompt blocks in one flat array.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/core/access.h"
#include "kvpolicy/core/oracle_view.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

struct Trace {
  std::string name;
  uint32_t block_tokens = 16;  // B: tokens per KV block

  // Per request.
  std::vector<Time> time;  // microseconds since the first request, non-decreasing
  std::vector<SessionId> session;
  std::vector<uint32_t> turn;  // 1 = first turn
  std::vector<CategoryId> category;
  std::vector<uint32_t> user;
  std::vector<uint32_t> prompt_tokens;
  std::vector<uint32_t> output_tokens;
  std::vector<uint64_t> block_offset{
      0};  // request r's blocks are [block_offset[r], block_offset[r+1])

  // Per prompt block, chained keys (see chain_key): equal key = equal prefix.
  std::vector<BlockKey> blocks;

  std::vector<std::string> category_names;  // CategoryId -> name; empty = one category

  // Optional, per request: the probability that its conversation goes on after it, scored by
  // a continuation classifier when the trace was built (LPC; the text itself is never kept).
  // Empty when the trace carries none; otherwise one value in [0, 1] per request.
  std::vector<float> continuation;
  bool has_continuation() const { return !continuation.empty(); }

  // Optional, per request: its priority, higher = kept longer (SGLang's and TensorRT-LLM's
  // request priority; read by the `priority` policy). Empty when the trace carries none (every
  // request then has priority 0); otherwise one value per request.
  std::vector<int32_t> priority;
  bool has_priority() const { return !priority.empty(); }

  // Optional, per request: its retention hints (RetentionHint, in blocks), request r's being
  // hints[hint_offset[r], hint_offset[r+1]). Empty when the trace carries none: a trace file's
  // `hints` field or `--hint` rules (hints.h) set them, and replay and serve then put every
  // policy behind the hint wrapper.
  std::vector<RetentionHint> hints;
  std::vector<uint64_t> hint_offset;
  bool has_hints() const { return !hint_offset.empty(); }
  std::span<const RetentionHint> hints_of(size_t r) const {
    if (!has_hints()) return {};
    return {hints.data() + hint_offset[r], hints.data() + hint_offset[r + 1]};
  }
  // Sets the column from one list per request (requests without hints: empty lists).
  void set_hints(const std::vector<std::vector<RetentionHint>>& per_request);

  // Optional: set when the prompts are not the log's but an assumption model's (`trace import
  // --assume`, assumed_prompts.h): its parameters with every default filled in, and one line
  // saying it for humans. Hit rates on such a trace measure the assumptions, so every table and
  // result row says so (docs/formats.md, "Length-only logs").
  struct Assumptions {
    std::string model;      // "system=512,system_prompts=4,turns=3,..."
    std::string statement;  // "lengths from the log; 4 shared system prompts of 512 tokens; ..."
    bool empty() const { return model.empty(); }
    bool operator==(const Assumptions&) const = default;
  };
  Assumptions assumptions;

  size_t size() const { return time.size(); }
  size_t num_block_accesses() const { return blocks.size(); }
  std::span<const BlockKey> prompt(size_t r) const {
    return {blocks.data() + block_offset[r], blocks.data() + block_offset[r + 1]};
  }
  uint32_t prompt_blocks(size_t r) const {
    return static_cast<uint32_t>(block_offset[r + 1] - block_offset[r]);
  }

  // Appends a request; `ids` are the trace's raw block ids, chained here into keys.
  void add_request(Time t, std::span<const uint64_t> ids, uint32_t prompt_tok, uint32_t output_tok,
                   SessionId s = kNoSession, uint32_t turn_no = 1, CategoryId cat = 0,
                   uint32_t user_id = 0);
  // Appends a request whose block keys are already chained.
  void add_request_keys(Time t, std::span<const BlockKey> keys, uint32_t prompt_tok,
                        uint32_t output_tok, SessionId s = kNoSession, uint32_t turn_no = 1,
                        CategoryId cat = 0, uint32_t user_id = 0);
  void reserve(size_t requests, size_t block_accesses);
  // Drops every request, keeping the columns' memory (a stream's next chunk).
  void clear_requests();

  // Sorts requests by time (stable); returns true if they were out of order.
  bool sort_by_time();
  // Checks column lengths and invariants; throws Error naming the first problem.
  void validate() const;
};

// Request r of `trace` as a cache sees it.
RequestView request_view(const Trace& trace, size_t r);

// Distinct block keys in the trace (the size of an infinite cache).
size_t count_unique_blocks(const Trace& trace);

// Next use of every block access, from the trace's future.
struct Oracle {
  static constexpr uint32_t kNoNext = OracleView::kNoNext;
  // Per flat block access: index of the next request whose prompt holds the same key.
  std::vector<uint32_t> next_request;
  // Per request: index of the next request of the same session (kNoNext if none).
  std::vector<uint32_t> next_in_session;

  // What policies and predictors may read of it; valid while this oracle and `trace` live.
  OracleView view(const Trace& trace) const;
};

Oracle compute_oracle(const Trace& trace);

// `copies` copies of `base` one after another, each re-keyed from a root that holds the copy
// index, so no copy shares a block with another; times keep increasing and session ids stay
// apart. A longer trace of the same shape (`kvpolicy bench`'s workload (a)).
Trace repeat_with_fresh_keys(const Trace& base, size_t copies);

// Options shared by every trace reader.
struct ReadOptions {
  bool skip_bad_lines = false;  // count and skip bad records instead of failing
  bool sort_unsorted = true;    // sort non-monotone timestamps (stated in the report)
  uint32_t block_tokens = 0;    // 0 = the format's default
  uint64_t max_requests = 0;    // 0 = all
};

struct ReadReport {
  uint64_t lines = 0;
  uint64_t skipped_lines = 0;
  std::string first_skipped;  // the error of the first skipped line, for the message
  bool sorted = false;        // timestamps were out of order and were sorted
};

class TraceStream;

struct TraceFormat {
  std::string name;
  std::string description;
  std::function<Trace(const std::string& path, const ReadOptions&, ReadReport&)> read;
  // Empty when the format cannot be read as a stream (trace_stream.h).
  std::function<std::unique_ptr<TraceStream>(const std::string& path, const ReadOptions&)>
      open_stream = {};
};

// Registry of trace readers; formats register themselves at static-init time.
class TraceFormatRegistry {
 public:
  static TraceFormatRegistry& instance();
  void add(TraceFormat f);
  const TraceFormat& get(const std::string& name) const;  // throws ConfigError
  const std::vector<TraceFormat>& all() const { return formats_; }

 private:
  std::vector<TraceFormat> formats_;
};

struct TraceFormatRegistrar {
  explicit TraceFormatRegistrar(TraceFormat f) {
    TraceFormatRegistry::instance().add(std::move(f));
  }
};

// Reads a trace; format "auto" picks by file name and first bytes.
Trace read_trace(const std::string& path, const std::string& format, const ReadOptions& opts,
                 ReadReport* report = nullptr);
std::string detect_format(const std::string& path);
// Throws one clear InputError, before a reader reads the path as bytes (which would fail as a
// truncated record, an allocation of its reported size, or "cannot read"), when it is missing, a
// directory, or not a regular file: a pipe such as /dev/stdin cannot be read twice (detection,
// then the reader) nor sized.
void require_trace_file(const std::string& path);

}  // namespace kvpolicy
