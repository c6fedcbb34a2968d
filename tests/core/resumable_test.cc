#include "kvpolicy/core/resumable.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "kvpolicy/core/error.h"
#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

void any_line(const ResultLine&) {}

TEST(ReadCompleteLines, MissingFileHasNoLinesAndTornLineIsCut) {
  EXPECT_TRUE(read_complete_lines(testing::temp_path("missing.jsonl"), any_line).empty());
  std::string path = testing::write_file("results.jsonl", "{\"a\":1}\n\n{\"b\":2}\n{\"c\"");
  auto lines = read_complete_lines(path, any_line);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].line_no, 3u);
  EXPECT_EQ(lines[1].text, "{\"b\":2}");
  EXPECT_EQ(testing::read_bytes(path), "{\"a\":1}\n\n{\"b\":2}\n");
}

// --resume given another file (issue 32: it cut the last line of an unrelated file before
// checking): every line is checked first, and a file that is no results file stays as it was.
TEST(ReadCompleteLines, AFileThatIsNoResultsFileIsRefusedUntouched) {
  auto no_text = [](const ResultLine& line) {
    if (line.text.rfind("{\"", 0) != 0) throw InputError("f", line.line_no, "", "no result");
  };
  for (const char* content :
       {"notes\nmore notes", "{\"a\":1}\nnotes\n{\"b\"", "{\"only\":\"a torn line\""}) {
    std::string path = testing::write_file("other.txt", content);
    EXPECT_THROW(read_complete_lines(path, no_text), InputError) << content;
    EXPECT_EQ(testing::read_bytes(path), content);
  }
}

// /dev/zero never ends: reading it back would grow without bound (1 GB after 8 s).
TEST(ReadCompleteLines, DeviceIsAnErrorNamingIt) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  try {
    read_complete_lines("/dev/zero", any_line);
    FAIL() << "read /dev/zero";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'/dev/zero'"), std::string::npos) << e.what();
  }
}

// A fresh results file replaces the old one only when its first row is written: a run that fails
// before (a trace that does not load) leaves the previous results (issue 32).
TEST(ResultsFile, AFreshFileIsEmptiedOnlyAtItsFirstRow) {
  std::string path = testing::write_file("previous.jsonl", "{\"previous\":1}\n");
  {
    ResultsFile out(path, true);
    EXPECT_EQ(testing::read_bytes(path), "{\"previous\":1}\n");
  }
  EXPECT_EQ(testing::read_bytes(path), "{\"previous\":1}\n");
  {
    ResultsFile out(path, true);
    out.append("{\"new\":1}");
    out.append("{\"new\":2}");
  }
  EXPECT_EQ(testing::read_bytes(path), "{\"new\":1}\n{\"new\":2}\n");
  EXPECT_THROW(ResultsFile(testing::temp_path("no-such-dir") + "/r.jsonl", true), ConfigError);
}

// A row of the same trace path with another content is refused, naming both; rows of other
// traces and of this content pass.
TEST(RefuseStaleRow, AChangedTraceIsNamedWithBothContents) {
  std::string trace = testing::write_file("t.jsonl", "{}\n");
  EXPECT_NO_THROW(refuse_stale_row("r.jsonl", 1, trace, "300/900/00000000000000aa", trace,
                                   "300/900/00000000000000aa"));
  EXPECT_NO_THROW(refuse_stale_row("r.jsonl", 1, "other.jsonl", "300/900/00000000000000aa", trace,
                                   "3000/9000/00000000000000bb"));
  InputError e = testing::input_error([&] {
    refuse_stale_row("r.jsonl", 4, trace, "300/900/00000000000000aa", trace,
                     "3000/9000/00000000000000bb");
  });
  EXPECT_EQ(e.file(), "r.jsonl");
  EXPECT_EQ(e.line(), 4u);
  std::string what = e.what();
  EXPECT_NE(what.find("300 requests, 900 block accesses"), std::string::npos) << what;
  EXPECT_NE(what.find("3000 requests, 9000 block accesses"), std::string::npos) << what;
  // Rows written before results carried a fingerprint cannot be told apart: refused too.
  EXPECT_THROW(refuse_stale_row("r.jsonl", 1, trace, "", trace, "3000/9000/00000000000000bb"),
               InputError);
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
