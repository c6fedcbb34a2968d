// LARU with carry=evidence (docs/policies.md, "carry=evidence"): the phase-start rule on
// hand-made sequences and on Mooncake; 1-consistency on random workloads and the paper's O(k)
// bound under adversarial predictions are laru_test.cc's tests, run with this variant too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/predict/predictor.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/trace.h"
#include "support/policy_checks.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::flat_trace;
using testing::misses;
using testing::random_workload;
using testing::stat;

PolicyStats run_stats(const Trace& t, const std::string& spec, size_t cap) {
  Oracle oracle = compute_oracle(t);
  ReplayOptions opts;
  opts.check_victims = true;
  return replay(t, &oracle, parse_policy_spec(spec), cap, opts).policy_stats;
}

// k = 4, adversarial predictions (P = -next use): "abcdeafedc" is laru_test.cc's
// LambdaHalvesOnPredictionInducedMissesAndLimitsCandidates. Phase 1 makes 2 prediction
// evictions (r4, r6), both come back as prediction-induced misses (r5, r8): e = 1, so phase 2
// (from r9) starts at (1 * 4^-1)^0.9 = 0.287 instead of 1, and makes no prediction eviction
// (l = max(floor(0.287 * 4), 1) = 1). "ghij" ends phase 2, which was clean for lack of evidence
// (e = 0): phase 3 starts at 0.287^0.9, trust recovering.
TEST(LaruCarry, PhaseWithInducedMissesStartsTheNextDistrustful) {
  const double w = 0.9, lambda2 = std::pow(0.25, w);
  PolicyStats st =
      run_stats(flat_trace("abcdeafedc"), "laru:predictor=noisy,p=1,carry=evidence", 4);
  EXPECT_EQ(stat(st, "phases"), 2);
  EXPECT_EQ(stat(st, "prediction_induced_misses"), 2);
  EXPECT_EQ(stat(st, "prediction_evictions"), 2);  // r4, r6; r9 is LRU's (l = 1)
  EXPECT_DOUBLE_EQ(stat(st, "lambda"), lambda2);
  EXPECT_EQ(stat(st, "distrusting_phases"), 1);

  st = run_stats(flat_trace("abcdeafedcghij"), "laru:predictor=noisy,p=1,carry=evidence", 4);
  EXPECT_EQ(stat(st, "phases"), 3);
  EXPECT_EQ(stat(st, "prediction_evictions"), 2);  // none after phase 1
  EXPECT_DOUBLE_EQ(stat(st, "lambda"), std::pow(lambda2, w));
  EXPECT_EQ(stat(st, "distrusting_phases"), 2);

  // In proportion to the evidence: carry_gain = 0.5 makes e = 0.5 * 2 / 2, so phase 2 starts at
  // (4^-0.5)^0.9 = 0.536, l = 2 at r9: a prediction eviction among the two oldest.
  st = run_stats(flat_trace("abcdeafedc"), "laru:predictor=noisy,p=1,carry=evidence,carry_gain=0.5",
                 4);
  EXPECT_DOUBLE_EQ(stat(st, "lambda"), std::pow(0.5, w));
  EXPECT_EQ(stat(st, "prediction_evictions"), 3);

  // carry_w = 0 is Algorithm 1's reset: phase 2 starts at 1 and predicts at r9 (P ties: a).
  st = run_stats(flat_trace("abcdeafedc"), "laru:predictor=noisy,p=1,carry=evidence,carry_w=0", 4);
  EXPECT_EQ(stat(st, "lambda"), 1);
  EXPECT_EQ(stat(st, "prediction_evictions"), 3);
  EXPECT_EQ(stat(st, "distrusting_phases"), 0);
}

// A clean phase at full trust starts the next at full trust: with the oracle no evicted block
// comes back within its phase, so every phase starts at lambda = 1 whatever carry_w.
TEST(LaruCarry, CleanPhasesKeepFullTrust) {
  Trace trace = random_workload({.seed = 77, .requests = 500});
  for (const char* w : {"0.5", "0.9", "1"}) {
    PolicyStats st = run_stats(trace, std::string("laru:carry=evidence,carry_w=") + w,
                               count_unique_blocks(trace) / 10);
    EXPECT_GT(stat(st, "phases"), 1) << w;
    EXPECT_EQ(stat(st, "prediction_induced_misses"), 0) << w;
    EXPECT_EQ(stat(st, "distrusting_phases"), 0) << w;
    EXPECT_EQ(stat(st, "lambda"), 1) << w;
  }
}

// carry_w = 0 is Algorithm 1 exactly, under noise too.
TEST(LaruCarry, ZeroWeightIsTheReset) {
  for (uint64_t w = 1; w <= 3; ++w) {
    Trace trace = random_workload({.seed = 900 + w, .requests = 400});
    Oracle oracle = compute_oracle(trace);
    size_t cap = testing::longest_prompt(trace) + 8;
    for (const char* p : {"0.3", "1"}) {
      std::string noisy = std::string("predictor=noisy,p=") + p;
      EXPECT_EQ(misses(trace, oracle, "laru:carry=evidence,carry_w=0," + noisy, cap),
                misses(trace, oracle, "laru:" + noisy, cap))
          << p;
    }
  }
}

TEST(LaruCarry, MooncakeOracleEqualsBeladyAdversarialNearLru) {
  const char* dir = std::getenv("KVPOLICY_DATA");
  std::string path =
      dir ? std::string(dir) + "/mooncake-conversation/conversation_trace.jsonl" : "";
  if (path.empty() || !std::filesystem::exists(path))
    GTEST_SKIP() << "KVPOLICY_DATA unset or the Mooncake trace is absent";
  Trace trace = read_trace(path, "mooncake", {});
  Oracle oracle = compute_oracle(trace);
  size_t unique = count_unique_blocks(trace);
  for (double f : {0.02, 0.05}) {
    size_t cap = CapacitySpec::share(f).blocks(unique);
    SCOPED_TRACE("capacity " + std::to_string(f));
    EXPECT_EQ(misses(trace, oracle, "laru:carry=evidence", cap),
              misses(trace, oracle, "belady", cap));
    uint64_t lru = misses(trace, oracle, "lru", cap);
    uint64_t laru = misses(trace, oracle, "laru:predictor=noisy,p=1,carry=evidence", cap);
    EXPECT_LE(double(laru), 1.25 * double(lru));
  }
}

}  // namespace
}  // namespace kvpolicy
