#include "kvpolicy/sim/robustness.h"

#include <gtest/gtest.h>

#include <string>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

TEST(ParseNoiseLevels, RangeAndList) {
  EXPECT_EQ(parse_noise_levels("0:1:0.25"), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(parse_noise_levels("0,0.1"), (std::vector<double>{0, 0.1}));
  EXPECT_EQ(parse_noise_levels("0:0.999:0.001").size(), kMaxNoiseLevels);
}

// 0:1:1e-9 used to allocate a billion levels (past 2 GB) before any check.
TEST(ParseNoiseLevels, TooManyLevelsIsAnErrorNamingTheCount) {
  try {
    parse_noise_levels("0:1:1e-9");
    FAIL() << "a billion noise levels accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(" levels; at most 1000"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_noise_levels("0:1:0.001"), ConfigError);  // 1,001 levels
}

}  // namespace
}  // namespace kvpolicy
