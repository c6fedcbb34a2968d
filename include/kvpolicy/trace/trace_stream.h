// A trace read a chunk of requests at a time, so a replay holds one chunk, never the whole
// trace (`kvpolicy simulate --stream`). Formats that can be streamed register an opener next to
// their reader (TraceFormat::open_stream): native, oracle-general and mooncake.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

class TraceStream {
 public:
  virtual ~TraceStream() = default;
  // Replaces chunk's requests by the next at most `max_requests` ones (keys chained, time from
  // the trace's first request, as the whole-trace reader gives them); chunk.name, block_tokens
  // and category_names are the trace's. False, with chunk empty, when none are left. Requests
  // out of time order are an InputError: a stream cannot sort.
  virtual bool next(Trace& chunk, size_t max_requests) = 0;
  virtual const ReadReport& report() const = 0;
};

// Bytes a request holds in a whole Trace's columns besides its blocks, and per block: what a
// reader or generator checks against the machine's memory before it makes a trace.
inline constexpr uint64_t kTraceBytesPerRequest = 38, kTraceBytesPerBlock = 8;

// What to do with a trace too large to read whole, for the whole-trace readers' errors.
inline constexpr const char* kStreamHint =
    "simulate --stream reads mooncake, native and oracle-general traces a chunk at a time";

// Opens `path` as a stream (format "auto" detects it as read_trace does). Throws ConfigError
// for a format that cannot be streamed, InputError for a file that cannot be read.
std::unique_ptr<TraceStream> open_trace_stream(const std::string& path, const std::string& format,
                                               const ReadOptions& opts);

// What every result of a streamed replay refers to, from one pass: requests, accesses, prompt
// tokens and the distinct keys (a KeyMap of the unique keys, the only memory beyond a chunk).
struct StreamFacts {
  std::string name;
  uint32_t block_tokens = 16;
  uint64_t requests = 0;
  uint64_t block_accesses = 0;
  uint64_t unique_blocks = 0;
  uint64_t prompt_tokens = 0;
  uint32_t longest_prompt_blocks = 0;
  std::string fingerprint;  // TraceChecksum's, when a pass counted it (stream_fingerprint)
};
StreamFacts stream_facts(TraceStream& stream);
// A pass that counts only the fingerprint (TraceChecksum).
std::string stream_fingerprint(TraceStream& stream);

// Requests per chunk of a streamed pass: a few MB of columns.
inline constexpr size_t kStreamChunkRequests = 1 << 16;

}  // namespace kvpolicy
