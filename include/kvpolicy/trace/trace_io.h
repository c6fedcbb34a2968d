// Trace writers (native binary cache, libCacheSim's oracleGeneral) and session inference.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

// The native binary cache of a parsed trace (.kvtrace): a header, then every column as a raw
// little-endian array, so a load is one read per column. Throws ConfigError if `path` cannot be
// written.
void write_native(const Trace& trace, const std::string& path);

// Where a native trace's header holds its checksum, and the checksum the rest of the file at
// `path` would need there (none if it is too short or malformed to be read that far): so a fuzzer
// can craft files whose contents, not their checksum, are under test.
inline constexpr size_t kNativeChecksumOffset = 40;
std::optional<uint64_t> native_trace_checksum(const std::string& path);

class AtomicOutput;

// Writes a native trace (version 1, no continuation column) a request at a time, so a trace too
// large to hold can be written (`kvpolicy trace generate`): the request and block counts are
// announced first, each column is written at its place as its buffer fills, and finish() reads
// the file back once for the checksum. The file is the one write_native writes for the same
// requests, byte for byte. Throws Error on a count that differs from the announced one.
class NativeTraceWriter {
 public:
  NativeTraceWriter(const std::string& path, const std::string& name, uint32_t block_tokens,
                    uint64_t requests, uint64_t block_accesses);
  ~NativeTraceWriter();
  void add_request_keys(Time t, std::span<const BlockKey> keys, uint32_t prompt_tok,
                        uint32_t output_tok, SessionId s = kNoSession, uint32_t turn_no = 1,
                        CategoryId cat = 0, uint32_t user_id = 0);
  // Writes the header and renames the file into place.
  void finish();

 private:
  struct Columns;
  void flush();
  std::unique_ptr<AtomicOutput> out_;
  std::unique_ptr<Columns> cols_;
  std::string name_;
  uint32_t block_tokens_;
  uint64_t n_, nb_, requests_ = 0, blocks_ = 0;
  Time last_time_ = 0;
};

// libCacheSim's oracleGeneral record: packed, 24 bytes, little-endian.
inline constexpr size_t kOracleGeneralRecordBytes = 24;
// libCacheSim's traceConv writes -1 for "never accessed again" (its reader also accepts
// INT64_MAX).
inline constexpr int64_t kOracleGeneralNever = -1;

// Flattens the prefix trace into one oracleGeneral record per block access, in order:
// clock_time = the request's time in whole seconds since the first request, obj_id = the chained
// block key, obj_size = `obj_size` (1 makes libCacheSim's cache sizes count blocks),
// next_access_vtime = the 1-based record number of the next access to the same key (libCacheSim's
// convention), or kOracleGeneralNever.
void write_oracle_general(const Trace& trace, const std::string& path, uint32_t obj_size = 1);

// Session inference for traces without session ids (Mooncake, LMBench). In time order, request r
// continues an earlier request q if r's prompt starts with all of q's full blocks (full =
// floor(prompt_tokens / block_tokens), at least 1, at most q's block count); among several such
// q, the one with the most full blocks, then the latest. r then joins q's session with turn
// q.turn + 1; otherwise it opens a new session with turn 1. Only requests with at least
// `min_parent_blocks` full blocks can be continued: a prefix every request shares (a system
// prompt, such as block 0 of every Mooncake request) is not a conversation. O(total blocks).
// Returns the number of requests that continue an earlier one.
size_t infer_sessions(Trace& trace, uint32_t min_parent_blocks = 2);

}  // namespace kvpolicy
