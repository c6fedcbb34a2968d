// What every sweep shares (replay's and serve mode's): results streamed to a JSONL file one
// line at a time, read back to resume an interrupted run, and configurations run on all cores.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace kvpolicy {

// The complete lines of a results file, with their line numbers, each handed to `check`, which
// throws (naming file and line) on a line that is no result. Only once every line passed is a
// torn last line (a write cut short by a kill) cut off the file, so new results start on a line
// of their own; a file that is no results file is refused and left as it was. A missing file has
// none.
struct ResultLine {
  uint64_t line_no;
  std::string text;
};
std::vector<ResultLine> read_complete_lines(const std::string& path,
                                            const std::function<void(const ResultLine&)>& check);

// The results file a sweep appends to, a row per finished result written straight to the file,
// so a kill loses nothing finished. A failed write (a full disk) cuts the file back to its whole
// rows and throws Error naming it: never a torn row, never a pass.
class ResultsFile {
 public:
  ResultsFile() = default;
  // Appends to `path` (`fresh`: a new file, which replaces the old one when the first row is
  // written, so a run that fails before its first result leaves the file as it was). The file is
  // opened at the first row; throws ConfigError now if it could not be written.
  explicit ResultsFile(const std::string& path, bool fresh = false);
  ResultsFile(ResultsFile&& other) noexcept;
  ResultsFile& operator=(ResultsFile&& other) noexcept;
  ~ResultsFile();
  bool is_open() const { return !path_.empty(); }
  void append(std::string_view line);  // adds the newline
  // At the end of a run that succeeded: a fresh file that got no row (an empty shard) is emptied
  // now, so the run leaves its results file; then closes it.
  void finish();
  void close();

 private:
  void open();
  std::string path_;
  bool fresh_ = false;
  int fd_ = -1;
};

// The trace part of a result's resume key: a path names its file however it is spelt (mc.jsonl,
// ./mc.jsonl, its absolute path, a symlink to it); a name that is no file is kept as it is.
std::string trace_identity(const std::string& trace);

// --resume reading a row of this trace (by trace_identity) whose trace_fingerprint (TraceChecksum:
// "requests/block accesses/checksum") is not the trace's now: the file at that path has changed
// since, and its rows would be stale. Throws InputError naming the results file, the line, the
// field and both contents; nothing when the row is of another trace or of this content.
void refuse_stale_row(const std::string& path, uint64_t line_no, const std::string& row_trace,
                      const std::string& row_fingerprint, const std::string& trace,
                      const std::string& fingerprint);

// Runs task(i) for every i in [0, n) on `jobs` threads (0 = every core). The first exception
// stops handing out work and is rethrown once the running tasks finish.
void parallel_for(size_t n, unsigned jobs, const std::function<void(size_t)>& task);

}  // namespace kvpolicy
