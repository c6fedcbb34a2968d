// Retention hints (src/policy/retention.h, docs/policies.md "Retention hints"): strict priority
// levels over any inner policy, durations counted from release, and the guard around them.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/hints.h"
#include "kvpolicy/trace/trace.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::random_workload;

constexpr int32_t kDefault = 35;

// Watches the wrapper from outside: each block's claim (the priority the last request to access
// it gave, computed here from the request's hints), the evictable leaves, and at each eviction
// whether an evictable block of lower priority was left behind.
class PriorityChecker final : public ForwardingPolicy {
 public:
  PriorityChecker(std::unique_ptr<Policy> inner) : ForwardingPolicy(std::move(inner)) {}
  void reserve_ids(size_t ids) override {
    claim_.resize(ids, kDefault);
    inner().reserve_ids(ids);
  }
  void on_request_begin(const RequestView& r) override {
    hints_ = r.hints;
    inner().on_request_begin(r);
  }
  void on_access(NodeId n, const AccessInfo& info) override {
    int32_t p = kDefault;
    if (info.kind != AccessKind::kDemoted)
      for (const RetentionHint& h : hints_)
        if (info.position >= h.first_block && info.position < h.end_block) p = h.priority;
    claim_[n] = p;
    inner().on_access(n, info);
  }
  void on_evictable(NodeId n) override {
    evictable_.insert(n);
    inner().on_evictable(n);
  }
  void on_unevictable(NodeId n) override {
    evictable_.erase(n);
    inner().on_unevictable(n);
  }
  void on_removed(NodeId n, Removal why) override {
    if (is_victim(why)) {
      ++evictions;
      for (NodeId m : evictable_)
        if (claim_[m] < claim_[n]) ++violations;
    }
    evictable_.erase(n);
    inner().on_removed(n, why);
  }
  uint64_t evictions = 0, violations = 0;

 private:
  std::vector<int32_t> claim_;
  std::set<NodeId> evictable_;
  std::span<const RetentionHint> hints_;
};

// Random hints without durations on every request: ranges of random priorities.
void add_random_hints(Trace& t, uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<RetentionHint>> per(t.size());
  for (size_t r = 0; r < t.size(); ++r) {
    uint32_t n = t.prompt_blocks(r);
    for (int k = 0; k < 2 && n > 0; ++k) {
      uint32_t a = uint32_t(rng.below(n)), b = a + 1 + uint32_t(rng.below(n - a));
      int32_t p = rng.uniform() < 0.5 ? kDefault : int32_t(rng.below(101));
      per[r].push_back({a, b, p, RetentionHint::kForever});
    }
  }
  t.set_hints(per);
}

TEST(Retention, AHintedBlockNeverLeavesBeforeAnUnhintedOneOfLowerPriority) {
  for (const char* inner : {"lru", "s3fifo", "sieve", "fifo", "lfu", "gdsf"}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(std::string(inner) + " seed " + std::to_string(seed));
      Trace t = random_workload({.seed = seed, .requests = 300});
      add_random_hints(t, seed * 7);
      size_t cap = count_unique_blocks(t) / 6;
      auto tree = std::make_unique<PrefixTree>(cap);
      PolicyContext ctx;
      ctx.tree = tree.get();
      ctx.capacity_blocks = cap;
      ctx.retention.emplace();
      auto checker = std::make_unique<PriorityChecker>(make_policy({inner, ""}, ctx));
      PriorityChecker* c = checker.get();
      PrefixCache cache(cap, std::move(checker), std::move(tree));
      cache.set_checking(true);
      for (size_t r = 0; r < t.size(); ++r) cache.access(request_view(t, r));
      EXPECT_GT(c->evictions, 100u);
      EXPECT_EQ(c->violations, 0u);
      EXPECT_EQ(cache.tree().check_invariants(), "");
    }
  }
}

TEST(Retention, WithoutHintsTheWrapperIsItsInnerPolicy) {
  Trace t = random_workload({.seed = 4, .requests = 400});
  size_t cap = count_unique_blocks(t) / 5;
  for (const char* inner : {"lru", "s3fifo", "wa"}) {
    ReplayResult plain = replay(t, nullptr, {inner, ""}, cap);
    ReplayOptions o;
    o.hints = true;
    ReplayResult wrapped = replay(t, nullptr, {inner, ""}, cap, o);
    EXPECT_EQ(plain.block_hits, wrapped.block_hits) << inner;
  }
}

// One-block requests on distinct roots, capacity 2; request a carries priority 90 for 10 s.
TEST(Retention, DurationRunsFromReleaseThenTheBlockDropsToTheDefault) {
  Trace t;
  t.block_tokens = 16;
  auto add = [&](double s, uint64_t id) {
    uint64_t ids[] = {id};
    t.add_request(Time(s * kMicrosPerSecond), ids, 16, 1, kNoSession, 1, 0);
  };
  add(0, 1);   // a, hinted 90 for 10 s after release (at 0 s in replay)
  add(1, 2);   // b
  add(2, 3);   // c: full; a is held (90 > 35), so b (default) leaves
  add(3, 4);   // d: c leaves; a still held
  add(20, 5);  // e: a expired at 10 s and re-entered LRU as inserted at 20 s: d leaves
  add(21, 6);  // f: a (re-entered before e) is LRU's oldest now: a leaves
  add(22, 1);  // a again: a miss
  std::vector<std::vector<RetentionHint>> per(t.size());
  per[0] = {{0, RetentionHint::kToEnd, 90, 10 * kMicrosPerSecond}};
  t.set_hints(per);
  PolicyContext ctx;
  ctx.retention.emplace();
  PrefixCache cache(2, {"lru", ""}, ctx);
  auto has = [&](uint64_t id) { return cache.tree().find(chain_key(kRootKey, id)) != kNoNode; };
  std::vector<uint32_t> hits;
  using S = std::array<bool, 6>;
  std::vector<S> state;
  for (size_t r = 0; r < t.size(); ++r) {
    hits.push_back(cache.access(request_view(t, r)).hit_blocks);
    state.push_back({has(1), has(2), has(3), has(4), has(5), has(6)});
  }
  EXPECT_EQ(state[2], (S{true, false, true, false, false, false}));  // b evicted, not a
  EXPECT_EQ(state[3], (S{true, false, false, true, false, false}));  // c evicted, a still held
  EXPECT_EQ(state[4], (S{true, false, false, false, true, false}));  // a expired, newer than d
  EXPECT_EQ(state[5], (S{false, false, false, false, true, true}));  // a at the default: gone
  EXPECT_EQ(hits[6], 0u);
  EXPECT_EQ(cache.policy().stats().back(), (std::pair<std::string, double>{"hint_expiries", 1}));
  // A hint without a duration is never released: at f, e (default) leaves instead of a.
  per[0][0].duration = RetentionHint::kForever;
  t.set_hints(per);
  PrefixCache forever(2, {"lru", ""}, ctx);
  for (size_t r = 0; r < 6; ++r) forever.access(request_view(t, r));
  EXPECT_NE(forever.tree().find(chain_key(kRootKey, 1)), kNoNode);
  // Without the hint, LRU evicts a at request 2 instead of b.
  t.hints.clear();
  t.hint_offset.clear();
  PrefixCache lru(2, {"lru", ""}, PolicyContext{});
  for (size_t r = 0; r < 3; ++r) lru.access(request_view(t, r));
  EXPECT_EQ(lru.tree().find(chain_key(kRootKey, 1)), kNoNode);
}

TEST(Retention, AReuseRenewsTheClaimAndAnUnhintedReuseClearsIt) {
  Trace t;
  t.block_tokens = 16;
  auto add = [&](double s, uint64_t id) {
    uint64_t ids[] = {id};
    t.add_request(Time(s * kMicrosPerSecond), ids, 16, 1, kNoSession, 1, 0);
  };
  add(0, 1);  // a hinted 90
  add(1, 2);  // b
  add(2, 1);  // a again, unhinted: its claim is now the default (the last claim holds)
  add(3, 2);  // b again: b is now newer than a
  add(4, 3);  // c: LRU among defaults takes a
  std::vector<std::vector<RetentionHint>> per(t.size());
  per[0] = {{0, RetentionHint::kToEnd, 90, RetentionHint::kForever}};
  t.set_hints(per);
  PolicyContext ctx;
  ctx.retention.emplace();
  PrefixCache cache(2, {"lru", ""}, ctx);
  for (size_t r = 0; r < t.size(); ++r) cache.access(request_view(t, r));
  EXPECT_EQ(cache.tree().find(chain_key(kRootKey, 1)), kNoNode);
  EXPECT_NE(cache.tree().find(chain_key(kRootKey, 2)), kNoNode);
}

// Adversarial hints (every block never reused again kept at 100 forever) cost the strict wrapper
// hits; under guarded the budget bounds the loss: misses <= LRU's + slack x k.
TEST(Retention, TheGuardBoundsWhatAdversarialHintsCost) {
  AgentParams p;
  p.sessions = 120;
  p.session_rate = 2;
  p.prefixes = 4;
  p.prefix_tokens_mean = 800;
  Trace t = generate_agent(p, 3);
  size_t unique = count_unique_blocks(t), cap = unique / 8;
  ReplayResult lru = replay(t, nullptr, {"lru", ""}, cap);
  std::vector<HintRule> rules = {parse_hint_rule("adversarial=100:inf")};
  Trace hinted = t;
  apply_hint_rules(hinted, rules);
  ReplayResult strict = replay(hinted, nullptr, {"lru", ""}, cap);
  ReplayResult guarded = replay(hinted, nullptr, {"guarded", "inner=lru"}, cap);
  EXPECT_LT(strict.block_hits, lru.block_hits);  // the wrong hints cost hits
  uint64_t lru_misses = lru.block_accesses - lru.block_hits;
  uint64_t guarded_misses = guarded.block_accesses - guarded.block_hits;
  EXPECT_LE(double(guarded_misses), double(lru_misses) + 0.1 * double(cap));
  EXPECT_GT(guarded.block_hits, strict.block_hits);
}

TEST(Retention, OracleHintsHelpLru) {
  AgentParams p;
  p.sessions = 150;
  p.session_rate = 2;
  p.prefixes = 4;
  p.prefix_tokens_mean = 800;
  Trace t = generate_agent(p, 5);
  size_t cap = count_unique_blocks(t) / 10;
  ReplayResult lru = replay(t, nullptr, {"lru", ""}, cap);
  Trace hinted = t;
  std::vector<HintRule> rules = {parse_hint_rule("oracle=90:60s")};
  apply_hint_rules(hinted, rules);
  ReplayResult oracle = replay(hinted, nullptr, {"lru", ""}, cap);
  EXPECT_GT(oracle.block_hits, lru.block_hits);
}

}  // namespace
}  // namespace kvpolicy
