// The guard (src/policy/guarded.cc, docs/policies.md "guarded"): equal to its inner policy when
// the score is right, equal to LRU around LRU, and within its stated bound of LRU's misses
// (misses <= ratio x LRU's + slack x k, at every request) whatever the inner policy does; the
// shadow LRU it budgets against is exact.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/sim/robustness.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/trace.h"
#include "support/policy_checks.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::longest_prompt;
using testing::random_workload;
using testing::request_view;
using testing::stat;

// Two caches of one capacity replayed side by side, request by request, victims checked.
struct SideBySide {
  SideBySide(const Trace& trace, const Oracle& oracle, const std::string& a, const std::string& b,
             size_t cap)
      : trace(trace) {
    PolicyContext ctx;
    ctx.block_tokens = trace.block_tokens;
    ctx.future = oracle.view(trace);
    first = std::make_unique<PrefixCache>(cap, parse_policy_spec(a), ctx);
    second = std::make_unique<PrefixCache>(cap, parse_policy_spec(b), ctx);
    first->set_checking(true);
    second->set_checking(true);
  }
  const Trace& trace;
  std::unique_ptr<PrefixCache> first, second;
};

// The random workloads and capacities the bound is checked on: from one prompt's room (k at
// least the longest prompt: the bound's condition) to a third of the unique blocks.
struct Case {
  uint64_t seed;
  size_t cap;
};
std::vector<Case> cases(int workloads) {
  std::vector<Case> out;
  for (int w = 1; w <= workloads; ++w) {
    Trace t = random_workload({.seed = uint64_t(w), .requests = 400});
    size_t unique = count_unique_blocks(t), longest = longest_prompt(t);
    for (size_t cap : {longest, unique / 12, unique / 6, unique / 3})
      out.push_back({uint64_t(w), std::max(cap, longest)});
  }
  return out;
}

TEST(Guarded, AroundLruIsLru) {
  for (Case c : cases(4)) {
    Trace t = random_workload({.seed = c.seed, .requests = 400});
    Oracle o = compute_oracle(t);
    SideBySide s(t, o, "guarded:inner=lru", "lru", c.cap);
    for (size_t r = 0; r < t.size(); ++r) {
      RequestView v = request_view(t, r);
      AccessResult a = s.first->access(v), b = s.second->access(v);
      ASSERT_EQ(a.hit_blocks, b.hit_blocks) << "seed " << c.seed << " cap " << c.cap << " r " << r;
      ASSERT_EQ(a.evictions, b.evictions);
    }
    PolicyStats st = s.first->policy().stats();
    EXPECT_EQ(stat(st, "guard_inner_evictions"), 0);
    EXPECT_EQ(stat(st, "guard_lru_evictions"), 0);
  }
}

// A perfect score (FPB with the oracle: Belady's choice) is never behind LRU and never causes a
// score-induced miss: with slack >= 1 (the debt is at most k) the guard takes every victim it
// names, trust on or off.
TEST(Guarded, WithPerfectScoreEqualsInner) {
  for (const char* inner : {"fpb", "belady"}) {
    for (Case c : cases(4)) {
      Trace t = random_workload({.seed = c.seed, .requests = 400});
      Oracle o = compute_oracle(t);
      SideBySide s(t, o, std::string("guarded:slack=1,trust=true,inner=") + inner, inner, c.cap);
      for (size_t r = 0; r < t.size(); ++r) {
        RequestView v = request_view(t, r);
        AccessResult a = s.first->access(v), b = s.second->access(v);
        ASSERT_EQ(a.hit_blocks, b.hit_blocks)
            << inner << " seed " << c.seed << " cap " << c.cap << " r " << r;
      }
      PolicyStats st = s.first->policy().stats();
      EXPECT_EQ(stat(st, "guard_lambda"), 1) << inner;
      EXPECT_EQ(stat(st, "guard_score_induced_misses"), 0) << inner;
      EXPECT_EQ(stat(st, "guard_lru_evictions"), 0) << inner;
      EXPECT_GT(stat(st, "guard_inner_evictions"), 0) << inner;
    }
  }
}

// The shadow LRU is exact: its misses are LRU's, and the guard counts its own misses right.
TEST(Guarded, ShadowCountsLrusMisses) {
  for (Case c : cases(3)) {
    Trace t = random_workload({.seed = c.seed, .requests = 400});
    Oracle o = compute_oracle(t);
    ReplayOptions opts;
    opts.check_victims = true;
    ReplayResult lru = replay(t, &o, {"lru", ""}, c.cap, opts);
    ReplayResult g =
        replay(t, &o, parse_policy_spec("guarded:inner=fpb,inner_params=predictor=noisy;p=0.5"),
               c.cap, opts);
    EXPECT_EQ(stat(g.policy_stats, "guard_lru_misses"),
              double(lru.block_accesses - lru.block_hits));
    EXPECT_EQ(stat(g.policy_stats, "guard_misses"), double(g.block_accesses - g.block_hits));
  }
}

struct Totals {
  uint64_t guarded = 0, inner = 0, lru = 0;
};

// Replays guarded, its inner policy and LRU side by side; checks the bound, misses <= ratio x
// LRU's + slack x k, after every request.
Totals check_bound(const std::string& inner_name, const std::string& inner_params, double ratio,
                   double slack, const std::vector<Case>& cs, double allowance = 0) {
  Totals tot;
  for (Case c : cs) {
    Trace t = random_workload({.seed = c.seed, .requests = 400});
    Oracle o = compute_oracle(t);
    std::string inner = inner_name + (inner_params.empty() ? "" : ":" + inner_params);
    std::string semi = inner_params;
    for (char& ch : semi)
      if (ch == ',') ch = ';';
    std::string g = "guarded:inner=" + inner_name + (semi.empty() ? "" : ",inner_params=" + semi) +
                    ",ratio=" + std::to_string(ratio) + ",slack=" + std::to_string(slack) +
                    ",allowance=" + std::to_string(allowance);
    SideBySide gl(t, o, g, "lru", c.cap);
    SideBySide in(t, o, inner, "lru", c.cap);
    uint64_t mg = 0, ml = 0, mi = 0, requested = 0;
    for (size_t r = 0; r < t.size(); ++r) {
      RequestView v = request_view(t, r);
      AccessResult a = gl.first->access(v), b = gl.second->access(v), i = in.first->access(v);
      requested += v.blocks.size();
      mg += v.blocks.size() - a.hit_blocks;
      ml += v.blocks.size() - b.hit_blocks;
      mi += v.blocks.size() - i.hit_blocks;
      if (double(mg) >
          ratio * double(ml) + slack * double(c.cap) + allowance * double(requested) + 1e-9) {
        ADD_FAILURE() << g << " seed " << c.seed << " cap " << c.cap << " after request " << r
                      << ": " << mg << " misses, LRU " << ml;
        return tot;
      }
    }
    tot.guarded += mg;
    tot.inner += mi;
    tot.lru += ml;
  }
  return tot;
}

// A fully adversarial score: FPB whose every prediction is the negated true next access (the
// block needed soonest looks furthest), the noise model of the robustness study at p = 1.
TEST(Guarded, BoundHoldsUnderAdversarialScore) {
  std::vector<Case> cs = cases(6);
  for (auto [ratio, slack] : {std::pair{1.0, 1.0}, {1.0, 0.0}, {1.5, 0.0}, {1.0, 0.25}}) {
    SCOPED_TRACE("ratio " + std::to_string(ratio) + " slack " + std::to_string(slack));
    Totals t = check_bound("fpb", "predictor=noisy,p=1", ratio, slack, cs);
    // The adversary alone is far worse than LRU, so the bound is no formality.
    EXPECT_GT(double(t.inner), 1.3 * double(t.lru));
  }
  // The allowance alone (misses allowed per block requested): the bound holds at every request,
  // and the adversary spends it, so it is no formality either.
  for (double allowance : {0.01, 0.05}) {
    SCOPED_TRACE("allowance " + std::to_string(allowance));
    Totals t = check_bound("fpb", "predictor=noisy,p=1", 1.0, 0.0, cs, allowance);
    EXPECT_GT(t.guarded, t.lru);
  }
}

// Every registered policy as the inner one, the budget at its tightest (never behind LRU): the
// inner is told of removals it did not name (LRU's choices), and the bound holds.
TEST(Guarded, BoundHoldsAroundEveryPolicy) {
  std::vector<Case> cs = cases(2);
  for (auto& p : PolicyRegistry::instance().all()) {
    SCOPED_TRACE(p.name);
    check_bound(p.name, "", 1.0, 0.0, cs);
    if (HasFatalFailure()) return;
  }
}

TEST(Guarded, NoisyScoresLowerTrust) {
  Trace t = random_workload({.seed = 3, .requests = 400});
  Oracle o = compute_oracle(t);
  size_t cap = count_unique_blocks(t) / 8;
  ReplayOptions opts;
  opts.check_victims = true;
  ReplayResult bad = replay(t, &o,
                            parse_policy_spec("guarded:inner=fpb,inner_params=predictor=noisy;p=1,"
                                              "budget=false,trust=true,halve_every=1"),
                            cap, opts);
  EXPECT_GT(stat(bad.policy_stats, "guard_score_induced_misses"), 0);
  EXPECT_GT(stat(bad.policy_stats, "guard_lambda_halvings"), 0);
  EXPECT_GT(stat(bad.policy_stats, "guard_trust_fallbacks"), 0);
  EXPECT_EQ(stat(bad.policy_stats, "guard_budget_fallbacks"), 0);
  ReplayResult raw = replay(t, &o, parse_policy_spec("fpb:predictor=noisy,p=1"), cap, opts);
  EXPECT_GT(bad.block_hits, raw.block_hits);
}

TEST(Guarded, InnerParametersAreChecked) {
  Trace t = random_workload({.requests = 20});
  Oracle o = compute_oracle(t);
  EXPECT_THROW(replay(t, &o, parse_policy_spec("guarded:inner=nosuch"), 64), ConfigError);
  EXPECT_THROW(replay(t, &o, parse_policy_spec("guarded:inner=fpb,inner_params=p=2"), 64),
               ConfigError);
  // The policy-list syntax keeps inner_params with its guard.
  auto specs = parse_policy_list("lru,guarded:inner=fpb,inner_params=predictor=noisy;p=0.5,wa");
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[1].params, "inner=fpb,inner_params=predictor=noisy;p=0.5");
}

// The robustness study hands each noise level to a spec holding {p}: here, a guarded policy's
// inner one.
TEST(Guarded, RobustnessStudyFillsTheNoiseSlot) {
  Trace t = random_workload({.seed = 5, .requests = 200});
  Oracle o = compute_oracle(t);
  RobustnessOptions opts;
  opts.noise = {0, 1};
  opts.policies = "lru,guarded:inner=fpb,inner_params=predictor=noisy;p={p}";
  auto rows = run_robustness(t, o, count_unique_blocks(t) / 6, opts);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1].spec, "guarded:inner=fpb,inner_params=predictor=noisy;p=0");
  EXPECT_EQ(rows[3].spec, "guarded:inner=fpb,inner_params=predictor=noisy;p=1");
  EXPECT_TRUE(rows[1].learned);
  EXPECT_GT(rows[1].block_hits, rows[3].block_hits);  // the oracle helps, the adversary not
}

}  // namespace
}  // namespace kvpolicy
