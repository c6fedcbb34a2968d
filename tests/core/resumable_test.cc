#include "kvpolicy/core/resumable.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "kvpolicy/core/error.h"
#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

TEST(ReadCompleteLines, MissingFileHasNoLinesAndTornLineIsCut) {
  EXPECT_TRUE(read_complete_lines(testing::temp_path("missing.jsonl")).empty());
  std::string path = testing::write_file("results.jsonl", "{\"a\":1}\n\n{\"b\":2}\n{\"c\"");
  auto lines = read_complete_lines(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].line_no, 3u);
  EXPECT_EQ(lines[1].text, "{\"b\":2}");
  EXPECT_EQ(testing::read_bytes(path), "{\"a\":1}\n\n{\"b\":2}\n");
}

// /dev/zero never ends: reading it back would grow without bound (1 GB after 8 s).
TEST(ReadCompleteLines, DeviceIsAnErrorNamingIt) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  try {
    read_complete_lines("/dev/zero");
    FAIL() << "read /dev/zero";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'/dev/zero'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvpolicy
