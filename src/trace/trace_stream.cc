#include "kvpolicy/trace/trace_stream.h"

#include <algorithm>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/key_map.h"
#include "kvpolicy/trace/fingerprint.h"

namespace kvpolicy {

std::unique_ptr<TraceStream> open_trace_stream(const std::string& path, const std::string& format,
                                               const ReadOptions& opts) {
  require_trace_file(path);
  std::string fmt = format.empty() || format == "auto" ? detect_format(path) : format;
  const TraceFormat& f = TraceFormatRegistry::instance().get(fmt);
  if (!f.open_stream)
    throw ConfigError("the " + fmt +
                      " format cannot be streamed (native, oracle-general and mooncake can); "
                      "convert it with `kvpolicy trace convert --to native` first");
  return f.open_stream(path, opts);
}

StreamFacts stream_facts(TraceStream& stream) {
  StreamFacts f;
  KeyMap seen;  // grows with the unique keys: a trace's size is not known before its end
  TraceChecksum checksum;
  Trace chunk;
  while (stream.next(chunk, kStreamChunkRequests)) {
    checksum.add(chunk);
    f.name = chunk.name;
    f.block_tokens = chunk.block_tokens;
    f.requests += chunk.size();
    f.block_accesses += chunk.num_block_accesses();
    for (size_t r = 0; r < chunk.size(); ++r) {
      f.prompt_tokens += chunk.prompt_tokens[r];
      f.longest_prompt_blocks = std::max(f.longest_prompt_blocks, chunk.prompt_blocks(r));
    }
    for (BlockKey k : chunk.blocks) seen.get_or_insert(k, 0);
  }
  f.unique_blocks = seen.size();
  f.fingerprint = checksum.fingerprint();
  return f;
}

std::string stream_fingerprint(TraceStream& stream) {
  TraceChecksum checksum;
  Trace chunk;
  while (stream.next(chunk, kStreamChunkRequests)) checksum.add(chunk);
  return checksum.fingerprint();
}

}  // namespace kvpolicy
