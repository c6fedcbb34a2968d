// Seeded random prefix-sharing workloads and small replay helpers for policy tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy::testing {

struct RandomWorkloadOptions {
  uint64_t seed = 1;
  uint32_t requests = 300;
  uint32_t system_prompts = 3;       // shared prefixes that many prompts start with
  uint32_t max_system_blocks = 6;    // each is 1..this many blocks
  uint32_t sessions = 8;             // conversations open at once
  uint32_t max_new_blocks = 5;       // a turn, branch or one-shot adds 1..this many fresh blocks
  uint32_t max_session_blocks = 40;  // a longer conversation ends and a new one takes its slot
  double p_repeat = 0.1;             // exact repeat of an earlier prompt
  double p_branch = 0.15;            // an earlier prompt cut at a random block, then fresh blocks
  double p_oneshot = 0.15;           // a system prompt (or none) then fresh blocks, no session
  // Otherwise: the next turn of a random open conversation (its last prompt + fresh blocks).
  // A continuation column (LPC's classifier scores): per request a value in [0, 1) hashed
  // from the seed and the index, apart from the draws above (so they stay as they were).
  bool continuation = true;
};

// Deterministic for the options (no std distributions, whose output differs between libraries).
Trace random_workload(const RandomWorkloadOptions& options);

// Request r of `trace` as the cache sees it (the library's, under the name tests use).
using kvpolicy::request_view;

// Per request, the blocks an infinite cache would hit: the longest prefix seen before.
std::vector<uint32_t> infinite_cache_hits(const Trace& trace);

// Longest prompt of the trace, in blocks.
uint32_t longest_prompt(const Trace& trace);

// Forwards to a policy and appends the key of every victim that leaves (evicted or demoted:
// the commit of a victim() choice) to `out`.
class VictimKeyRecorder final : public ForwardingPolicy {
 public:
  VictimKeyRecorder(std::unique_ptr<Policy> inner, const PrefixTree& tree,
                    std::vector<BlockKey>* out)
      : ForwardingPolicy(std::move(inner)), tree_(tree), out_(out) {}
  void on_removed(NodeId n, Removal why) override {
    if (is_victim(why)) out_->push_back(tree_.key(n));
    inner().on_removed(n, why);
  }

 private:
  const PrefixTree& tree_;
  std::vector<BlockKey>* out_;
};

// Drives a PrefixCache with hand-written prompts of raw block ids, chained as a trace chains
// them ({1, 2} and {1, 3} share block 1), and records every victim's raw-id path.
class ScriptedCache {
 public:
  ScriptedCache(const std::string& policy, size_t capacity, uint64_t seed = 1);
  AccessResult request(const std::vector<uint64_t>& ids);
  // Whether the prompt {ids...} is cached down to its last block.
  bool cached(const std::vector<uint64_t>& ids) const;
  // Victims in order, each as the raw-id path of the evicted block.
  const std::vector<std::vector<uint64_t>>& victims() const { return victims_; }
  const PrefixTree& tree() const { return cache_->tree(); }

 private:
  class Recorder;
  std::vector<std::vector<uint64_t>> victims_;
  std::vector<std::pair<BlockKey, std::vector<uint64_t>>> paths_;  // every key seen
  std::unique_ptr<PrefixCache> cache_;
  RequestIndex next_ = 0;
};

}  // namespace kvpolicy::testing
