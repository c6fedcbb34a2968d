// T-LRU family: LRU equivalence at xi = 0, hand-worked TEL-safe marking, the oracle variants,
// and Tail-Optimized Belady's optimality where it is a theorem.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/sim/tail.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/trace.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::random_workload;
using testing::RandomWorkloadOptions;
using testing::request_view;

struct Recorded {
  std::vector<uint32_t> hits;
  std::vector<BlockKey> victims;
};

// Replays with victim checking on; the policy gets the trace's future only if it asks for it.
Recorded record(const Trace& trace, const Oracle& oracle, const std::string& name,
                const std::string& params, size_t capacity, const CostModel* cost = nullptr) {
  auto tree = std::make_unique<PrefixTree>(capacity);
  PolicyContext ctx;
  ctx.tree = tree.get();
  ctx.capacity_blocks = capacity;
  ctx.block_tokens = trace.block_tokens;
  ctx.cost_model = cost;
  if (PolicyRegistry::instance().get(name).needs_future) {
    ctx.future = oracle.view(trace);
  }
  Recorded out;
  auto recorder = std::make_unique<testing::VictimKeyRecorder>(
      make_policy(PolicySpec{name, params}, ctx), *tree, &out.victims);
  PrefixCache cache(capacity, std::move(recorder), std::move(tree));
  cache.set_checking(true);
  for (size_t r = 0; r < trace.size(); ++r)
    out.hits.push_back(cache.access(request_view(trace, r)).hit_blocks);
  return out;
}

TEST(TLru, XiZeroIsExactlyLru) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    RandomWorkloadOptions o;
    o.seed = seed;
    o.requests = 300;
    Trace trace = random_workload(o);
    Oracle oracle = compute_oracle(trace);
    for (size_t capacity : {8, 25, 60, 150}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", capacity " + std::to_string(capacity));
      Recorded lru = record(trace, oracle, "lru", "", capacity);
      ASSERT_FALSE(lru.victims.empty());
      for (const char* params : {"xi_ms=0", "xi_ms=0,qhat=0", "xi_ms=0,alpha=5,base_ms=0"}) {
        Recorded t = record(trace, oracle, "tlru", params, capacity);
        EXPECT_EQ(t.victims, lru.victims) << params;
        EXPECT_EQ(t.hits, lru.hits) << params;
      }
      // Threshold 0 caches everything: LRU too.
      Recorded thr = record(trace, oracle, "threshold_lru", "threshold_tokens=0", capacity);
      EXPECT_EQ(thr.victims, lru.victims);
    }
  }
}

// Raw block ids: session s, position i.
uint64_t id(uint32_t s, uint32_t i) { return uint64_t{s} << 20 | i; }
std::vector<uint64_t> ids(uint32_t s, uint32_t from, uint32_t to) {
  std::vector<uint64_t> v;
  for (uint32_t i = from; i < to; ++i) v.push_back(id(s, i));
  return v;
}
// The chained key of block i of session s's history.
BlockKey key(uint32_t s, uint32_t i) {
  BlockKey k = kRootKey;
  for (uint32_t j = 0; j <= i; ++j) k = chain_key(k, id(s, j));
  return k;
}

// B = 16, TTFT = 1 ms per uncached token (alpha = 1, base 0), xi = 64 ms: a next turn meets xi
// with at most U = 64 uncached tokens (4 blocks). Q-hat = 0.
//   r0 A turn 1: 10 blocks (160 tokens), no answer: next needs ceil((160 - 64) / 16) = 6 blocks,
//      so A6..A9 are TEL-safe.
//   r1 B turn 1: 4 blocks (64 tokens): budget 0, B0..B3 are all TEL-safe.
//   r2 C: 4 blocks; the cache (14) is full: evicts the marked blocks oldest mark first, deeper
//      first: A9, A8, A7, A6. C's own 4 blocks are then TEL-safe (budget 0).
//   r3 D: 3 blocks: evicts B3, B2, B1 (LRU would take A5, A4, A3).
//   r4 A turn 2: A0..A9 + 2 blocks: hits A0..A5 (LRU: A0..A2), evicting B0, C3, C2, C1, C0, D2.
TEST(TLru, HandWorkedTelSafeMarking) {
  Trace t;
  t.block_tokens = 16;
  t.add_request(0, ids(0, 0, 10), 160, 0, 0, 1);
  t.add_request(1, ids(1, 0, 4), 64, 0, 1, 1);
  t.add_request(2, ids(2, 0, 4), 64, 0, 2, 1);
  t.add_request(3, ids(3, 0, 3), 48, 0, 3, 1);
  t.add_request(4, ids(0, 0, 12), 192, 0, 0, 2);
  Oracle oracle = compute_oracle(t);
  Recorded tl = record(t, oracle, "tlru", "xi_ms=64,alpha=1,base_ms=0,qhat=0", 14);
  std::vector<BlockKey> want = {key(0, 9), key(0, 8), key(0, 7), key(0, 6), key(1, 3),
                                key(1, 2), key(1, 1), key(1, 0), key(2, 3), key(2, 2),
                                key(2, 1), key(2, 0), key(3, 2)};
  EXPECT_EQ(tl.victims, want);
  EXPECT_EQ(tl.hits, (std::vector<uint32_t>{0, 0, 0, 0, 6}));
  Recorded lru = record(t, oracle, "lru", "", 14);
  EXPECT_EQ(lru.hits, (std::vector<uint32_t>{0, 0, 0, 0, 3}));
  // TEL at 64 ms: T-LRU's A turn 2 has 192 - 96 = 96 uncached tokens (excess 32), LRU's 144
  // (excess 80); the first turns cost the same under both.
  CostModel cost = CostModel::make("linear", "", "b_ms=1");
  ReplayOptions opts;
  opts.cost_model = &cost;
  opts.xi_ms = 64;
  ReplayResult a =
      replay(t, &oracle, PolicySpec{"tlru", "xi_ms=64,alpha=1,base_ms=0,qhat=0"}, 14, opts);
  ReplayResult b = replay(t, &oracle, PolicySpec{"lru", ""}, 14, opts);
  EXPECT_NEAR(b.tel_ms - a.tel_ms, 80 - 32, 1e-9);
}

// A hit takes the mark away; the rest of the marked path still goes first.
//   r0 B: B0..B3 (64 tokens): all TEL-safe.
//   r1 X: B0, B1, X0 with a 1000-token answer (nothing safe): B0, B1 lose their marks.
//   r2 Y: 3 new blocks into 7: evicts B3 (marked). r3 Z: 2 new: B2 (marked), then LRU's X0.
TEST(TLru, AHitClearsTheMark) {
  Trace t;
  t.block_tokens = 16;
  t.add_request(0, ids(1, 0, 4), 64, 0, 1, 1);
  std::vector<uint64_t> x = {id(1, 0), id(1, 1), id(5, 0)};
  t.add_request(1, x, 48, 1000, 5, 1);
  t.add_request(2, ids(6, 0, 3), 48, 1000, 6, 1);
  t.add_request(3, ids(7, 0, 2), 32, 1000, 7, 1);
  Oracle oracle = compute_oracle(t);
  Recorded tl = record(t, oracle, "tlru", "xi_ms=64,alpha=1,base_ms=0,qhat=0", 7);
  BlockKey x0 = chain_key(chain_key(chain_key(kRootKey, id(1, 0)), id(1, 1)), id(5, 0));
  EXPECT_EQ(tl.victims, (std::vector<BlockKey>{key(1, 3), key(1, 2), x0}));
}

// Threshold-LRU (threshold 100 tokens): S's 3-block turn with a 20-token answer (68 < 100) is
// inserted first-to-evict; L's 4-block turn (64 + 40 = 104) is cached as LRU.
TEST(ThresholdLru, ShortHistoriesGoFirst) {
  Trace t;
  t.block_tokens = 16;
  t.add_request(0, ids(1, 0, 4), 64, 40, 1, 1);   // L: 104 tokens of history, cached
  t.add_request(1, ids(2, 0, 3), 48, 20, 2, 1);   // S: 68, first to evict
  t.add_request(2, ids(3, 0, 2), 32, 100, 3, 1);  // needs 2 of 7: S2, S1 (LRU: L3, L2)
  Oracle oracle = compute_oracle(t);
  Recorded thr = record(t, oracle, "threshold_lru", "threshold_tokens=100", 7);
  EXPECT_EQ(thr.victims, (std::vector<BlockKey>{key(2, 2), key(2, 1)}));
  Recorded lru = record(t, oracle, "lru", "", 7);
  EXPECT_EQ(lru.victims, (std::vector<BlockKey>{key(1, 3), key(1, 2)}));
}

// End-aware T-LRU at xi = 0 marks only the sessions that end: B (one turn) goes before the
// older A (which continues); plain T-LRU at xi = 0 is LRU and takes A's blocks (A2, A1), so
// A's second turn hits only A0.
TEST(TLruEnd, EndingSessionsGoFirst) {
  Trace t;
  t.block_tokens = 16;
  t.add_request(0, ids(0, 0, 3), 48, 0, 0, 1);
  t.add_request(1, ids(1, 0, 3), 48, 0, 1, 1);
  t.add_request(2, ids(2, 0, 2), 32, 0, 2, 1);
  t.add_request(3, ids(0, 0, 4), 64, 0, 0, 2);
  Oracle oracle = compute_oracle(t);
  Recorded end = record(t, oracle, "tlru_end", "xi_ms=0", 6);
  EXPECT_EQ(end.victims[0], key(1, 2));
  EXPECT_EQ(end.victims[1], key(1, 1));
  EXPECT_EQ(end.hits[3], 3u);
  Recorded plain = record(t, oracle, "tlru", "xi_ms=0", 6);
  EXPECT_EQ(plain.victims[0], key(0, 2));
  EXPECT_EQ(plain.hits[3], 1u);
}

// Length-aware T-LRU uses the true next prompt: A's next turn adds 1 block, so with xi worth
// 2 blocks (32 tokens at 1 ms/token) the budget is 10 + 1 - 2 = 9: only A9 is TEL-safe. With
// Q-hat = 5 blocks plain T-LRU keeps all 10 (10 + 5 - 2 = 13).
TEST(TLruLength, UsesTheTrueNextPrompt) {
  Trace t;
  t.block_tokens = 16;
  t.add_request(0, ids(0, 0, 10), 160, 0, 0, 1);
  t.add_request(1, ids(1, 0, 4), 64, 0, 1, 1);
  t.add_request(2, ids(2, 0, 1), 16, 0, 2, 1);  // 1 eviction from a full 14
  t.add_request(3, ids(0, 0, 11), 176, 0, 0, 2);
  t.add_request(4, ids(1, 0, 5), 80, 0, 1, 2);
  Oracle oracle = compute_oracle(t);
  std::string p = "xi_ms=32,alpha=1,base_ms=0,qhat=5";
  Recorded len = record(t, oracle, "tlru_length", p, 14);
  ASSERT_FALSE(len.victims.empty());
  EXPECT_EQ(len.victims[0], key(0, 9));
  Recorded est = record(t, oracle, "tlru", p, 14);
  EXPECT_EQ(est.victims[0], key(0, 9));  // no marks: LRU's oldest, also A9
  // A's turn 2 hits A0..A8 under tlru_length.
  EXPECT_EQ(len.hits[3], 9u);
}

// The budget from the replay's own prefill time (calibration=model, the default) against the
// linear rule, on the default cost model (Llama-3.1-8B @ A100), B = 16, xi = 100 ms. A's next
// prompt is 2000 tokens: it meets 100 ms with 59 blocks cached (99.72 ms; 58 give 101.20 ms,
// CostModel.CachedBlocksToMeetMatchesHandComputation), while the linear fit (0.0922 ms a token,
// base 0) allows 1084 uncached tokens and keeps 58.
//   r0 X turn 1: 1 block, its next turn (r4) needs 59 > 1 blocks: X0 stays plain.
//   r1 A turn 1: 124 blocks: A59..A123 (model) or A58..A123 (linear) are TEL-safe.
//   r2 B: 66 new blocks into a full 125, no next turn: 66 evictions, marked first, deepest
//      first: model takes the 65 marked then the oldest plain block, X0; linear the 66 marked.
//   r3 A turn 2 (2000 tokens): hits 59 blocks (model) or 58 (linear), so 99.72 ms under xi or
//      101.20 ms over it.
TEST(TLruLength, ModelCalibratedBudgetMeetsXiWithTheCachedContext) {
  Trace t;
  t.block_tokens = 16;
  t.add_request(0, ids(9, 0, 1), 16, 0, 9, 1);
  t.add_request(1, ids(0, 0, 124), 1984, 0, 0, 1);
  t.add_request(2, ids(1, 0, 66), 1056, 0, 1, 1);
  t.add_request(3, ids(0, 0, 125), 2000, 0, 0, 2);
  t.add_request(4, ids(9, 0, 125), 2000, 0, 9, 2);
  Oracle oracle = compute_oracle(t);
  for (const char* calibration : {"", "calibration=model,"}) {
    Recorded model = record(t, oracle, "tlru_length", std::string(calibration) + "xi_ms=100", 125);
    EXPECT_EQ(model.hits[3], 59u) << calibration;
    ASSERT_GE(model.victims.size(), 66u);
    EXPECT_EQ(model.victims[65], key(9, 0)) << calibration;
  }
  Recorded linear = record(t, oracle, "tlru_length", "calibration=linear,xi_ms=100", 125);
  EXPECT_EQ(linear.hits[3], 58u);
  EXPECT_EQ(linear.victims[65], key(0, 58));

  // The replay's TTFT of A's turn 2 under each.
  ReplayOptions opts;
  opts.xi_ms = 100;
  std::vector<double> ttft;
  opts.ttft_ms = &ttft;
  replay(t, &oracle, PolicySpec{"tlru_length", "xi_ms=100"}, 125, opts);
  EXPECT_NEAR(ttft[3], 99.722, 0.001);
  replay(t, &oracle, PolicySpec{"tlru_length", "calibration=linear,xi_ms=100"}, 125, opts);
  EXPECT_NEAR(ttft[3], 101.204, 0.001);
  // An explicit alpha or base selects the linear rule. alpha = 0.07 allows 1428 uncached
  // tokens: 36 blocks kept, the 66 evictions take A58..A123 (hits 58, where the model keeps 59).
  // base_ms = 50 with the fit's slope allows 542: 92 blocks kept, so the evictions take A92..A123,
  // X0 and A59..A91 (hits 59, where base 0 gives 58).
  EXPECT_EQ(record(t, oracle, "tlru_length", "xi_ms=100,alpha=0.07", 125).hits[3], 58u);
  EXPECT_EQ(record(t, oracle, "tlru_length", "xi_ms=100,base_ms=50", 125).hits[3], 59u);
}

// Conversations without cross-session sharing, every length a whole number of blocks, so the
// T-LRU paper's model holds exactly: TTFT = alpha x uncached tokens, a turn's prompt is the
// previous prompt + answer + new prompt.
Trace nested_conversations(uint64_t seed, uint32_t sessions, uint32_t max_turns) {
  Rng rng(seed);
  const uint32_t B = 16;
  struct Turn {
    Time time;
    uint32_t session, turn, blocks, answer_blocks;
  };
  std::vector<Turn> turns;
  for (uint32_t s = 0; s < sessions; ++s) {
    double t = rng.uniform() * 100;
    uint32_t blocks = 0, n = 1 + static_cast<uint32_t>(rng.below(max_turns));
    for (uint32_t k = 0; k < n; ++k) {
      blocks += 1 + static_cast<uint32_t>(rng.below(4));
      uint32_t answer = static_cast<uint32_t>(rng.below(3));
      turns.push_back({static_cast<Time>(t * 1e6), s, k + 1, blocks, answer});
      blocks += answer;
      t += 1 + rng.uniform() * 60;
    }
  }
  std::sort(turns.begin(), turns.end(), [](const Turn& a, const Turn& b) {
    return a.time != b.time ? a.time < b.time : a.session < b.session;
  });
  Trace trace;
  trace.block_tokens = B;
  for (const Turn& x : turns)
    trace.add_request(x.time, ids(x.session, 0, x.blocks), x.blocks * B, x.answer_blocks * B,
                      x.session, x.turn);
  return trace;
}

double tel_of(const Trace& trace, const Oracle& oracle, const std::string& name,
              const std::string& params, size_t capacity, const CostModel& cost, double xi) {
  ReplayOptions opts;
  opts.cost_model = &cost;
  opts.xi_ms = xi;
  opts.check_victims = true;
  return replay(trace, &oracle, PolicySpec{name, params}, capacity, opts).tel_ms;
}

// Evicts a uniformly random evictable leaf: a policy no rule of thumb would pick.
class RandomLeaf final : public Policy {
 public:
  RandomLeaf(const PrefixTree& tree, uint64_t seed) : tree_(tree), rng_(seed) {}
  void on_access(NodeId, const AccessInfo&) override {}
  void on_evictable(NodeId) override {}
  void on_unevictable(NodeId) override {}
  NodeId victim(Time) override {
    std::vector<NodeId> leaves;
    for (NodeId n = 0; n < tree_.id_limit(); ++n)
      if (tree_.contains(n) && tree_.is_evictable(n)) leaves.push_back(n);
    return leaves.empty() ? kNoNode : leaves[rng_.below(leaves.size())];
  }
  void on_removed(NodeId, Removal) override {}
  void reserve_ids(size_t) override {}

 private:
  const PrefixTree& tree_;
  Rng rng_;
};

double tel_random(const Trace& trace, size_t capacity, const CostModel& cost, double xi,
                  uint64_t seed) {
  auto tree = std::make_unique<PrefixTree>(capacity);
  auto policy = std::make_unique<RandomLeaf>(*tree, seed);
  PrefixCache cache(capacity, std::move(policy), std::move(tree));
  std::vector<double> ttft;
  for (size_t r = 0; r < trace.size(); ++r) {
    AccessResult a = cache.access(request_view(trace, r));
    ttft.push_back(replay_ttft_ms(cost, trace.prompt_tokens[r], a.hit_blocks, 0, 16));
  }
  return tail_excess_latency(ttft, xi);
}

// Theorem 1 of the paper: with TTFT linear in uncached tokens, no sharing between
// conversations and nested prompts, TEL-safe trimming + Belady minimizes TEL. Blocks are
// discrete here, so it holds exactly when xi is worth a whole number of blocks (each block below
// the budget then saves exactly alpha x B of TEL): xi in {0, 32, 64, 160} ms at 1 ms/token.
TEST(TailBelady, MinimizesTelWhereTheTheoremHolds) {
  CostModel cost = CostModel::make("linear", "", "b_ms=1");
  std::vector<std::string> others = {"lru",      "threshold_lru", "tlru",
                                     "tlru_end", "tlru_length",   "belady"};
  for (const char* extra : {"fifo", "lfu", "sieve", "s3fifo", "gdsf"}) {
    bool known = false;
    for (auto& n : PolicyRegistry::instance().names()) known |= n == extra;
    if (known) others.push_back(extra);
  }
  int strictly_better = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Trace trace = nested_conversations(seed, 14, 6);
    Oracle oracle = compute_oracle(trace);
    uint32_t longest = 0;
    for (size_t r = 0; r < trace.size(); ++r) longest = std::max(longest, trace.prompt_blocks(r));
    for (size_t capacity : {size_t{longest}, size_t{longest} + 20, size_t{longest} * 3}) {
      for (double xi : {0.0, 32.0, 64.0, 160.0}) {
        SCOPED_TRACE(::testing::Message()
                     << "seed " << seed << ", capacity " << capacity << ", xi " << xi);
        std::string xp = "xi_ms=" + std::to_string(int(xi)) + ",alpha=1,base_ms=0";
        double best = tel_of(trace, oracle, "tail_belady", xp, capacity, cost, xi);
        double min_other = 1e300;
        for (const std::string& name : others) {
          bool tail = name.rfind("tlru", 0) == 0;
          double tel = tel_of(trace, oracle, name, tail ? xp : "", capacity, cost, xi);
          EXPECT_LE(best, tel + 1e-6) << name;
          min_other = std::min(min_other, tel);
        }
        for (uint64_t s = 1; s <= 3; ++s) {
          double tel = tel_random(trace, capacity, cost, xi, seed * 10 + s);
          EXPECT_LE(best, tel + 1e-6) << "random leaf " << s;
        }
        // At xi = 0 TEL is alpha x all uncached tokens: hit-rate optimal Belady ties it.
        if (xi == 0)
          EXPECT_NEAR(best, tel_of(trace, oracle, "belady", "", capacity, cost, 0), 1e-6);
        strictly_better += best < min_other - 1e-6;
      }
    }
  }
  // The bound is not vacuous: some cases are strictly better than every online policy.
  EXPECT_GT(strictly_better, 0);
}

}  // namespace
}  // namespace kvpolicy
