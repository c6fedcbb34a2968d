// Capacities in every unit a user writes, and one clear error for the rest.
#include "kvpolicy/core/capacity.h"

#include <gtest/gtest.h>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

TEST(Capacity, EveryUnit) {
  const size_t unique = 10000;
  const uint32_t block_tokens = 16;
  const double block_bytes = 16 * 131072.0;  // Llama-3.1-8B, bf16: 2 MiB per 16-token block
  auto blocks = [&](const char* text) {
    return parse_capacity(text).blocks(unique, block_tokens, block_bytes);
  };
  EXPECT_EQ(blocks("4096"), 4096u);
  EXPECT_EQ(blocks("0.05"), 500u);
  EXPECT_EQ(blocks("5%"), 500u);
  EXPECT_EQ(blocks("10000t"), 625u);
  EXPECT_EQ(blocks("1GiB"), 512u);
  EXPECT_EQ(blocks("40GB"), static_cast<size_t>(40e9 / block_bytes));
  EXPECT_EQ(blocks("512MiB"), 256u);
  EXPECT_TRUE(parse_capacity("0.5").is_fraction());
  EXPECT_FALSE(parse_capacity("2GB").is_fraction());
  EXPECT_EQ(parse_capacity_list("1%,2GB,100").size(), 3u);
}

TEST(Capacity, BadTextIsOneClearError) {
  for (const char* bad : {"", "abc", "-5", "0", "nan", "inf", "1.5", "40XB", "150%", "1e300"}) {
    try {
      parse_capacity(bad).blocks(10, 16, 1e6);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("capacity '"), std::string::npos) << e.what();
    }
  }
  // Below one block once converted.
  EXPECT_THROW(parse_capacity("1t").blocks(10, 16, 1e6), ConfigError);
  EXPECT_THROW(parse_capacity("0.01").blocks(10, 16, 1e6), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
