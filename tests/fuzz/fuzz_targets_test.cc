// Every fuzz target over its seeds, in the unit tests and so under the sanitizers: the seeds
// that must read do, the regressions of issue 26 are rejected cleanly, and none trips an
// invariant.
#include "fuzz_targets.h"

#include <gtest/gtest.h>

#include <cstring>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::fuzz {
namespace {

class FuzzTargetSeeds : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzTargetSeeds, EverySeedGetsItsVerdict) {
  const FuzzTarget& target = fuzz_target(GetParam());
  std::vector<Seed> seeds = target.seeds();
  ASSERT_FALSE(seeds.empty());
  bool some_accepted = false;
  for (const Seed& seed : seeds) {
    SCOPED_TRACE(seed.name);
    Verdict v = target.run(seed.bytes);
    some_accepted |= v == Verdict::kAccepted;
    if (seed.expect) EXPECT_EQ(v, *seed.expect);
  }
  // A target whose seeds all fail to parse would fuzz only the first few bytes of a format.
  EXPECT_TRUE(some_accepted);
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const FuzzTarget& t : fuzz_targets()) out.push_back(t.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, FuzzTargetSeeds, ::testing::ValuesIn(names()), [](const auto& info) {
  std::string n = info.param;
  for (char& c : n)
    if (c == '-') c = '_';
  return n;
});

TEST(FuzzTargets, SealingReachesTheChecksAfterTheChecksum) {
  // Request 0's session id set to 0xFFFFFFFE: raw, the checksum rejects it; sealed, the
  // structural check does, naming the field.
  std::string bytes = fuzz_target("native").seeds().front().bytes;
  uint64_t n;
  uint32_t name_bytes, categories;
  std::memcpy(&n, bytes.data() + 16, 8);
  std::memcpy(&name_bytes, bytes.data() + 32, 4);
  std::memcpy(&categories, bytes.data() + 36, 4);
  size_t at = 48 + name_bytes;
  for (uint32_t c = 0; c < categories; ++c) {
    uint32_t len;
    std::memcpy(&len, bytes.data() + at, 4);
    at += 4 + len;
  }
  const uint32_t sparse = 0xFFFFFFFE;
  std::memcpy(bytes.data() + at + 8 * n, &sparse, 4);  // after the time column
  std::string path = scratch_file(bytes);
  auto field_of = [&] {
    try {
      read_trace(path, "native", {});
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(field_of(), "checksum");
  std::optional<uint64_t> sum = native_trace_checksum(path);
  ASSERT_TRUE(sum);
  std::memcpy(bytes.data() + kNativeChecksumOffset, &*sum, 8);
  path = scratch_file(bytes);
  EXPECT_EQ(field_of(), "session");
  EXPECT_EQ(fuzz_target("native-sealed").run(bytes), Verdict::kRejected);
}

TEST(FuzzTargets, AnInvariantBrokenAborts) {
  EXPECT_DEATH(broken("on purpose"), "fuzz invariant broken: on purpose");
}

}  // namespace
}  // namespace kvpolicy::fuzz
