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
  for (const char* bad : {"", "abc", "-5", "0", "nan", "inf", "1.5", "40XB", "1e300"}) {
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

// 100 % is every unique block, above 100 % is more (it was refused), and a share keeps its unit
// through replay_capacity: re-encoded as the bare number 1.0 it was read as one block.
TEST(Capacity, HundredPercentIsEveryUniqueBlock) {
  const size_t unique = 2240;
  EXPECT_EQ(parse_capacity("100%").blocks(unique), unique);
  EXPECT_EQ(parse_capacity("150%").blocks(unique), 3360u);
  for (const char* text : {"100%", "150%", "2%", "0.05"}) {
    CapacitySpec spec = parse_capacity(text);
    CapacitySpec replayed = replay_capacity(spec, unique, 16, 1e6);
    EXPECT_TRUE(replayed.is_fraction()) << text;
    EXPECT_EQ(replayed.fraction(), spec.value) << text;
    EXPECT_EQ(replayed.blocks(unique), spec.blocks(unique)) << text;
  }
  EXPECT_EQ(replay_capacity(parse_capacity("100%"), unique, 16, 1e6).label(), "100%");
  CapacitySpec tokens = replay_capacity(parse_capacity("1000t"), unique, 16, 1e6);
  EXPECT_FALSE(tokens.is_fraction());
  EXPECT_EQ(tokens.fraction(), -1);
  EXPECT_EQ(tokens.blocks(unique), 62u);
}

// One rounding rule: a share to the nearest block (2 % of 2,240 is 44.8: 45, where lpc-study
// floored it to 44), tokens and KV memory down to the whole blocks they hold.
TEST(Capacity, OneRoundingRule) {
  EXPECT_EQ(parse_capacity("2%").blocks(2240), 45u);
  EXPECT_EQ(parse_capacity("0.02").blocks(2240), 45u);
  EXPECT_EQ(parse_capacity("2%").blocks(2220), 44u);  // 44.4
  EXPECT_EQ(parse_capacity("31t").blocks(2240, 16), 1u);
  EXPECT_EQ(parse_capacity("2.9MB").blocks(2240, 16, 1e6), 2u);
  EXPECT_EQ(CapacitySpec::share(0.02).blocks(2240), 45u);
  EXPECT_EQ(CapacitySpec::whole_blocks(45).blocks(2240), 45u);
  // A share that rounds to no block is refused, as tokens or memory below one block are.
  EXPECT_THROW(parse_capacity("0.02%").blocks(2240), ConfigError);
  // Tokens or memory without what converts them: an error, not a silent zero.
  EXPECT_THROW(parse_capacity("1000t").blocks(2240), ConfigError);
  EXPECT_THROW(parse_capacity("1GB").blocks(2240, 16), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
