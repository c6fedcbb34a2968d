#include "kvpolicy/core/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "kvpolicy/core/error.h"
#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

using testing::read_bytes;
using testing::temp_path;
using testing::write_file;

// No ".tmp." file left next to `path`.
size_t temporaries_next_to(const std::string& path) {
  size_t n = 0;
  auto name = std::filesystem::path(path).filename().string();
  for (auto& e : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    if (e.path().filename().string().starts_with("." + name + ".tmp.")) ++n;
  return n;
}

TEST(AtomicOutput, CommitReplacesTheFileWhole) {
  std::string path = write_file("out.txt", "old content\n");
  {
    AtomicOutput out(path);
    out.write("new");
    // Until commit the old file stays as it was: a reader never sees a half-written one.
    EXPECT_EQ(read_bytes(path), "old content\n");
    out.write(std::string_view(" content"));
    out.commit();
  }
  EXPECT_EQ(read_bytes(path), "new content");
  EXPECT_EQ(temporaries_next_to(path), 0u);
}

TEST(AtomicOutput, AbandonedWriteLeavesTheOldFileAndNoTemporary) {
  std::string path = write_file("out.txt", "old content\n");
  try {
    AtomicOutput out(path);
    out.write("partial");
    throw std::runtime_error("interrupted");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(read_bytes(path), "old content\n");
  EXPECT_EQ(temporaries_next_to(path), 0u);
}

TEST(AtomicOutput, NewFileGetsAPlainFilesMode) {
  std::string path = temp_path("new.txt");
  std::filesystem::remove(path);
  write_file_atomically(path, "x");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  // mkstemp's 0600 would hide the file from the group; a plain open gives 0666 less the umask.
  mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

TEST(AtomicOutput, FullDeviceIsAnErrorNamingIt) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  try {
    write_file_atomically("/dev/full", std::string(1 << 20, 'x'));
    FAIL() << "writing to /dev/full succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'/dev/full'"), std::string::npos) << e.what();
  }
}

TEST(AtomicOutput, MissingDirectoryIsAnErrorNamingThePath) {
  std::string path = temp_path("no-such-dir") + "/out.txt";
  try {
    write_file_atomically(path, "x");
    FAIL() << "writing into a missing directory succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

// Issue 32: an output that is a symlink was replaced by a regular file; the write goes through
// the link to its target, and the link stays.
TEST(AtomicOutput, WritesThroughASymlinkAndKeepsIt) {
  std::string target = write_file("target.txt", "old\n");
  std::string link = temp_path("link.txt");
  std::filesystem::remove(link);
  std::filesystem::create_symlink(target, link);
  write_file_atomically(link, "new\n");
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(read_bytes(target), "new\n");
  EXPECT_EQ(temporaries_next_to(target), 0u);
  EXPECT_EQ(temporaries_next_to(link), 0u);
}

// A kill -9 leaves the temporary; the next write of that output removes it (its process is
// gone), and a SIGINT/SIGTERM handler removes the temporaries being written.
TEST(AtomicOutput, StaleTemporariesAreRemovedAndSignalsLeaveNone) {
  std::string path = write_file("out.txt", "old\n");
  auto name = std::filesystem::path(path).filename().string();
  auto dir = std::filesystem::path(path).parent_path();
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);  // a pid that no longer runs
  std::string stale = (dir / ("." + name + ".tmp." + std::to_string(child) + ".AbCdEf")).string();
  std::ofstream(stale) << "half";
  std::string live = (dir / ("." + name + ".tmp.1.AbCdEf")).string();  // init runs: not stale
  std::ofstream(live) << "half";
  {
    AtomicOutput out(path);
    EXPECT_FALSE(std::filesystem::exists(stale));
    EXPECT_TRUE(std::filesystem::exists(live));
    EXPECT_EQ(temporaries_next_to(path), 2u);  // the live one and this write's own
    remove_temporary_outputs();                // what the CLI's signal handler calls
    EXPECT_EQ(temporaries_next_to(path), 1u);
  }
  std::filesystem::remove(live);
  EXPECT_EQ(read_bytes(path), "old\n");
}

}  // namespace
}  // namespace kvpolicy
