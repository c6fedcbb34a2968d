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

bool has(const std::vector<PolicySpec>& specs, const std::string& label) {
  for (auto& s : specs)
    if (s.label() == label) return true;
  return false;
}

// A trace without continuation scores cannot feed LPC's default predictor: a set (online, all)
// leaves it out and says so; named on its own it is an error; it is never swapped for its oracle
// variant (offline) behind the user's back.
TEST(PolicyRegistry, PolicySetsLeaveOutWhatTheTraceCannotFeed) {
  std::string skipped;
  auto online = policies_for_trace("online", false, &skipped);
  EXPECT_FALSE(has(online, "lpc"));
  EXPECT_FALSE(has(online, "lpc:predictor=oracle"));
  EXPECT_TRUE(has(online, "lru"));
  for (auto& s : online) EXPECT_FALSE(needs_future(s)) << s.label();
  EXPECT_EQ(online.size() + 1, expand_policy_sets("online").size());
  EXPECT_NE(skipped.find("skipped lpc"), std::string::npos) << skipped;
  EXPECT_NE(skipped.find("continuation scores"), std::string::npos) << skipped;

  auto all = policies_for_trace("all", false, &skipped);
  EXPECT_FALSE(has(all, "lpc"));
  EXPECT_TRUE(has(all, "belady"));
  EXPECT_FALSE(skipped.empty());

  // With scores nothing is left out; an oracle variant needs none.
  EXPECT_TRUE(has(policies_for_trace("online", true, &skipped), "lpc"));
  EXPECT_TRUE(skipped.empty());
  EXPECT_TRUE(
      has(policies_for_trace("lru,lpc:predictor=oracle", false, &skipped), "lpc:predictor=oracle"));
  EXPECT_TRUE(skipped.empty());

  for (const char* named : {"lpc", "online,lpc", "lru,lpc:predictor=trace"}) {
    try {
      policies_for_trace(named, false, &skipped);
      ADD_FAILURE() << named << " ran on a trace without continuation scores";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("continuation scores"), std::string::npos) << e.what();
    }
  }
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
