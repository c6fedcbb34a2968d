// The vocabulary a cache driver and its policies share: what one request looks like, why a
// policy hears of a block, and why a block leaves a tier.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kvpolicy/core/types.h"

namespace kvpolicy {

// Why a policy hears of a block in on_access. Everything but kReused means the block is new to
// this policy's tier, so whatever the policy knew under that node id belongs to another block.
enum class AccessKind : uint8_t {
  kReused,    // a prompt block found cached in this tier
  kInserted,  // a prompt block just computed and placed in this tier
  kPromoted,  // moved up into this tier (a DRAM hit brought back to HBM)
  kDemoted,   // moved down into this tier (an HBM victim kept in DRAM)
};

// Why a block leaves a policy's tier (on_removed). kEvicted and kDemoted follow the policy's own
// victim() choice: they are its commit. kPromoted and kDropped never do; the block is pinned
// (not a candidate) when they are told.
enum class Removal : uint8_t {
  kEvicted,   // dropped from the cache
  kDemoted,   // moved down to the next tier (HBM -> DRAM)
  kPromoted,  // moved up to the tier above (DRAM -> HBM): a hit, not a victim
  kDropped,   // removed by the cache's owner (a failed store, an outside deletion): its id is free
};

// Whether the removal commits the policy's own victim() choice.
constexpr bool is_victim(Removal why) {
  return why == Removal::kEvicted || why == Removal::kDemoted;
}

struct RequestView;

// A retention hint on a range of a request's blocks (TensorRT-LLM's TokenRangeRetentionConfig,
// in blocks): while the block is cached it has `priority` (0-100; a block without a hint has the
// default, 35), until `duration` after it is released, when it drops to the default. Where
// ranges of one request overlap, the later one holds. docs/policies.md, "Retention hints".
struct RetentionHint {
  static constexpr uint32_t kToEnd = UINT32_MAX;  // end_block: to the end of the sequence
  static constexpr Time kForever = kNever;        // duration: never drops to the default
  uint32_t first_block = 0;
  uint32_t end_block = kToEnd;  // exclusive
  int32_t priority = 35;
  Time duration = kForever;
  bool operator==(const RetentionHint&) const = default;
};

// Told to a policy on every block access; the cache fills it from the request.
struct AccessInfo {
  Time now = 0;
  RequestIndex req = 0;  // index in the trace
  // Flat index of this block access in the trace (oracle lookups); for a demoted block, the
  // index of its last access.
  uint64_t access = 0;
  SessionId session = kNoSession;
  uint32_t turn = 1;
  CategoryId category = 0;
  uint32_t position = 0;  // block index in the prompt, 0 = first
  uint32_t prompt_blocks = 0;
  // The request's priority (RequestView::priority): higher is kept longer.
  int32_t priority = 0;
  AccessKind kind = AccessKind::kReused;

  bool reused() const { return kind == AccessKind::kReused; }
  // The fields every block of `r` shares (position, access and kind are set per block).
  static AccessInfo of_request(const RequestView& r);
};

// One request as the cache sees it.
struct RequestView {
  RequestIndex index = 0;
  Time time = 0;
  SessionId session = kNoSession;
  uint32_t turn = 1;
  CategoryId category = 0;
  uint32_t prompt_tokens = 0;
  uint32_t output_tokens = 0;
  uint64_t first_access = 0;  // flat index of the first prompt block
  std::span<const BlockKey> blocks;
  // The trace's continuation probability for this request (Trace::continuation); < 0 when the
  // trace carries none.
  float continuation = -1;
  // The request's priority, higher = kept longer (SGLang's and TensorRT-LLM's request
  // priority; Trace::priority); 0 when the trace carries none. Only the `priority` policy reads it.
  int32_t priority = 0;
  // Retention hints of this request (Trace::hints); empty when it carries none.
  std::span<const RetentionHint> hints = {};
};

inline AccessInfo AccessInfo::of_request(const RequestView& r) {
  AccessInfo info;
  info.now = r.time;
  info.req = r.index;
  info.session = r.session;
  info.turn = r.turn;
  info.category = r.category;
  info.prompt_blocks = static_cast<uint32_t>(r.blocks.size());
  info.priority = r.priority;
  return info;
}

// Named counters a policy or predictor reports after a run (e.g. predictor calls, phases).
using PolicyStats = std::vector<std::pair<std::string, double>>;

}  // namespace kvpolicy
