// What serve mode runs: the trace with each request's answer appended as blocks, so that a
// finished request can leave its whole sequence in the cache and the oracle sees answers too.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "kvpolicy/serve/serve.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy::serve_detail {

struct Workload {
  // Per request: its prompt blocks, then the full blocks of its answer. An answer block's key
  // is the next turn's block at that position when the next turn extends this sequence (it
  // quotes the answer), otherwise a key of its own.
  Trace sequences;
  std::vector<uint32_t> prompt_blocks;
  Oracle oracle;  // over `sequences`, when a policy needs the future
  bool has_oracle = false;

  // Request r at `now` (seconds): its prompt, or with whole_sequence its answer blocks too.
  RequestView view(uint32_t r, double now, bool whole_sequence) const {
    RequestView v = request_view(sequences, r);
    v.time = static_cast<Time>(now * kMicrosPerSecond);
    if (!whole_sequence) v.blocks = v.blocks.first(prompt_blocks[r]);
    return v;
  }
};

// Answers have max(1, output tokens) tokens; with cache_outputs false they get no blocks.
// `arrival_us` are the requests' arrival times in the simulation (the oracle's clock).
Workload make_workload(const Trace& trace, std::span<const Time> arrival_us, bool cache_outputs,
                       bool need_oracle);

// Open-loop arrival times, seconds from the first request (--rate and --time-scale applied).
std::vector<double> arrival_times(const Trace& trace, const ServeOptions& o);

// Every request in arrival order as an offline router and the prefill-work model read it.
std::vector<FutureRequest> future_requests(const Workload& workload,
                                           const std::vector<Time>& arrival_us);

// Blocks a sequence of `tokens` tokens occupies: its prompt blocks, or more as it grows.
inline uint32_t sequence_blocks(uint32_t prompt_blocks, uint64_t tokens, uint32_t block_tokens) {
  uint64_t full = (tokens + block_tokens - 1) / block_tokens;
  return static_cast<uint32_t>(std::max<uint64_t>(prompt_blocks, full));
}

}  // namespace kvpolicy::serve_detail
