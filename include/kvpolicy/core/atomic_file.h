// Output files written all or nothing: an interrupted or failed write never leaves a shorter file
// that reads as a valid one.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace kvpolicy {

// A regular file (or a path that does not exist yet) is written to a temporary in the same
// directory and renamed into place by commit() (through a symlink: its target is replaced, the
// link kept); a device or pipe (/dev/stdout, /dev/full) cannot
// be renamed onto, so it is written directly. Every write, the flush and the close are checked:
// a failure throws Error naming the path and removes the temporary. Destroying an uncommitted
// AtomicOutput (an exception on the way) removes the temporary and leaves `path` untouched.
class AtomicOutput {
 public:
  explicit AtomicOutput(std::string path);
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  // For writers that seek back (a header patched at the end); seeking fails on a pipe.
  std::FILE* file() { return file_; }
  const std::string& path() const { return path_; }
  void write(const void* data, size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Throws Error naming the path when a write that went through file() failed.
  void check();
  // Flushes, closes and renames into place; throws Error naming the path.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what);
  void discard() noexcept;
  std::string path_;
  std::string target_;  // path_ with symlinks followed: the file replaced
  std::string temp_;    // empty when writing `path_` directly
  std::FILE* file_ = nullptr;
};

// Removes the temporaries of every AtomicOutput not yet committed; async-signal-safe, for a
// SIGINT or SIGTERM handler (the program then exits). A kill -9 leaves them, named
// .NAME.tmp.PID.XXXXXX next to the output: the next write of that output removes them.
void remove_temporary_outputs() noexcept;

// Throws ConfigError naming `path` unless it could be written (an existing file writable, or a
// writable directory to create it in), touching nothing: a command checks its outputs before
// the work, and writes them after.
void check_writable(const std::string& path);

// Writes `content` to `path` through an AtomicOutput.
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace kvpolicy
