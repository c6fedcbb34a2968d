// One replay's cache and counters, fed one request at a time: what the in-memory replay
// (replay.cc) and the streamed one (replay_stream.cc) share, so both give the same result.
// Internal to src/sim.
#pragma once

#include <chrono>
#include <vector>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/sim/ttft_tally.h"

namespace kvpolicy {

class ReplayRun {
 public:
  ReplayRun(const std::string& trace_name, uint32_t block_tokens, const OracleView* future,
            const PolicySpec& spec, size_t capacity_blocks, const ReplayOptions& opts);

  [[gnu::always_inline]] void access(const RequestView& view) {
    AccessResult a = cache_.access(view);
    res_.block_hits += a.hit_blocks;
    res_.evictions += a.evictions;
    res_.dram_hits += a.dram_hit_blocks;
    res_.demotions += a.demotions;
    res_.offload_skipped_priority += a.offload_skipped;
    res_.uncached_blocks += view.blocks.size() - a.hit_blocks - a.inserted_blocks;
    res_.token_hits +=
        std::min<uint64_t>(uint64_t{a.hit_blocks} * block_tokens_, view.prompt_tokens);
    res_.prompt_tokens += view.prompt_tokens;
    res_.block_accesses += view.blocks.size();
    ++res_.requests;
    tally_.add(view.prompt_tokens, a.hit_blocks, a.dram_hit_blocks);
    if (opts_.ttft_ms)
      opts_.ttft_ms->push_back(replay_ttft_ms(cost_, view.prompt_tokens, a.hit_blocks,
                                              a.dram_hit_blocks, block_tokens_));
  }
  // Starts the clocks of the request loop.
  void start();
  // Stops them and fills in the rates, memory and TTFT metrics.
  ReplayResult finish();

 private:
  const ReplayOptions& opts_;
  const uint32_t block_tokens_;
  const CostModel cost_;
  PrefixCache cache_;
  ReplayResult res_;
  TtftTally tally_;
  std::chrono::steady_clock::time_point start_;
  double start_cpu_ = 0;
};

}  // namespace kvpolicy
