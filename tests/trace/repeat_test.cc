// repeat_with_fresh_keys: a longer trace of the same shape, sharing no block across copies.
#include <gtest/gtest.h>

#include <algorithm>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/trace.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

TEST(RepeatWithFreshKeys, CopiesShareNoBlockAndKeepTheShape) {
  Trace base = testing::random_workload({.seed = 4, .requests = 120});
  Trace t = repeat_with_fresh_keys(base, 3);
  ASSERT_EQ(t.size(), 3 * base.size());
  EXPECT_EQ(t.num_block_accesses(), 3 * base.num_block_accesses());
  EXPECT_EQ(count_unique_blocks(t), 3 * count_unique_blocks(base));
  EXPECT_TRUE(std::is_sorted(t.time.begin(), t.time.end()));
  t.validate();
  for (size_t c = 0; c < 3; ++c) {
    for (size_t r = 0; r < base.size(); ++r) {
      size_t q = c * base.size() + r;
      ASSERT_EQ(t.prompt_blocks(q), base.prompt_blocks(r));
      EXPECT_EQ(t.prompt_tokens[q], base.prompt_tokens[r]);
      EXPECT_EQ(t.turn[q], base.turn[r]);
      // Shared prefixes within a copy stay shared: the first block matches its copy's.
      if (r > 0 && base.prompt_blocks(r) > 0 && base.prompt_blocks(0) > 0)
        EXPECT_EQ(t.prompt(q)[0] == t.prompt(c * base.size())[0],
                  base.prompt(r)[0] == base.prompt(0)[0]);
    }
  }
}

TEST(RepeatWithFreshKeys, OneCopyIsTheTraceAndNoneIsAnError) {
  Trace base = testing::random_workload({.seed = 5, .requests = 40});
  Trace one = repeat_with_fresh_keys(base, 1);
  EXPECT_EQ(one.size(), base.size());
  EXPECT_EQ(count_unique_blocks(one), count_unique_blocks(base));
  EXPECT_THROW(repeat_with_fresh_keys(base, 0), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
