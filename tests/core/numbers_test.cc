#include "kvpolicy/core/numbers.h"

#include <gtest/gtest.h>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

TEST(Numbers, DecimalOnlyWholeTextFinite) {
  EXPECT_EQ(read_number("12"), 12.0);
  EXPECT_EQ(read_number("-0.5"), -0.5);
  EXPECT_EQ(read_number(".25"), 0.25);
  EXPECT_EQ(read_number("1e3"), 1000.0);
  for (const char* bad : {"", "-", "nan", "inf", "-inf", "infinity", "0x10", "+1", " 1", "1 ",
                          "1e400", "1,5", "abc", "1.5x"})
    EXPECT_FALSE(read_number(bad)) << bad;
}

TEST(Numbers, IntegersFitTheirType) {
  EXPECT_EQ(read_uint("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(read_uint("18446744073709551616"));
  EXPECT_FALSE(read_uint("-1"));  // CLI11 alone takes it as 2^64 - 1
  EXPECT_FALSE(read_uint("1e3"));
  EXPECT_FALSE(read_uint("0x10"));
  EXPECT_EQ(read_int("-9223372036854775808"), INT64_MIN);
  EXPECT_FALSE(read_int("9223372036854775808"));
}

TEST(Numbers, CheckedStatesTheBounds) {
  EXPECT_EQ(checked_number("0.5", 0, 1, "--x"), 0.5);
  try {
    checked_number("2", 0, 1, "--x");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "--x: '2' is not a number in [0, 1]");
  }
  EXPECT_THROW(checked_uint("0", 1, 10, "--n"), ConfigError);
  EXPECT_EQ(checked_uint("10", 1, 10, "--n"), 10u);
}

TEST(Numbers, LeadingNumberBeforeAUnit) {
  EXPECT_EQ(number_length("4.8GiB"), 3u);
  EXPECT_EQ(number_length("5%"), 1u);
  EXPECT_EQ(number_length("1e3t"), 3u);
  EXPECT_EQ(number_length("GB"), 0u);
  EXPECT_EQ(number_length("inf"), 0u);
  EXPECT_EQ(number_length("nanGB"), 0u);
}

}  // namespace
}  // namespace kvpolicy
