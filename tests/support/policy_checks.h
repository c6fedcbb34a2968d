// Helpers the learned policies' and the guards' tests share: a replay's misses with its victims
// checked, the keys of a replay's victims in order, one named counter of a policy's stats, and a
// trace of single-block prompts.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/trace.h"
#include "support/random_workload.h"

namespace kvpolicy::testing {

// Misses of `spec` at `cap` blocks; every miss must have been inserted (the bounds rely on it).
inline uint64_t misses(const Trace& trace, const Oracle& oracle, const std::string& spec,
                       size_t cap) {
  ReplayOptions opts;
  opts.check_victims = true;
  ReplayResult r = replay(trace, &oracle, parse_policy_spec(spec), cap, opts);
  EXPECT_EQ(r.uncached_blocks, 0u) << spec;
  return r.block_accesses - r.block_hits;
}

// The keys of the victims, in order, of the policy `make` builds, replayed (victims checked) on
// `trace` at `cap` blocks with the trace's future in its context; `at_end` sees the policy (its
// stats) before it goes.
inline std::vector<BlockKey> victim_keys(
    const Trace& trace, const Oracle& oracle, size_t cap,
    const std::function<std::unique_ptr<Policy>(const PolicyContext&)>& make,
    const std::function<void(const Policy&)>& at_end = {}) {
  auto tree = std::make_unique<PrefixTree>(cap);
  PolicyContext ctx;
  ctx.tree = tree.get();
  ctx.capacity_blocks = cap;
  ctx.block_tokens = trace.block_tokens;
  ctx.future = oracle.view(trace);
  std::vector<BlockKey> victims;
  auto policy = std::make_unique<VictimKeyRecorder>(make(ctx), *tree, &victims);
  PrefixCache cache(cap, std::move(policy), std::move(tree));
  cache.set_checking(true);
  for (size_t r = 0; r < trace.size(); ++r) cache.access(request_view(trace, r));
  if (at_end) at_end(cache.policy());
  return victims;
}

inline double stat(const PolicyStats& s, const std::string& name) {
  for (auto& [k, v] : s)
    if (k == name) return v;
  ADD_FAILURE() << "no stat " << name;
  return -1;
}

// A trace of single-block prompts ("flat paging"), one request per second; letters name items.
inline Trace flat_trace(const std::string& items) {
  Trace t;
  t.block_tokens = 16;
  Time now = 0;
  for (char c : items) {
    uint64_t id = uint64_t(c);
    t.add_request(now, std::span<const uint64_t>(&id, 1), 16, 1);
    now += kMicrosPerSecond;
  }
  return t;
}

}  // namespace kvpolicy::testing
