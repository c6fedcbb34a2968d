#include "kvpolicy/core/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
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

}  // namespace
}  // namespace kvpolicy
