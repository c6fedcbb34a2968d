#include "kvpolicy/core/file_identity.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

namespace fs = std::filesystem;

// Every spelling of one file is one identity (issue 32: `-tFILE --json ./FILE`, a hard link and
// a symlink went past a guard that compared spellings), and so is every spelling of a file not
// created yet.
TEST(FileIdentity, EverySpellingOfOneFileIsOneFile) {
  fs::path dir = testing::temp_path("identity");
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  fs::path file = dir / "t.kvtrace";
  testing::write_file("unused", "");
  std::ofstream(file) << "trace";
  fs::create_hard_link(file, dir / "hard.kvtrace");
  fs::create_symlink(file, dir / "soft.kvtrace");
  auto id = file_identity(file.string());
  ASSERT_TRUE(id);
  EXPECT_TRUE(id->name.empty());
  for (fs::path other : {dir / "." / "t.kvtrace", dir / "sub" / ".." / "t.kvtrace",
                         dir / "hard.kvtrace", dir / "soft.kvtrace"})
    EXPECT_EQ(file_identity(other.string()), id) << other;
  std::ofstream(dir / "other.kvtrace") << "trace";
  EXPECT_NE(file_identity((dir / "other.kvtrace").string()), id);

  auto fresh = file_identity((dir / "new.json").string());
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->name, "new.json");
  EXPECT_EQ(file_identity((dir / "sub" / ".." / "new.json").string()), fresh);
  fs::create_symlink(dir / "new.json", dir / "dangling.json");  // a write creates new.json
  EXPECT_EQ(file_identity((dir / "dangling.json").string()), fresh);
  EXPECT_NE(file_identity((dir / "sub" / "new.json").string()), fresh);
}

TEST(FileIdentity, DevicesAndMissingDirectoriesHaveNone) {
  EXPECT_FALSE(file_identity("/dev/null"));
  EXPECT_FALSE(file_identity(""));
  EXPECT_FALSE(file_identity(testing::temp_path("no-such-dir") + "/x.json"));
}

}  // namespace
}  // namespace kvpolicy
