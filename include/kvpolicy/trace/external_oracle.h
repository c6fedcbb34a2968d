// The oracle of a trace too large to hold (`simulate --stream` with an offline policy), in
// external memory, as libCacheSim's oracleGeneral carries next-access times: a forward pass over
// the stream writes every access's key and every request's length to temporary files, a reverse
// pass over them writes each access's next use, and the replay reads the result back mapped
// read-only, letting go of the pages behind it. Memory: a map of the unique keys during the
// reverse pass; then only the pages near the replay's position.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kvpolicy/core/oracle_view.h"
#include "kvpolicy/trace/trace_stream.h"

namespace kvpolicy {

class ExternalOracle {
 public:
  // Reads `stream` to its end. Temporary files go to `temp_dir` (empty: $TMPDIR or /tmp) and are
  // removed before this returns (the mappings keep their data until destruction).
  ExternalOracle(TraceStream& stream, const std::string& temp_dir = "");
  ~ExternalOracle();
  ExternalOracle(const ExternalOracle&) = delete;
  ExternalOracle& operator=(const ExternalOracle&) = delete;

  // next_request, next_in_session, request_time and prompt_tokens as Oracle::view gives them;
  // prev_request is empty (no policy reads it).
  OracleView view() const;
  const StreamFacts& facts() const { return facts_; }
  // A replay's position, up to which it has let the pages go.
  struct Cursor {
    uint64_t request = 0, access = 0;
  };
  // Drops the mapped pages from the cursor up to request `request` and access `access` (where a
  // replay has got to), and moves the cursor there. A page touched again is read back from the
  // file, so this changes memory, never results; several replays may share one oracle.
  void release(Cursor& cursor, uint64_t request, uint64_t access) const;

 private:
  struct Mapping {
    void* data = nullptr;
    size_t bytes = 0;
  };
  Mapping map_file(int fd, const std::string& path, size_t bytes);
  void unmap(Mapping& m);
  StreamFacts facts_;
  Mapping next_request_, next_in_session_, request_time_, prompt_tokens_;
};

}  // namespace kvpolicy
