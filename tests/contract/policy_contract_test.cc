// The contract every registered policy must keep, run over every name in the registry with its
// defaults and with each parameter variant it declares (a policy or variant added later is
// covered without touching this file).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <ostream>
#include <string>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/trace/trace.h"
#include "support/random_workload.h"

namespace kvpolicy {

// gtest prints a failing test's parameter with this (found by ADL, so outside the anonymous
// namespace).
void PrintTo(const PolicySpec& spec, std::ostream* os) { *os << spec.label(); }

namespace {

using testing::infinite_cache_hits;
using testing::longest_prompt;
using testing::random_workload;
using testing::request_view;

struct Outcome {
  uint32_t hits, inserted, evictions;
  bool operator==(const Outcome&) const = default;
};

// A registered policy with its defaults (params empty) or one of its declared variants.
std::vector<PolicySpec> policies_and_variants() {
  std::vector<PolicySpec> out;
  for (auto& p : PolicyRegistry::instance().all()) {
    out.push_back({p.name, ""});
    for (auto& v : p.variants) out.push_back({p.name, v});
  }
  return out;
}

class PolicyContract : public ::testing::TestWithParam<PolicySpec> {
 protected:
  const PolicyInfo& info() const { return PolicyRegistry::instance().get(GetParam().name); }

  // Replays `trace` with every check on after every request; returns per-request outcomes.
  // With a DRAM capacity, the policy runs both tiers (HBM victims are demoted to DRAM).
  std::vector<Outcome> replay_checked(const Trace& trace, const Oracle& oracle, size_t capacity,
                                      uint64_t seed, size_t dram_capacity = 0) {
    PolicyContext ctx;
    ctx.block_tokens = trace.block_tokens;
    ctx.seed = seed;
    if (info().needs_future) {  // others get no future, so reading it would crash here
      ctx.future = oracle.view(trace);
    }
    const PolicySpec& spec = GetParam();
    PrefixCache cache(capacity, spec, ctx, dram_capacity, spec);
    cache.set_checking(true);  // throws if a victim is not an evictable leaf
    const std::vector<uint32_t> ceiling = infinite_cache_hits(trace);
    std::vector<Outcome> out;
    for (size_t r = 0; r < trace.size(); ++r) {
      SCOPED_TRACE("request " + std::to_string(r) + ", capacity " + std::to_string(capacity));
      RequestView view = request_view(trace, r);
      AccessResult a;
      try {
        a = cache.access(view);
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        return out;
      }
      const PrefixTree& tree = cache.tree();
      EXPECT_LE(cache.hbm_size(), capacity);
      EXPECT_LE(cache.dram_size(), dram_capacity);
      // Prefix closure and the tree's own bookkeeping.
      std::string broken = tree.check_invariants();
      EXPECT_EQ(broken, "");
      // The request's path was pinned throughout: all of it must still be cached.
      uint32_t kept = a.hit_blocks + a.inserted_blocks;
      for (uint32_t i = 0; i < kept; ++i) {
        EXPECT_NE(tree.find(view.blocks[i]), kNoNode) << "pinned block " << i << " was evicted";
      }
      // With room for the whole prompt, some non-path leaf is always evictable, so a policy
      // that gives up early is wrong.
      if (dram_capacity == 0 && capacity >= view.blocks.size()) {
        EXPECT_EQ(kept, view.blocks.size());
      }
      EXPECT_LE(a.hit_blocks, ceiling[r]);
      out.push_back({a.hit_blocks, a.inserted_blocks, a.evictions});
      if (::testing::Test::HasFailure()) return out;
    }
    return out;
  }
};

TEST_P(PolicyContract, KeepsInvariantsOnRandomWorkloads) {
  for (uint64_t w = 1; w <= 3; ++w) {
    Trace trace = random_workload({.seed = w, .requests = 250});
    Oracle oracle = compute_oracle(trace);
    size_t unique = count_unique_blocks(trace);
    // Capacity 1 and one request's length are the edge cases where pins block eviction.
    for (size_t cap : {size_t{1}, size_t{longest_prompt(trace)}, unique / 10, unique / 3}) {
      replay_checked(trace, oracle, cap, 1);
      if (HasFailure()) return;
    }
  }
}

TEST_P(PolicyContract, KeepsInvariantsWithTwoTiers) {
  for (uint64_t w = 1; w <= 2; ++w) {
    Trace trace = random_workload({.seed = 20 + w, .requests = 250});
    Oracle oracle = compute_oracle(trace);
    size_t unique = count_unique_blocks(trace);
    size_t longest = longest_prompt(trace);
    for (auto [hbm, dram] : {std::pair<size_t, size_t>{1, 1},
                             {longest, 3},
                             {unique / 10, unique / 10},
                             {unique / 20, unique / 4}}) {
      replay_checked(trace, oracle, hbm, 1, dram);
      if (HasFailure()) return;
    }
  }
}

TEST_P(PolicyContract, SameSeedGivesIdenticalResults) {
  Trace trace = random_workload({.seed = 11, .requests = 250});
  Oracle oracle = compute_oracle(trace);
  size_t cap = count_unique_blocks(trace) / 8;
  auto first = replay_checked(trace, oracle, cap, 7);
  auto second = replay_checked(trace, oracle, cap, 7);
  ASSERT_EQ(first.size(), trace.size());
  EXPECT_TRUE(first == second);
}

// A policy's replay runs with its calls inlined (InlinedPolicy) unless it is wrapped; both paths
// must drive it identically.
TEST_P(PolicyContract, InlinedAndVirtualReplaysAgree) {
  Trace trace = random_workload({.seed = 13, .requests = 250});
  Oracle oracle = compute_oracle(trace);
  size_t cap = count_unique_blocks(trace) / 6;
  PolicyContext ctx;
  ctx.block_tokens = trace.block_tokens;
  ctx.seed = 5;
  ctx.future = oracle.view(trace);
  const PolicySpec& spec = GetParam();
  PrefixCache inlined(cap, spec, ctx);
  auto tree = std::make_unique<PrefixTree>(cap);
  ctx.tree = tree.get();
  ctx.capacity_blocks = cap;
  PrefixCache wrapped(cap, std::make_unique<ForwardingPolicy>(make_policy(spec, ctx)),
                      std::move(tree));
  for (size_t r = 0; r < trace.size(); ++r) {
    RequestView view = request_view(trace, r);
    AccessResult a = inlined.access(view), b = wrapped.access(view);
    ASSERT_EQ(a.hit_blocks, b.hit_blocks) << "request " << r;
    ASSERT_EQ(a.inserted_blocks, b.inserted_blocks) << "request " << r;
    ASSERT_EQ(a.evictions, b.evictions) << "request " << r;
  }
  for (BlockKey k : trace.blocks)
    ASSERT_EQ(inlined.tree().find(k) == kNoNode, wrapped.tree().find(k) == kNoNode);
}

TEST_P(PolicyContract, DeclaredParametersParseWithDefaults) {
  // Every declared default must be accepted when given explicitly (the variant's values last).
  std::string params;
  for (auto& p : info().params)
    params += (params.empty() ? "" : ",") + p.name + "=" + p.default_value;
  if (!GetParam().params.empty()) params += "," + GetParam().params;
  Trace trace = random_workload({.requests = 50});
  Oracle oracle = compute_oracle(trace);
  PolicyContext ctx;
  ctx.seed = 3;
  ctx.future = oracle.view(trace);
  PrefixCache cache(64, PolicySpec{GetParam().name, params}, ctx);
  for (size_t r = 0; r < trace.size(); ++r) cache.access(request_view(trace, r));
  EXPECT_EQ(cache.tree().check_invariants(), "");
}

// "hf", "hf_list_max_0", "fpb_predictor_noisy_p_0_3".
std::string test_name(const ::testing::TestParamInfo<PolicySpec>& p) {
  std::string s = p.param.params.empty() ? p.param.name : p.param.name + "_" + p.param.params;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, PolicyContract, ::testing::ValuesIn(policies_and_variants()),
                         test_name);

// A variant must name declared parameters with accepted values, and change something.
TEST(PolicyVariants, EveryDeclaredVariantParses) {
  for (auto& p : PolicyRegistry::instance().all()) {
    for (auto& v : p.variants) {
      SCOPED_TRACE(p.name + ":" + v);
      Params params;
      EXPECT_NO_THROW(params = Params::parse(v, p.params, "policy " + p.name));
      EXPECT_NE(params.canonical(), Params::parse("", p.params, "").canonical());
    }
  }
}

}  // namespace
}  // namespace kvpolicy
