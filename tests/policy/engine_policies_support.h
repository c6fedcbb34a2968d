// Replay helpers shared by the tests of the policies the engines ship (slru, priority, hpt,
// wlfu, arc, tlru_tokens): a replay that records victims, and a comparison of two policies'
// victim sequences on random prefix workloads.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/policy/policy.h"
#include "support/random_workload.h"

namespace kvpolicy::testing {

struct VictimRun {
  std::vector<BlockKey> victims;
  std::vector<uint32_t> hits;
};

// Builds a policy for a tree of a capacity (the policy under test, or a reference).
using MakePolicy = std::function<std::unique_ptr<Policy>(const PrefixTree&, size_t capacity)>;

inline MakePolicy registry_policy(const std::string& spec, uint32_t block_tokens = 16) {
  return [spec, block_tokens](const PrefixTree& t, size_t cap) {
    PolicyContext ctx;
    ctx.tree = &t;
    ctx.capacity_blocks = cap;
    ctx.block_tokens = block_tokens;
    return make_policy(parse_policy_spec(spec), ctx);
  };
}

// Replays `trace` with victim checks on (each victim an evictable leaf, named again when asked
// twice).
inline VictimRun replay_victims(const Trace& trace, size_t capacity, const MakePolicy& make) {
  VictimRun out;
  auto tree = std::make_unique<PrefixTree>();
  const PrefixTree& t = *tree;
  auto recorder = std::make_unique<VictimKeyRecorder>(make(t, capacity), t, &out.victims);
  PrefixCache cache(capacity, std::move(recorder), std::move(tree));
  cache.set_checking(true);
  for (size_t r = 0; r < trace.size(); ++r)
    out.hits.push_back(cache.access(request_view(trace, r)).hit_blocks);
  return out;
}

// The random prefix workloads of the reference tests (reference_test.cc), with a priority
// column in {-1, 0, 1, 2} hashed from the index when `priorities` is set.
inline Trace engine_workload(uint64_t seed, bool priorities) {
  Trace t = random_workload({.seed = seed, .requests = 400});
  if (priorities) {
    for (size_t r = 0; r < t.size(); ++r)
      t.priority.push_back(static_cast<int32_t>(mix64(seed * 7919 + r) % 4) - 1);
  }
  return t;
}

// `fast` and `slow` must evict the same blocks in the same order, and hit the same, on every
// workload and capacity (the capacities of reference_test.cc).
inline void expect_same_victims(const std::string& what, const MakePolicy& fast,
                                const MakePolicy& slow, bool priorities = false) {
  for (uint64_t w = 1; w <= 4; ++w) {
    Trace trace = engine_workload(100 + w, priorities);
    size_t unique = count_unique_blocks(trace);
    for (size_t cap : {size_t{3}, size_t{20}, unique / 10, unique / 4}) {
      SCOPED_TRACE(what + " workload " + std::to_string(w) + " capacity " + std::to_string(cap));
      VictimRun a = replay_victims(trace, cap, fast), b = replay_victims(trace, cap, slow);
      ASSERT_GT(b.victims.size(), 0u);
      ASSERT_EQ(a.victims.size(), b.victims.size());
      for (size_t i = 0; i < b.victims.size(); ++i)
        ASSERT_EQ(a.victims[i], b.victims[i]) << "victim " << i << " differs";
      EXPECT_EQ(a.hits, b.hits);
    }
  }
}

}  // namespace kvpolicy::testing
