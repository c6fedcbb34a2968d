#include "kvpolicy/core/resumable.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

std::vector<ResultLine> read_complete_lines(const std::string& path) {
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
  if (complete < data.size()) std::filesystem::resize_file(path, complete);
  uint64_t line_no = 0;
  for (size_t start = 0; start < complete;) {
    size_t end = data.find('\n', start);
    ++line_no;
    if (end > start) lines.push_back({line_no, data.substr(start, end - start)});
    start = end + 1;
  }
  return lines;
}

void append_result_line(std::ostream& out, const std::string& path, const std::string& line) {
  out << line << '\n';
  out.flush();
  if (!out) throw Error("writing results to '" + path + "' failed (is the disk full?)");
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

std::string trace_identity(const std::string& trace) {
  std::error_code ec;
  if (trace.empty() || !std::filesystem::exists(trace, ec)) return trace;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(trace, ec);
  return ec ? trace : canonical.string();
}

}  // namespace kvpolicy
