// The guard's recency order (src/policy/guard_recency.h): without trust the guard keeps LRU's
// order in a list; it must answer exactly as the order-statistic treap it replaced, so that
// guarded and auto choose the same victims either way (docs/policies.md "guarded").
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../src/policy/guarded.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/trace.h"
#include "support/policy_checks.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::random_workload;
using testing::request_view;

// Random operations with arbitrary keys (any order a tier could produce, a DRAM tier's too):
// after each, the oldest member and every key agree.
TEST(GuardRecency, ListAnswersAsTheTreap) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    const size_t ids = 64;
    GuardRecency list(false, seed), treap(true, seed);
    list.resize(ids);
    treap.resize(ids);
    std::vector<bool> keyed(ids, false);
    std::vector<uint64_t> used;
    uint64_t next_key = 1000;
    for (int step = 0; step < 20000; ++step) {
      NodeId n = NodeId(rng() % ids);
      int op = int(rng() % 4);
      if (op == 0 && !list.contains(n)) {
        // A fresh key: mostly near the newest (as accesses are), sometimes anywhere.
        uint64_t k = rng() % 3 == 0 ? rng() % (next_key + 1000) * 1024 + 1 : (next_key += 7) * 1024;
        list.set_key(n, k);
        treap.set_key(n, k);
        keyed[n] = true;
      } else if (op == 1 && keyed[n] && !list.contains(n)) {
        // Members' keys are distinct (the treap needs it): skip a duplicate.
        bool dup = false;
        for (NodeId m = 0; m < ids; ++m)
          dup |= m != n && list.contains(m) && list.key(m) == list.key(n);
        if (dup) continue;
        list.insert(n);
        treap.insert(n);
      } else if (op == 2 && list.contains(n)) {
        list.erase(n);
        treap.erase(n);
      } else if (op == 3) {
        list.remove(n);
        treap.remove(n);
        keyed[n] = false;
      }
      ASSERT_EQ(list.contains(n), treap.contains(n));
      ASSERT_EQ(list.size(), treap.size()) << "step " << step;
      ASSERT_EQ(list.oldest(), treap.oldest()) << "seed " << seed << " step " << step;
      if (keyed[n]) ASSERT_EQ(list.key(n), treap.key(n));
    }
  }
}

// Guarded around inners that deviate from LRU (so every rule fires), list against treap: the
// same victims in the same order and the same statistics, on random workloads and capacities.
std::vector<BlockKey> victims_of(const Trace& trace, const Oracle& oracle, const std::string& inner,
                                 const GuardOptions& g, size_t cap, PolicyStats& stats) {
  stats.clear();
  return testing::victim_keys(
      trace, oracle, cap,
      [&](const PolicyContext& ctx) {
        return std::make_unique<Guarded>(ctx, make_policy(parse_policy_spec(inner), ctx), g);
      },
      [&](const Policy& p) {
        for (auto& kv : p.stats())  // the guard's own (the inner's include timings)
          if (kv.first.rfind("guard_", 0) == 0) stats.push_back(kv);
      });
}

TEST(GuardRecency, GuardedListAndTreapChooseTheSameVictims) {
  for (uint64_t w = 1; w <= 3; ++w) {
    Trace trace = random_workload({.seed = 70 + w, .requests = 400});
    Oracle oracle = compute_oracle(trace);
    size_t lo = testing::longest_prompt(trace), unique = count_unique_blocks(trace);
    for (size_t cap : {lo, std::max(lo, unique / 10), std::max(lo, unique / 4)}) {
      for (const char* inner :
           {"fpb:predictor=noisy,p=0.5", "fpb:predictor=noisy,p=1", "wa", "s3fifo", "lfu"}) {
        for (GuardOptions g : {GuardOptions{}, GuardOptions{.induced = false},
                               GuardOptions{.ratio = 1.5, .slack = 0}, GuardOptions{.slack = 1}}) {
          SCOPED_TRACE(std::string(inner) + ", capacity " + std::to_string(cap) + ", seed " +
                       std::to_string(w) + ", slack " + std::to_string(g.slack));
          g.check = true;  // and the kept shadow bits agree with lookups at every use
          PolicyStats ls, ts;
          std::vector<BlockKey> list = victims_of(trace, oracle, inner, g, cap, ls);
          GuardOptions t = g;
          t.treap = true;
          std::vector<BlockKey> treap = victims_of(trace, oracle, inner, t, cap, ts);
          ASSERT_FALSE(list.empty());
          ASSERT_EQ(list, treap);
          ASSERT_FALSE(ls.empty());
          ASSERT_EQ(ls, ts);
        }
      }
    }
  }
}

}  // namespace
}  // namespace kvpolicy
