// Whether a spec reads the trace's future depends on its parameters where it does: the sweeps
// compute the oracle only then, and compare labels only those results offline.
#include <gtest/gtest.h>

#include <string>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/tree.h"
#include "kvpolicy/policy/listing.h"
#include "kvpolicy/policy/policy.h"

namespace kvpolicy {
namespace {

TEST(PolicyRegistry, NeedsFutureFollowsTheParameters) {
  EXPECT_FALSE(needs_future(parse_policy_spec("lru")));
  EXPECT_TRUE(needs_future(parse_policy_spec("belady")));
  EXPECT_TRUE(needs_future(parse_policy_spec("laru")));  // the oracle predictor by default
  EXPECT_TRUE(needs_future(parse_policy_spec("laru:predictor=noisy,p=0.3")));
  EXPECT_FALSE(needs_future(parse_policy_spec("laru:predictor=gbm")));
  EXPECT_TRUE(needs_future(parse_policy_spec("fpb:predictor=gbm,audit=true")));
  EXPECT_FALSE(needs_future(parse_policy_spec("lpc")));  // the trace's classifier scores
  EXPECT_TRUE(needs_future(parse_policy_spec("lpc:predictor=oracle")));
  EXPECT_FALSE(needs_future(parse_policy_spec("guarded:inner=lpc")));
  EXPECT_TRUE(needs_future(parse_policy_spec("guarded:inner=fpb")));
  EXPECT_FALSE(needs_future(parse_policy_spec("guarded:inner=fpb,inner_params=predictor=gbm")));
  EXPECT_THROW(needs_future(parse_policy_spec("laru:predictor=psychic")), ConfigError);
}

TEST(PolicyRegistry, AnOnlineSpecOfAnOfflineCapablePolicyBuildsWithoutTheFuture) {
  PrefixTree tree;
  PolicyContext ctx;
  ctx.tree = &tree;
  ctx.capacity_blocks = 16;
  EXPECT_NO_THROW(make_policy(parse_policy_spec("laru:predictor=gbm"), ctx));
  EXPECT_NO_THROW(make_policy(parse_policy_spec("lpc"), ctx));
  EXPECT_THROW(make_policy(parse_policy_spec("lpc:predictor=oracle"), ctx), ConfigError);
}

// `kvpolicy policies` printed "offline" for guarded and lpc, which needs_future() (Python's
// is_offline) calls online with their defaults: the listing now asks needs_future().
TEST(PolicyRegistry, ListingSaysOfflineExactlyWhenNeedsFutureDoes) {
  const std::string listing = "\n" + policy_listing();
  for (auto& p : PolicyRegistry::instance().all()) {
    SCOPED_TRACE(p.name);
    size_t at = listing.find("\n" + p.name + "\n  ");
    ASSERT_NE(at, std::string::npos);
    std::string entry = listing.substr(at, listing.find("\n\n", at) - at);
    bool says_offline = entry.find("\n  offline:") != std::string::npos;
    EXPECT_EQ(says_offline, needs_future(PolicySpec{p.name, ""})) << entry;
  }
}

}  // namespace
}  // namespace kvpolicy
