#include "kvpolicy/trace/fingerprint.h"

#include <fmt/format.h>

#include "kvpolicy/core/types.h"

namespace kvpolicy {

void TraceChecksum::add(const Trace& chunk) {
  auto mix = [this](uint64_t x) { hash_ = mix64(hash_ ^ x) + 0x9e3779b97f4a7c15ULL; };
  for (size_t r = 0; r < chunk.size(); ++r) {
    mix(static_cast<uint64_t>(chunk.time[r]));
    mix(chunk.prompt_tokens[r]);
    mix(r < chunk.output_tokens.size() ? chunk.output_tokens[r] : 0);
    mix(chunk.block_offset[r + 1] - chunk.block_offset[r]);
    for (uint64_t a = chunk.block_offset[r]; a < chunk.block_offset[r + 1]; ++a)
      mix(chunk.blocks[a]);
    // Retention hints change every result, so rows with other hints never pass for these (a
    // trace without hints keeps the fingerprint it always had).
    if (chunk.has_hints()) {
      mix(0x68696e7473ULL + chunk.hints_of(r).size());
      for (const RetentionHint& h : chunk.hints_of(r)) {
        mix(h.first_block);
        mix(h.end_block);
        mix(static_cast<uint64_t>(h.priority));
        mix(static_cast<uint64_t>(h.duration));
      }
    }
  }
  requests_ += chunk.size();
  block_accesses_ += chunk.num_block_accesses();
}

std::string TraceChecksum::fingerprint() const {
  return fmt::format("{}/{}/{:016x}", requests_, block_accesses_, hash_);
}

std::string trace_fingerprint(const Trace& trace) {
  TraceChecksum sum;
  sum.add(trace);
  return sum.fingerprint();
}

}  // namespace kvpolicy
