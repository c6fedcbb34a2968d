// tlru_tokens (SGLang's upstream T-LRU, threshold and next prompt in tokens): hand-worked
// budgets with 16-token blocks, SGLang's high-water conversation length, and LRU when nothing
// is TEL-safe.
#include <gtest/gtest.h>

#include "engine_policies_support.h"
#include "kvpolicy/core/error.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::expect_same_victims;
using testing::registry_policy;
using testing::ScriptedCache;
using Path = std::vector<uint64_t>;

// ScriptedCache's requests have 16 tokens per block and no answer: L = 16 x blocks.
TEST(TLruTokens, KeepsTheBudgetAndEvictsTheTailFirst) {
  ScriptedCache c("tlru_tokens:threshold=32,next_prompt_estimate=0", 7);
  c.request({1, 2, 3, 4});  // L 64: keeps 64 - 32 = 32 tokens, blocks 2 and 3 TEL-safe
  c.request({5, 6, 7});     // L 48: keeps 16 tokens, blocks 1 and 2 TEL-safe
  c.request({8});           // L 16: keeps none; the cache is full: TEL-safe blocks go first
  c.request({9});
  c.request({10});
  c.request({11});
  c.request({12});  // the TEL-safe tails are gone; {8} was marked when its turn ended
  EXPECT_EQ(c.victims(), (std::vector<Path>{{1, 2, 3, 4}, {1, 2, 3}, {5, 6, 7}, {5, 6}, {8}}));
  EXPECT_TRUE(c.cached({1, 2}));  // within r1's budget: LRU would have evicted it third
}

TEST(TLruTokens, AConversationIsJudgedByItsLongestHistory) {
  // SGLang's convo_length is a high-water mark: r2 reaches {1, 2} with a 32-token history, but
  // the blocks still belong to r1's 64-token one, so they keep r1's budget (32 tokens) and are
  // not TEL-safe. Judged by r2 alone (budget 0) {1, 2} would go third.
  ScriptedCache c("tlru_tokens:threshold=32,next_prompt_estimate=0", 4);
  c.request({1, 2, 3, 4});
  c.request({1, 2});
  c.request({5});
  c.request({6});
  c.request({7});
  EXPECT_EQ(c.victims(), (std::vector<Path>{{1, 2, 3, 4}, {1, 2, 3}, {5}}));
  EXPECT_TRUE(c.cached({1, 2}));
}

TEST(TLruTokens, NextPromptEstimateWidensTheBudget) {
  // threshold 32, Q-hat 16: a 64-token turn keeps 48 tokens, so only block 3 is TEL-safe.
  ScriptedCache c("tlru_tokens:threshold=32,next_prompt_estimate=16", 5);
  c.request({1, 2, 3, 4});
  c.request({5});  // L 16: keeps 0, TEL-safe
  c.request({6});
  c.request({7});
  EXPECT_EQ(c.victims(), (std::vector<Path>{{1, 2, 3, 4}, {5}}));
}

TEST(TLruTokens, NothingTelSafeIsLru) {
  // threshold 0: every conversation keeps all of itself plus Q-hat.
  expect_same_victims("tlru_tokens threshold 0", registry_policy("tlru_tokens:threshold=0"),
                      registry_policy("lru"));
}

TEST(TLruTokens, RejectsBadParameters) {
  EXPECT_THROW(ScriptedCache("tlru_tokens:threshold=-1", 3), ConfigError);
  EXPECT_THROW(ScriptedCache("tlru_tokens:next_prompt_estimate=x", 3), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
