// Summary statistics of a trace: sessions, turns, blocks, prompt lengths, rate.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

// Mean and nearest-rank percentiles of a count.
struct Distribution {
  double mean = 0;
  uint64_t p50 = 0, p90 = 0, p99 = 0, max = 0;
  std::string to_json() const;
};
Distribution distribution(std::vector<uint64_t> values);

struct TraceStats {
  size_t requests = 0;
  uint32_t block_tokens = 0;
  size_t requests_with_session = 0;
  size_t sessions = 0;
  size_t multi_turn_sessions = 0;
  std::array<uint64_t, 5> turns{};  // requests of turn 1, 2, 3, 4, 5+
  size_t later_turn_requests = 0;
  size_t block_accesses = 0;
  size_t unique_blocks = 0;
  double infinite_hit_rate = 0;
  Distribution prompt_tokens, prompt_blocks;
  double output_tokens_mean = 0;
  double duration_s = 0;
  double request_rate = 0;  // requests per second
  // Burstiness: the share of requests arriving in the busiest tenth of the span (a window of
  // span / 10, half-open; 0.1 for even arrivals, 1 when all arrive at once), and the coefficient
  // of variation of the gaps between arrivals (0 for even arrivals, 1 for Poisson's). A trace
  // replayed at a mean rate of X % of capacity runs at about 10 x share x X % in that tenth.
  double peak_tenth_share = 0;
  double gap_cv = 0;
  std::vector<std::pair<std::string, uint64_t>> categories;  // name, requests

  // Extra facts of how the trace was loaded go in `extra_json` (e.g. "load_seconds":0.1).
  std::string to_json(const std::string& extra_json = "") const;
};

TraceStats trace_stats(const Trace& trace);

}  // namespace kvpolicy
