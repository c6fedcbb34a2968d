#include "kvpolicy/core/resumable.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>
#include <utility>

#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"

namespace kvpolicy {

std::vector<ResultLine> read_complete_lines(const std::string& path,
                                            const std::function<void(const ResultLine&)>& check) {
  std::vector<ResultLine> lines;
  // A device or pipe (/dev/full, /dev/zero) never ends: reading it would fill memory.
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) return lines;
  if (!ec && status.type() != std::filesystem::file_type::regular)
    throw Error("cannot resume from '" + path +
                "': results are read back from a regular file only");
  std::ifstream in(path, std::ios::binary);
  if (!in) return lines;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  size_t complete = data.rfind('\n') == std::string::npos ? 0 : data.rfind('\n') + 1;
  uint64_t line_no = 0;
  for (size_t start = 0; start < complete;) {
    size_t end = data.find('\n', start);
    ++line_no;
    if (end > start) {
      lines.push_back({line_no, data.substr(start, end - start)});
      check(lines.back());
    }
    start = end + 1;
  }
  // Only a file whose every line is a result (and that has one) loses its torn last line:
  // another file given to --resume is refused and left as it was.
  if (complete < data.size()) {
    if (lines.empty())
      throw InputError(path, line_no + 1, "",
                       "not a results file: no whole row, and a last line without its end; "
                       "give --json a results file (or a new name)");
    std::filesystem::resize_file(path, complete);
  }
  return lines;
}

ResultsFile::ResultsFile(const std::string& path, bool fresh) : path_(path), fresh_(fresh) {
  check_writable(path);
}

ResultsFile::ResultsFile(ResultsFile&& other) noexcept
    : path_(std::exchange(other.path_, {})),
      fresh_(other.fresh_),
      fd_(std::exchange(other.fd_, -1)) {}

ResultsFile& ResultsFile::operator=(ResultsFile&& other) noexcept {
  close();
  path_ = std::exchange(other.path_, {});
  fresh_ = other.fresh_;
  fd_ = std::exchange(other.fd_, -1);
  return *this;
}

ResultsFile::~ResultsFile() { close(); }

void ResultsFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  path_.clear();
}

void ResultsFile::open() {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (fresh_ ? O_TRUNC : 0),
               0644);
  if (fd_ < 0) throw ConfigError("cannot write '" + path_ + "': " + std::strerror(errno));
}

void ResultsFile::finish() {
  if (!path_.empty() && fd_ < 0 && fresh_) open();
  close();
}

void ResultsFile::append(std::string_view line) {
  if (fd_ < 0) open();
  std::string row = std::string(line) + '\n';
  // Every earlier row is whole on disk, so the file's end is where this one starts.
  off_t whole = ::lseek(fd_, 0, SEEK_END);
  for (size_t done = 0; done < row.size();) {
    ssize_t n = ::write(fd_, row.data() + done, row.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : ENOSPC;
      // A row written in part would read back as a corrupt one: cut it off, so the file holds
      // whole rows and --resume goes on from them (a device such as /dev/full has no size).
      bool cut = whole < 0 || ::ftruncate(fd_, whole) == 0;
      throw Error("writing results to '" + path_ + "' failed: " + std::strerror(err) +
                  (cut ? " (is the disk full?)" : "; its last row is cut off"));
    }
    done += static_cast<size_t>(n);
  }
}

void parallel_for(size_t n, unsigned jobs, const std::function<void(size_t)>& task) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr error;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        task(i);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        next = n;  // stop handing out work
      }
    }
  };
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<size_t>(jobs, std::max<size_t>(1, n)));
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

namespace {

// "3000 requests, 45000 block accesses, checksum 9f1c2a7b3d5e6f80".
std::string describe_fingerprint(const std::string& fingerprint) {
  unsigned long long requests = 0, accesses = 0;
  char checksum[17] = {};
  if (std::sscanf(fingerprint.c_str(), "%llu/%llu/%16[0-9a-f]", &requests, &accesses, checksum) !=
      3)
    return "no fingerprint (a row written before results carried one)";
  return std::to_string(requests) + " requests, " + std::to_string(accesses) +
         " block accesses, checksum " + checksum;
}

}  // namespace

void refuse_stale_row(const std::string& path, uint64_t line_no, const std::string& row_trace,
                      const std::string& row_fingerprint, const std::string& trace,
                      const std::string& fingerprint) {
  if (row_fingerprint == fingerprint || trace_identity(row_trace) != trace_identity(trace)) return;
  throw InputError(path, line_no, "trace_fingerprint",
                   "--resume: this row is of '" + row_trace + "' as it was (" +
                       describe_fingerprint(row_fingerprint) + "), but it now holds " +
                       describe_fingerprint(fingerprint) +
                       ": the trace changed, so the file's rows are stale. Resume into another "
                       "--json file, or run without --resume to start this one over");
}

std::string trace_identity(const std::string& trace) {
  std::error_code ec;
  if (trace.empty() || !std::filesystem::exists(trace, ec)) return trace;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(trace, ec);
  return ec ? trace : canonical.string();
}

}  // namespace kvpolicy
