#include "kvpolicy/sim/mrc.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/key_map.h"
#include "kvpolicy/sim/tail.h"

namespace kvpolicy {
namespace {

// Counts of live access stamps, with prefix sums in O(log n).
class Fenwick {
 public:
  explicit Fenwick(size_t n) : tree_(n + 1, 0) {}
  void add(size_t i, int32_t delta) {
    for (++i; i < tree_.size(); i += i & (~i + 1)) tree_[i] += delta;
  }
  // Live stamps in [0, i).
  uint32_t prefix(size_t i) const {
    uint32_t s = 0;
    for (; i > 0; i -= i & (~i + 1)) s += tree_[i];
    return s;
  }

 private:
  std::vector<uint32_t> tree_;
};

[[noreturn]] void not_chained(const Trace& trace, size_t r, const char* why) {
  throw Error(fmt::format(
      "trace '{}': request {} {}; the LRU curve needs chained block keys (each key naming its "
      "whole prefix, as every reader makes them)",
      trace.name, r, why));
}

}  // namespace

std::vector<uint32_t> lru_stack_distances(const Trace& trace) {
  const size_t accesses = trace.num_block_accesses();
  // Stamps are uint32 (KeyMap's values), one per access.
  if (accesses >= kColdMiss)
    throw Error(fmt::format("trace '{}': {} block accesses, more than the LRU curve's 2^32 - 1",
                            trace.name, accesses));
  std::vector<uint32_t> distance(accesses, kColdMiss);
  KeyMap stamp_of(accesses / 2 + 16);  // key -> its latest stamp + 1 (0: never seen)
  Fenwick live(accesses);
  uint32_t live_count = 0;
  uint32_t next_stamp = 0;
  for (size_t r = 0; r < trace.size(); ++r) {
    const uint64_t begin = trace.block_offset[r];
    const uint32_t n = trace.prompt_blocks(r);
    // Distances first, all against the order before this request (its hits are decided
    // before the walk moves anything).
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t* s = stamp_of.find(trace.blocks[begin + i]);
      if (s && *s != 0) {
        uint32_t stamp = *s - 1;
        distance[begin + i] = live_count - live.prefix(stamp);
      }
      if (i > 0 && distance[begin + i] != kColdMiss &&
          distance[begin + i] <= distance[begin + i - 1])
        not_chained(trace, r, "holds a block seen before after one more recent or never seen");
    }
    // Then the new order: the first block most recent, the deepest least (lru.cc places a
    // request's path deepest-first), so block i gets stamp next + n - 1 - i.
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t& s = stamp_of.get_or_insert(trace.blocks[begin + i], 0);
      if (s != 0 && s - 1 >= next_stamp) not_chained(trace, r, "repeats a block key");
      if (s != 0) {
        live.add(s - 1, -1);
      } else {
        ++live_count;
      }
      s = next_stamp + (n - 1 - i) + 1;
      live.add(s - 1, +1);
    }
    next_stamp += n;
  }
  return distance;
}

std::vector<ReplayResult> lru_curve(const Trace& trace, std::span<const uint32_t> distances,
                                    std::span<const size_t> capacities, const ReplayOptions& opts) {
  if (distances.size() != trace.num_block_accesses())
    throw Error("lru_curve: the distances are not the trace's");
  const CostModel cost = replay_cost_model(trace, opts);
  const TraceFacts facts = trace_facts(trace);
  const uint64_t B = trace.block_tokens;
  const size_t n = trace.size();
  std::vector<ReplayResult> out;
  std::vector<double> ttft(n);
  for (size_t capacity : capacities) {
    if (capacity == 0) throw ConfigError("cache capacity must be at least one block");
    ReplayResult res;
    res.trace = trace.name;
    res.policy = "lru";
    res.capacity_blocks = capacity;
    res.seed = opts.seed;
    res.requests = n;
    res.block_accesses = facts.block_accesses;
    res.prompt_tokens = facts.prompt_tokens;
    res.infinite_hit_rate = facts.infinite_hit_rate;
    uint64_t inserted = 0;
    for (size_t r = 0; r < n; ++r) {
      auto d = distances.subspan(trace.block_offset[r], trace.prompt_blocks(r));
      // Distances rise along a prompt (checked when computed): the hits are a prefix.
      uint64_t hits = std::upper_bound(d.begin(), d.end(),
                                       uint32_t(std::min<size_t>(capacity, kColdMiss - 1))) -
                      d.begin();
      uint64_t blocks = d.size();
      res.block_hits += hits;
      // Replay inserts misses until the cache holds the request's first `capacity` blocks,
      // which it pins; the rest stays uncached.
      uint64_t kept = std::min<uint64_t>(blocks, capacity);
      inserted += kept - hits;
      res.uncached_blocks += blocks - kept;
      res.token_hits += std::min<uint64_t>(hits * B, trace.prompt_tokens[r]);
      ttft[r] = replay_ttft_ms(cost, trace.prompt_tokens[r], static_cast<uint32_t>(hits), 0,
                               trace.block_tokens);
    }
    // The cache ends holding min(capacity, unique) blocks; everything else inserted was evicted.
    res.evictions = inserted - std::min<uint64_t>(capacity, facts.unique_blocks);
    res.block_hit_rate = res.block_accesses ? double(res.block_hits) / res.block_accesses : 0;
    res.hbm_hit_rate = res.block_hit_rate;
    res.token_hit_rate = res.prompt_tokens ? double(res.token_hits) / res.prompt_tokens : 0;
    TailMetrics tail = tail_metrics(ttft, opts.xi_ms, opts.slo_ms);
    res.cost_model = cost.label();
    set_tail_metrics(res, tail);
    out.push_back(std::move(res));
  }
  return out;
}

namespace {

// The fewest hits out of `accesses` whose rate is >= target, as the rate is computed.
uint64_t hits_needed(double target, uint64_t accesses) {
  auto k = static_cast<uint64_t>(std::ceil(target * double(accesses)));
  while (k > 0 && double(k - 1) / double(accesses) >= target) --k;
  while (k <= accesses && double(k) / double(accesses) < target) ++k;
  return k;
}

}  // namespace

std::optional<size_t> lru_capacity_for_hit_rate(std::span<const uint32_t> distances,
                                                double target) {
  if (!(target >= 0 && target <= 1)) throw ConfigError("target hit rate must be in [0, 1]");
  if (distances.empty()) return target <= 0 ? std::optional<size_t>(1) : std::nullopt;
  uint64_t k = hits_needed(target, distances.size());
  if (k == 0) return 1;        // a cache holds at least one block
  std::vector<uint32_t> hits;  // the capacity of the k-th hit is the k-th smallest distance
  hits.reserve(distances.size());
  for (uint32_t d : distances)
    if (d != kColdMiss) hits.push_back(d);
  if (k > hits.size()) return std::nullopt;
  std::nth_element(hits.begin(), hits.begin() + (k - 1), hits.end());
  return hits[k - 1];
}

TargetSearch search_capacity_for_hit_rate(const Trace& trace, const Oracle* oracle,
                                          const PolicySpec& policy,
                                          std::span<const ReplayResult> curve, double target,
                                          const ReplayOptions& opts, double tolerance) {
  TargetSearch out;
  size_t first = curve.size();
  for (size_t i = 0; i < curve.size(); ++i) {
    if (i > 0 && curve[i].block_hit_rate < curve[i - 1].block_hit_rate) out.non_monotone = true;
    if (first == curve.size() && curve[i].block_hit_rate >= target) first = i;
    out.block_hit_rate = std::max(out.block_hit_rate, curve[i].block_hit_rate);
  }
  if (first == curve.size()) return out;
  // A cache of 0 blocks hits nothing: the bracket below the first point.
  size_t lo = first > 0 ? curve[first - 1].capacity_blocks : 0;
  size_t hi = curve[first].capacity_blocks;
  double hi_rate = curve[first].block_hit_rate;
  auto wide = [&] {
    return hi - lo > std::max<size_t>(1, static_cast<size_t>(std::ceil(tolerance * hi)));
  };
  while (wide()) {
    size_t mid = lo + (hi - lo) / 2;
    ReplayResult r = replay(trace, oracle, policy, mid, opts);
    ++out.replays;
    if (r.block_hit_rate >= target) {
      hi = mid;
      hi_rate = r.block_hit_rate;
    } else {
      lo = mid;
    }
  }
  out.capacity_blocks = hi;
  out.block_hit_rate = hi_rate;
  return out;
}

}  // namespace kvpolicy
