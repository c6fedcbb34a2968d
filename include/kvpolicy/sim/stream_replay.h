// Replay from a stream (`kvpolicy simulate --stream`): each configuration reads the trace a
// chunk at a time, so memory is the cache plus a chunk (and, for offline policies, the pages of
// the external oracle near the replay's position). Results equal replay()'s on the same trace.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "kvpolicy/sim/sweep.h"
#include "kvpolicy/trace/external_oracle.h"
#include "kvpolicy/trace/trace_stream.h"

namespace kvpolicy {

using StreamOpener = std::function<std::unique_ptr<TraceStream>()>;

// One configuration over a fresh stream from `open`. `oracle` is needed (non-null) when the
// policy reads the future; it must come from the same stream. `requests` (0 = unknown) only
// scales the progress callback.
ReplayResult replay_stream(const StreamOpener& open, const ExternalOracle* oracle,
                           const PolicySpec& policy, size_t capacity_blocks,
                           const ReplayOptions& opts = {}, uint64_t requests = 0);

// The cells of a sweep over streams: one stream per configuration. `facts` name the trace;
// unique_blocks = 0 when not counted (the infinite-cache hit rate is then reported as 0).
// `oracle` (which must outlive the cells) is built by the caller (once) when a configuration
// needs the future.
std::unique_ptr<ReplayCells> stream_cells(const StreamOpener& open, const StreamFacts& facts,
                                          const ExternalOracle* oracle,
                                          const std::vector<SweepConfig>& configs);

// Whether any configuration (HBM or DRAM policy) reads the future.
bool sweep_needs_future(const std::vector<SweepConfig>& configs);

}  // namespace kvpolicy
