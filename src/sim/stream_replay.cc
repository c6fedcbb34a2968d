#include "kvpolicy/sim/stream_replay.h"

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/fingerprint.h"
#include "replay_run.h"

namespace kvpolicy {

ReplayResult replay_stream(const StreamOpener& open, const ExternalOracle* oracle,
                           const PolicySpec& policy, size_t capacity_blocks,
                           const ReplayOptions& opts, uint64_t requests) {
  std::unique_ptr<TraceStream> stream = open();
  Trace chunk;
  bool more = stream->next(chunk, kStreamChunkRequests);
  OracleView future;
  if (oracle) future = oracle->view();
  ReplayRun run(chunk.name, chunk.block_tokens, oracle ? &future : nullptr, policy, capacity_blocks,
                opts);
  ExternalOracle::Cursor released;
  uint64_t first_request = 0, first_access = 0;
  TraceChecksum checksum;
  run.start();
  while (more) {
    checksum.add(chunk);
    if (chunk.has_hints() && !opts.hints)
      throw ConfigError("trace '" + chunk.name +
                        "' carries retention hints, which a streamed replay does not follow: "
                        "replay it without --stream");
    for (size_t r = 0; r < chunk.size(); ++r) {
      RequestView view = request_view(chunk, r);
      view.index = static_cast<RequestIndex>(first_request + r);
      view.first_access += first_access;
      run.access(view);
    }
    // The oracle's pages before this chunk are not needed again (a policy reads the next use of
    // the access it is told of; one that looks further back reads them back from the file).
    if (oracle) oracle->release(released, first_request, first_access);
    first_request += chunk.size();
    first_access += chunk.num_block_accesses();
    if (opts.progress && requests) opts.progress(double(first_request) / double(requests));
    more = stream->next(chunk, kStreamChunkRequests);
  }
  if (oracle && first_request != future.requests())
    throw Error("stream replay: the trace changed since its oracle was built");
  ReplayResult r = run.finish();
  r.trace_fingerprint = checksum.fingerprint();
  r.assumptions = chunk.assumptions.model;  // every chunk carries the trace's
  return r;
}

bool sweep_needs_future(const std::vector<SweepConfig>& configs) {
  for (auto& c : configs)
    if (needs_future(c.policy) ||
        (c.options.dram_capacity_blocks > 0 && needs_future(c.options.dram_policy)))
      return true;
  return false;
}

std::unique_ptr<ReplayCells> stream_cells(const StreamOpener& open, const StreamFacts& facts,
                                          const ExternalOracle* oracle,
                                          const std::vector<SweepConfig>& configs) {
  if (sweep_needs_future(configs) && !oracle)
    throw ConfigError("stream replay: an offline policy needs the external oracle");
  double infinite =
      facts.unique_blocks && facts.block_accesses
          ? double(facts.block_accesses - facts.unique_blocks) / double(facts.block_accesses)
          : 0;
  return std::make_unique<ReplayCells>(
      facts.name, facts.fingerprint, facts.block_tokens, infinite, facts.block_accesses, configs,
      [open, oracle, requests = facts.requests](const SweepConfig& c, const ReplayOptions& opts) {
        return replay_stream(open, oracle, c.policy, c.capacity_blocks, opts, requests);
      });
}

}  // namespace kvpolicy
