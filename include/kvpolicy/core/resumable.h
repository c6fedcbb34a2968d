// What every sweep shares (replay's and serve mode's): results streamed to a JSONL file one
// line at a time, read back to resume an interrupted run, and configurations run on all cores.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace kvpolicy {

// The complete lines of a results file, with their line numbers; a torn last line (a write cut
// short by a kill) is cut off the file, so new results start on a line of their own. A missing
// file has none.
struct ResultLine {
  uint64_t line_no;
  std::string text;
};
std::vector<ResultLine> read_complete_lines(const std::string& path);

// The results file a sweep appends to, a row per finished result written straight to the file,
// so a kill loses nothing finished. A failed write (a full disk) cuts the file back to its whole
// rows and throws Error naming it: never a torn row, never a pass.
class ResultsFile {
 public:
  ResultsFile() = default;
  // Opens `path` to append to it (`truncate`: emptied first); throws ConfigError if it cannot.
  explicit ResultsFile(const std::string& path, bool truncate = false);
  ResultsFile(ResultsFile&& other) noexcept;
  ResultsFile& operator=(ResultsFile&& other) noexcept;
  ~ResultsFile();
  bool is_open() const { return fd_ >= 0; }
  void append(std::string_view line);  // adds the newline
  void close();

 private:
  std::string path_;
  int fd_ = -1;
};

// The trace part of a result's resume key: a path names its file however it is spelt (mc.jsonl,
// ./mc.jsonl, its absolute path, a symlink to it); a name that is no file is kept as it is.
std::string trace_identity(const std::string& trace);

// Runs task(i) for every i in [0, n) on `jobs` threads (0 = every core). The first exception
// stops handing out work and is rethrown once the running tasks finish.
void parallel_for(size_t n, unsigned jobs, const std::function<void(size_t)>& task);

}  // namespace kvpolicy
