// The guard in serve mode (issue 37): its shadow LRU counts the same accesses with the same
// meaning as the guarded policy (a prompt block that had to be computed; not an answer block
// written at completion), so guarded:inner=lru is lru exactly, its guard never falls back, and
// the bound misses <= LRU's + slack x k holds for a bad inner policy (docs/policies.md).
#include <gtest/gtest.h>

#include <string>

#include "kvpolicy/serve/serve.h"
#include "kvpolicy/trace/generators.h"

namespace kvpolicy {
namespace {

double stat(const ServeResult& r, const std::string& name) {
  for (const auto& [k, v] : r.policy_stats)
    if (k == name) return v;
  ADD_FAILURE() << "no policy stat " << name;
  return -1;
}

struct GuardCase {
  std::string name;
  Trace trace;
  size_t capacity;
  bool expect_preemptions;
};

std::vector<GuardCase> setups() {
  std::vector<GuardCase> s;
  ConversationParams cp;
  cp.sessions = 120;
  cp.session_rate = 4;
  cp.think_mean_s = 2;
  s.push_back({"conversation", generate_conversation(cp, 3), 800, false});
  ConversationParams pressure = cp;  // long answers in little memory: preemptions
  pressure.session_rate = 50;
  pressure.answer_tokens_mean = 1500;
  s.push_back({"conversation-preempt", generate_conversation(pressure, 5), 2500, true});
  AgentParams ap;
  ap.sessions = 30;
  ap.session_rate = 2;
  ap.prefix_tokens_mean = 2000;
  ap.turns_mean = 6;
  s.push_back({"agent", generate_agent(ap, 7), 1500, false});
  AgentParams busy = ap;
  busy.session_rate = 40;
  busy.call_tokens_mean = 1200;
  s.push_back({"agent-preempt", generate_agent(busy, 9), 1200, true});
  return s;
}

ServeOptions options(const GuardCase& s, const std::string& allocation, const std::string& policy) {
  ServeOptions o;
  o.workers = 2;
  o.router = parse_router_spec("cache_aware");
  o.capacity_blocks = s.capacity;
  o.allocation = allocation;
  o.policy = parse_policy_spec(policy);
  o.check_victims = true;
  return o;
}

TEST(ServeGuard, GuardedLruIsLruAndItsShadowCountsTheSameMisses) {
  for (const GuardCase& s : setups()) {
    for (const char* allocation : {"chunked", "whole"}) {
      SCOPED_TRACE(s.name + " " + allocation);
      ServeResult lru = serve(s.trace, options(s, allocation, "lru"));
      ServeResult g = serve(s.trace, options(s, allocation, "guarded:inner=lru"));
      ASSERT_GT(lru.evictions, 0u);  // the cache is under pressure
      if (s.expect_preemptions) EXPECT_GT(lru.preemptions, 0u);
      EXPECT_EQ(g.block_hits, lru.block_hits);
      EXPECT_EQ(g.block_accesses, lru.block_accesses);
      EXPECT_EQ(g.evictions, lru.evictions);
      EXPECT_EQ(g.preemptions, lru.preemptions);
      EXPECT_GT(stat(g, "guard_misses"), 0);
      EXPECT_EQ(stat(g, "guard_misses"), stat(g, "guard_lru_misses"));
      EXPECT_EQ(stat(g, "guard_debt"), 0);
      EXPECT_EQ(stat(g, "guard_budget_fallbacks"), 0);
    }
  }
}

void expect_bound(bool preempting) {
  // Inner policies far from LRU on these workloads: the guard keeps their misses plus its debt
  // within LRU's + slack x k (slack 0.1, one worker).
  for (const GuardCase& s : setups()) {
    if (s.expect_preemptions != preempting) continue;
    for (const char* allocation : {"chunked", "whole"}) {
      for (const char* inner : {"fifo", "lfu", "gdsf"}) {
        SCOPED_TRACE(s.name + " " + allocation + " " + inner);
        ServeOptions o = options(s, allocation, std::string("guarded:inner=") + inner);
        o.workers = 1;
        o.router = parse_router_spec("round_robin");
        ServeResult g = serve(s.trace, o);
        double m = stat(g, "guard_misses"), m_lru = stat(g, "guard_lru_misses");
        double debt = stat(g, "guard_debt");
        EXPECT_LE(m + debt, m_lru + 0.1 * double(s.capacity) + 1e-9)
            << "misses " << m << " debt " << debt << " shadow " << m_lru;
      }
    }
  }
}

TEST(ServeGuard, BoundHoldsInServeMode) { expect_bound(false); }

// Failed 9 of these 12 runs (up to 1.4 % above the shadow's misses) while LRU's choice came from
// the guard's recency keys rather than lru.cc's order (docs/policies.md "In serve mode").
TEST(ServeGuard, BoundHoldsUnderPreemption) { expect_bound(true); }

}  // namespace
}  // namespace kvpolicy
