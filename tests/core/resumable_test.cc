#include "kvpolicy/core/resumable.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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

namespace kvpolicy {
namespace {

// Resume knows a trace however its path is spelt: mc.jsonl, ./mc.jsonl, the absolute path and a
// symlink name one file (issue 26: they were three traces, 12 rows for 4 results).
TEST(TraceIdentity, EverySpellingOfOnePathIsOneTrace) {
  std::filesystem::path dir = testing::temp_path("identity");
  std::filesystem::create_directories(dir / "sub");
  std::filesystem::path file = dir / "mc.jsonl";
  std::ofstream(file) << "{}\n";
  std::filesystem::path link = dir / "link.jsonl";
  std::filesystem::remove(link);
  std::filesystem::create_symlink(file, link);
  std::string id = trace_identity(file.string());
  EXPECT_EQ(trace_identity((dir / "." / "mc.jsonl").string()), id);
  EXPECT_EQ(trace_identity((dir / "sub" / ".." / "mc.jsonl").string()), id);
  EXPECT_EQ(trace_identity(link.string()), id);
  std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  EXPECT_EQ(trace_identity("mc.jsonl"), id);
  EXPECT_EQ(trace_identity("./mc.jsonl"), id);
  std::filesystem::current_path(cwd);
  // A name that is no file (a generated or repeated trace) is its own identity.
  EXPECT_EQ(trace_identity("mooncake x18"), "mooncake x18");
}

}  // namespace
}  // namespace kvpolicy
