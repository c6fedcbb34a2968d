// Helpers the learned policies' and the guards' tests share: a replay's misses with its victims
// checked, one named counter of a policy's stats, and a trace of single-block prompts.
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <string>

#include "kvpolicy/policy/policy.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/trace.h"

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
