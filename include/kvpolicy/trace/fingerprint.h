// What a result knows of the trace it was replayed on, beyond its name: its requests, block
// accesses and a checksum of what was read. A file at the same path with other content (a
// regenerated trace, another --max-requests) then never resumes rows of the old one.
#pragma once

#include <cstdint>
#include <string>

#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

// Over each request's time, prompt and output tokens and block keys, request by request, so a
// trace read whole and the same trace read as a stream in chunks of any size sum alike.
class TraceChecksum {
 public:
  void add(const Trace& chunk);
  uint64_t requests() const { return requests_; }
  uint64_t block_accesses() const { return block_accesses_; }
  // "3000/45000/9f1c2a7b3d5e6f80": requests / block accesses / checksum in hex, as results
  // carry it (trace_fingerprint).
  std::string fingerprint() const;

 private:
  uint64_t requests_ = 0, block_accesses_ = 0;
  uint64_t hash_ = 0x6b76706f6c696379;  // "kvpolicy"
};

// The fingerprint of a trace in memory.
std::string trace_fingerprint(const Trace& trace);

}  // namespace kvpolicy
