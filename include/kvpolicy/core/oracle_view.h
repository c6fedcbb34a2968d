// The trace's future as policies and predictors may read it: the next use of every block access
// and of every session, and the times and prompt lengths of the requests they point to. Offline
// policies (Belady, the oracle T-LRU variants) and the oracle predictors get this view, never the
// trace itself. It is a set of spans over arrays the trace layer owns (Oracle::view).
#pragma once

#include <cstdint>
#include <span>

#include "kvpolicy/core/types.h"

namespace kvpolicy {

struct OracleView {
  static constexpr uint32_t kNoNext = UINT32_MAX;

  // Per flat block access: the next request whose prompt holds the same key (kNoNext if none).
  std::span<const uint32_t> next_request;
  // Per request: the next request of the same session (kNoNext if none).
  std::span<const uint32_t> next_in_session;
  // Per request: arrival time and prompt length in tokens.
  std::span<const Time> request_time;
  std::span<const uint32_t> prompt_tokens;
  uint32_t longest_prompt_blocks = 0;

  size_t requests() const { return request_time.size(); }
  // Time of the next use of a block access (kNever if none).
  Time next_time(uint64_t access) const {
    uint32_t r = next_request[access];
    return r == kNoNext ? kNever : request_time[r];
  }
};

}  // namespace kvpolicy
