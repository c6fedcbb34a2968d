// Session inference from shared prompt prefixes, for traces that carry no session ids.
#include <algorithm>

#include "kvpolicy/core/key_map.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy {

size_t infer_sessions(Trace& trace, uint32_t min_parent_blocks) {
  const size_t n = trace.size();
  const uint32_t B = std::max<uint32_t>(trace.block_tokens, 1);
  // Chained keys name a whole prefix, so "r starts with all full blocks of q" is "r holds the key
  // of q's last full block". The map keeps the latest q per such key.
  // Grown as parents come, not sized by the requests: a trace of one-block requests (libCacheSim's
  // formats) has none, and its lookups then stay in a table that fits in cache.
  KeyMap last_full;
  SessionId next_session = 0;
  size_t continued = 0;
  for (size_t r = 0; r < n; ++r) {
    auto prompt = trace.prompt(r);
    const uint32_t* parent = nullptr;
    // Deepest match first: it is the candidate with the most full blocks.
    if (last_full.size())
      for (size_t i = prompt.size(); i-- > 0 && !parent;) parent = last_full.find(prompt[i]);
    if (parent) {
      trace.session[r] = trace.session[*parent];
      trace.turn[r] = trace.turn[*parent] + 1;
      ++continued;
    } else {
      trace.session[r] = next_session++;
      trace.turn[r] = 1;
    }
    size_t full =
        std::min<size_t>(std::max<uint32_t>(trace.prompt_tokens[r] / B, 1), prompt.size());
    if (full >= std::max<uint32_t>(min_parent_blocks, 1))
      last_full.get_or_insert(prompt[full - 1], 0) = static_cast<uint32_t>(r);
  }
  return continued;
}

}  // namespace kvpolicy
