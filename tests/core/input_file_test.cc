// Inputs read whole: a device, a FIFO or a file larger than memory is one clear error before
// anything opens or allocates it (a FIFO hung `trace import`, `embed` and `merge`; /dev/zero and
// sparse files ended in an out-of-memory "internal error").
#include "kvpolicy/core/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kvpolicy/core/cell_sweep.h"
#include "kvpolicy/core/error.h"
#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

using testing::input_error;
using testing::temp_path;

TEST(InputFile, DevicesFifosAndDirectoriesAreRefusedWithoutOpening) {
  std::string fifo = temp_path("fifo");
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    std::string what = input_error([&] { require_regular_file(path, "logs"); }).what();
    EXPECT_NE(what.find("'" + path + "' is not a regular file (a pipe or a device); logs are read"),
              std::string::npos)
        << what;
  }
  std::string dir = std::filesystem::path(fifo).parent_path().string();
  EXPECT_NE(std::string(input_error([&] { require_regular_file(dir, "logs"); }).what())
                .find("is a directory"),
            std::string::npos);
  std::string file = testing::write_file("ok.txt", "12345");
  EXPECT_EQ(require_regular_file(file, "logs"), 5u);
  // merge reads every shard whole: a FIFO among them is refused, not waited on.
  std::vector<std::string> shards = {testing::write_file("shard.jsonl", "{}\n"), fifo};
  std::string what = input_error([&] {
                       merge_result_files(shards, [](const ResultLine& l, const std::string&) {
                         return RowIdentity{l.text, l.text};
                       });
                     }).what();
  EXPECT_NE(what.find("not a regular file"), std::string::npos) << what;
  std::filesystem::remove(fifo);
}

TEST(InputFile, MoreThanMemoryIsRefusedBeforeAllocating) {
  const uint64_t memory = physical_memory_bytes();
  ASSERT_GT(memory, 0u);
  std::string file = testing::write_file("small.txt", "x");
  require_memory_for_file(file, memory / 2, "");
  std::string what =
      input_error([&] { require_memory_for_file(file, memory + 1, "read it in parts"); }).what();
  EXPECT_NE(what.find("more than this machine's"), std::string::npos) << what;
  EXPECT_NE(what.find(": read it in parts"), std::string::npos) << what;
  try {
    require_memory(UINT64_MAX, "gsp: groups=4294967295 x prompts=4294967295");
    ADD_FAILURE() << "asked for 2^64 bytes without an error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("gsp: groups=4294967295 x prompts=4294967295 ask for"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kvpolicy
