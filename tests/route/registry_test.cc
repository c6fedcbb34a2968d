// Router specs: parsing, and one ConfigError for each kind of bad input.
#include <gtest/gtest.h>

#include "kvpolicy/core/error.h"
#include "kvpolicy/route/router.h"

namespace kvpolicy {
namespace {

std::string config_error(const std::string& spec, uint32_t workers) {
  try {
    make_router(parse_router_spec(spec), RouterContext{.workers = workers});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RouterRegistry, RejectsBadInputWithOneConfigError) {
  EXPECT_NE(
      config_error("nope", 2).find("unknown router 'nope' (known: aibrix_prefix, cache_aware,"),
      std::string::npos);
  EXPECT_NE(config_error("cache_aware:cache_threshold=2", 2).find("cache_threshold"),
            std::string::npos);
  EXPECT_NE(config_error("lbgr:nope=1", 2).find("nope"), std::string::npos);
  EXPECT_NE(config_error("dynamo:events=fuzzy", 2).find("events"), std::string::npos);
  EXPECT_NE(config_error("session_affinity:load_factor=0.5", 2).find("load_factor"),
            std::string::npos);
  EXPECT_NE(config_error("round_robin", 0).find("at least one worker"), std::string::npos);
  EXPECT_NE(config_error("cache_aware", 65).find("at most 64"), std::string::npos);
  EXPECT_NE(config_error("dynamo:events=approx", 65).find("64"), std::string::npos);
  EXPECT_EQ(config_error("dynamo", 65), "");  // the exact view has no worker limit
}

TEST(RouterRegistry, ParsesListsWithParameters) {
  std::vector<RouterSpec> specs =
      parse_router_list("cache_aware:balance_abs=4,balance_rel=2,,lbgr,dynamo:events=approx");
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].label(), "cache_aware:balance_abs=4,balance_rel=2");
  EXPECT_EQ(specs[1].label(), "lbgr");
  EXPECT_EQ(specs[2].label(), "dynamo:events=approx");
  EXPECT_THROW(parse_router_list(","), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
