// The routers' approximate tree (src/route/approx_tree.h): per-worker longest matches, LRU
// eviction of a worker's leaves over its size limit, the TTL, against hand-worked cases and a
// brute-force model.
#include "../../src/route/approx_tree.h"

#include <gtest/gtest.h>

#include <map>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/generators.h"
#include "support/fake_cluster.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::prompt;
using testing::random_workload;

std::vector<uint32_t> match(ApproxTree& tree, const std::vector<BlockKey>& blocks, Time now) {
  std::vector<uint32_t> out;
  tree.match(blocks, now, out);
  return out;
}

TEST(ApproxTree, MatchesEachWorkersLongestPrefix) {
  ApproxTree tree(3, 16, 1 << 20);
  tree.insert(0, prompt({1, 2, 3}), 1);
  tree.insert(1, prompt({1, 2, 4}), 2);
  EXPECT_EQ(match(tree, prompt({1, 2, 3}), 3), (std::vector<uint32_t>{3, 2, 0}));
  EXPECT_EQ(match(tree, prompt({1, 9}), 3), (std::vector<uint32_t>{1, 1, 0}));
  EXPECT_EQ(match(tree, prompt({}), 3), (std::vector<uint32_t>{0, 0, 0}));
  EXPECT_EQ(tree.tokens(0), 48u);
  EXPECT_EQ(tree.nodes(), 4u);
  EXPECT_EQ(tree.check_invariants(), "");
}

TEST(ApproxTree, EvictsTheWorkersLeastRecentlyTouchedLeavesOverItsLimit) {
  ApproxTree tree(2, 16, 4 * 16);  // four blocks per worker
  tree.insert(1, prompt({1, 2, 3}), 0);
  tree.insert(0, prompt({1, 2, 3}), 1);
  tree.insert(0, prompt({7, 8}), 2);  // five blocks: the oldest leaf, block 3, goes
  EXPECT_EQ(match(tree, prompt({1, 2, 3}), 2), (std::vector<uint32_t>{2, 3}));
  tree.insert(0, prompt({1, 2}), 3);  // touches 1, 2: now 7, 8 are the oldest
  tree.insert(0, prompt({5}), 4);     // 8, the deeper of the two, goes first
  EXPECT_EQ(match(tree, prompt({7, 8}), 4), (std::vector<uint32_t>{1, 0}));
  EXPECT_EQ(match(tree, prompt({1, 2}), 4), (std::vector<uint32_t>{2, 2}));
  EXPECT_EQ(match(tree, prompt({5}), 4), (std::vector<uint32_t>{1, 0}));
  EXPECT_EQ(tree.tokens(0), 4u * 16);
  EXPECT_EQ(tree.check_invariants(), "");
}

TEST(ApproxTree, ForgetsWhatAWorkerWasNotSentWithinTheTtl) {
  ApproxTree tree(1, 16, 1 << 20, /*ttl=*/100);
  tree.insert(0, prompt({1, 2}), 0);
  tree.insert(0, prompt({1}), 80);
  EXPECT_EQ(match(tree, prompt({1, 2}), 100), std::vector<uint32_t>{2});
  EXPECT_EQ(match(tree, prompt({1, 2}), 150), std::vector<uint32_t>{1});
  EXPECT_EQ(match(tree, prompt({1, 2}), 181), std::vector<uint32_t>{0});
  EXPECT_EQ(tree.nodes(), 0u);
  EXPECT_EQ(tree.tokens(0), 0u);
}

TEST(ApproxTree, RejectsMoreWorkersThanItsMask) {
  EXPECT_NO_THROW(ApproxTree(64, 16, 1));
  EXPECT_THROW(ApproxTree(65, 16, 1), ConfigError);
  EXPECT_THROW(ApproxTree(0, 16, 1), ConfigError);
}

// A brute-force model: per worker, each held key with its last touch and depth; over the limit
// the entry of oldest touch goes, the deepest first among equals.
void check_against_model(uint32_t requests, uint32_t limit_blocks) {
  const uint32_t workers = 5, block_tokens = 4;
  ApproxTree tree(workers, block_tokens, limit_blocks * block_tokens);
  struct Held {
    uint64_t touch;
    size_t depth;
  };
  std::vector<std::map<BlockKey, Held>> model(workers);
  Trace trace = random_workload({.seed = 4, .requests = requests});
  Rng rng(9);
  std::vector<uint32_t> got;
  for (size_t r = 0; r < trace.size(); ++r) {
    RequestView view = request_view(trace, r);
    std::vector<uint32_t> want(workers, 0);
    for (WorkerId w = 0; w < workers; ++w)
      while (want[w] < view.blocks.size() && model[w].contains(view.blocks[want[w]])) ++want[w];
    tree.match(view.blocks, Time(r), got);
    ASSERT_EQ(got, want) << "request " << r;
    auto w = static_cast<WorkerId>(rng.below(workers));
    tree.insert(w, view.blocks, Time(r));
    for (size_t i = 0; i < view.blocks.size(); ++i) model[w][view.blocks[i]] = {r, i};
    while (model[w].size() > limit_blocks) {
      auto victim = model[w].begin();
      for (auto it = model[w].begin(); it != model[w].end(); ++it)
        if (it->second.touch < victim->second.touch ||
            (it->second.touch == victim->second.touch && it->second.depth > victim->second.depth))
          victim = it;
      model[w].erase(victim);
    }
    ASSERT_EQ(tree.blocks(w), model[w].size());
    ASSERT_EQ(tree.check_invariants(), "") << "request " << r;
  }
}

TEST(ApproxTree, AgreesWithABruteForceModelOnRandomWorkloads) { check_against_model(600, 30); }

// A limit the workers reach late: thousands of log records are removed, so the log drops its
// removed front (renumbering is the next test's).
TEST(ApproxTree, AgreesWithTheModelAcrossLogCompactions) { check_against_model(3000, 1000); }

TEST(ApproxTree, KeepsItsLogWithinAConstantOfItsBlocksUnderRepeatedTouches) {
  ApproxTree tree(2, 16, 1 << 20);
  // An older holding stays at the log's front, so the touches' dead records pile up behind it.
  tree.insert(0, prompt({100, 101}), 0);
  std::vector<BlockKey> blocks = prompt({1, 2, 3, 4, 5, 6, 7, 8});
  for (Time t = 1; t < 20000; ++t) {
    tree.insert(0, blocks, t);
    if (t % 1000 == 0) ASSERT_EQ(tree.check_invariants(), "") << "touch " << t;
  }
  EXPECT_EQ(tree.blocks(0), 10u);
  // 160,000 touches of 8 holdings: without compaction the log would hold them all (it
  // renumbers its live records dozens of times here).
  EXPECT_LT(tree.log_records(0), 16 * 1024u);
  EXPECT_EQ(match(tree, blocks, 20000), (std::vector<uint32_t>{8, 0}));
  EXPECT_EQ(match(tree, prompt({100, 101, 102}), 20000), (std::vector<uint32_t>{2, 0}));
  // Touching the old holding again finds its record where compaction renumbered it.
  tree.insert(0, prompt({100, 101}), 20000);
  EXPECT_EQ(tree.blocks(0), 10u);
  EXPECT_EQ(tree.check_invariants(), "");
}

}  // namespace
}  // namespace kvpolicy
