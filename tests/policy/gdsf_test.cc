// GDSF on hand-made sequences, priorities worked out in the comments (H = L + freq x cost).
#include <gtest/gtest.h>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using Path = std::vector<uint64_t>;
using testing::ScriptedCache;

TEST(Gdsf, UniformCostAgesThroughTheClock) {
  ScriptedCache c("gdsf:cost=uniform", 3);
  c.request({1});
  c.request({2});
  c.request({3});  // H = 1, 1, 1 (L = 0)
  c.request({1});
  c.request({1});  // H1 = 3
  c.request({2});  // H2 = 2
  c.request({4});  // evict 3 (H 1); L = 1; H4 = 1 + 1 = 2
  c.request({5});  // 2 and 4 tie at 2: 2 was accessed earlier: evict 2; L = 2; H5 = 3
  c.request({6});  // evict 4 (H 2); H6 = 3
  c.request({7});  // 1, 5, 6 tie at 3: 1 was accessed earliest: evict it
  EXPECT_EQ(c.victims(), (std::vector<Path>{{3}, {2}, {4}, {1}}));
}

TEST(Gdsf, DeeperBlocksCostMoreToRecompute) {
  // Leaves {1, 2} (depth 1) and {3} (depth 0), both accessed once; 3 is more recent.
  ScriptedCache depth("gdsf:cost=depth", 3);  // cost = 1 + 0.05 x depth: H = 1.05 and 1.0
  depth.request({1, 2});
  depth.request({3});
  depth.request({4});
  EXPECT_EQ(depth.victims(), (std::vector<Path>{{3}}));

  ScriptedCache uniform("gdsf:cost=uniform", 3);  // tie at 1: the older one goes
  uniform.request({1, 2});
  uniform.request({3});
  uniform.request({4});
  EXPECT_EQ(uniform.victims(), (std::vector<Path>{{1, 2}}));

  ScriptedCache flat("gdsf:cost=depth,attention_ratio=0", 3);  // no attention term
  flat.request({1, 2});
  flat.request({3});
  flat.request({4});
  EXPECT_EQ(flat.victims(), uniform.victims());
}

TEST(Gdsf, CostModelChargesAttentionOverTheCachedPrefix) {
  // The default cost is the cost model's FLOPs for the block after `depth` cached blocks: the
  // depth-1 block costs a little more than the first, so the shallow leaf {3} goes first.
  CostModel model;
  EXPECT_GT(model.prefill_flops(16, 16), model.prefill_flops(16, 0));
  ScriptedCache c("gdsf", 3);
  c.request({1, 2});
  c.request({3});
  c.request({4});
  EXPECT_EQ(c.victims(), (std::vector<Path>{{3}}));
}

TEST(Gdsf, RejectsBadParameters) {
  EXPECT_THROW(ScriptedCache("gdsf:cost=tokens", 3), ConfigError);
  EXPECT_THROW(ScriptedCache("gdsf:attention_ratio=-1", 3), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
