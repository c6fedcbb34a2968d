// Miss-ratio curves for sizing: LRU's hit rate and replay TTFT at every capacity from one pass
// (Mattson's stack algorithm on the prefix tree), and the smallest capacity that reaches a
// target hit rate, exact for LRU and by bisection over replays for any other policy.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

// The stack distance of a block never seen before: it misses at every capacity.
inline constexpr uint32_t kColdMiss = UINT32_MAX;

// Per flat block access (trace.blocks order): LRU's stack distance when its request arrives,
// 1-based: the number of distinct blocks at least as recent as it, with a request's blocks
// ordered as lru.cc orders them (the first block most recent, the deepest least). LRU on the
// prefix tree keeps exactly the `capacity` most recent blocks (a parent is always more recent
// than its children, so the least recent block is an unpinned leaf), so an access hits at
// capacity C iff its distance <= C; this holds for requests longer than C too (replay then
// caches their first C blocks, which are also the C most recent). O(log accesses) per access
// with a Fenwick tree over access stamps. Throws Error if the keys are not chained (a key
// repeated within a request, or a request whose distances do not rise along the prompt), since
// the prefix tree's replay then differs.
std::vector<uint32_t> lru_stack_distances(const Trace& trace);

// LRU's results at each capacity (in blocks) from the distances, with the same fields a replay
// with `opts` gives: block and token hits, evictions, uncached blocks, and the TTFT metrics
// through the same cost model (replay_ttft_ms; opts.ttft_ms and progress are not used). Timing
// and memory fields are left at 0. Equal to
// replay(trace, nullptr, {"lru", ""}, C, opts) for one tier (tested).
std::vector<ReplayResult> lru_curve(const Trace& trace, std::span<const uint32_t> distances,
                                    std::span<const size_t> capacities,
                                    const ReplayOptions& opts = {});

// The smallest capacity in blocks at which LRU's block hit rate (hits / block accesses) is at
// least `target` (in [0, 1]); nullopt when even an infinite cache misses it. Exact: LRU's hit
// count never falls as capacity grows.
std::optional<size_t> lru_capacity_for_hit_rate(std::span<const uint32_t> distances, double target);

// The smallest capacity found at which a replayed policy reaches `target`.
struct TargetSearch {
  std::optional<size_t> capacity_blocks;  // nullopt: no point tried reached it
  double block_hit_rate = 0;              // at capacity_blocks (or the best point tried)
  size_t replays = 0;                     // extra replays the bisection ran
  // The curve's points were not monotone in capacity (a larger cache hit less), so a smaller
  // capacity than the one found may reach the target elsewhere.
  bool non_monotone = false;
};

// Bisection between the first of the curve's points (sorted by capacity) that reaches `target`
// and the point before it (or 0 blocks), with extra replays, until the bracket is at most
// `tolerance` of its upper end wide (or one block). Hit rate is not monotone in capacity for
// every policy: the answer is the smallest capacity found this way, not a proven minimum.
// `oracle` is needed for policies that read the future.
TargetSearch search_capacity_for_hit_rate(const Trace& trace, const Oracle* oracle,
                                          const PolicySpec& policy,
                                          std::span<const ReplayResult> curve, double target,
                                          const ReplayOptions& opts, double tolerance = 0.001);

}  // namespace kvpolicy
