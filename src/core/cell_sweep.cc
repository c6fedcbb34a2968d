#include "kvpolicy/core/cell_sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>
#include <unordered_map>

#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/input_file.h"

namespace kvpolicy {

namespace {

// Worker to coordinator: ready for a first cell, a finished row (which asks for the next), an
// error. Coordinator to worker: a cell to run, or stop.
enum Tag : int { kReady = 1, kRow = 2, kFailed = 3, kAssign = 4, kStop = 5 };

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A decimal cell index in [0, n); a malformed message is a bug in the protocol, not input.
size_t parse_index(const std::string& text, size_t n) {
  size_t i = 0, used = 0;
  try {
    i = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || i >= n) throw Error("distributed sweep: bad cell index '" + text + "'");
  return i;
}

// A count written in decimal digits only (no sign, no space), or nothing.
std::optional<uint32_t> parse_count(const std::string& text) {
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return static_cast<uint32_t>(std::stoul(text));
}

}  // namespace

std::vector<size_t> largest_first(std::span<const double> weights) {
  std::vector<size_t> order(weights.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return weights[a] > weights[b]; });
  return order;
}

Shard parse_shard(const std::string& text) {
  size_t slash = text.find('/');
  std::optional<uint32_t> i, n;
  if (slash != std::string::npos) {
    i = parse_count(text.substr(0, slash));
    n = parse_count(text.substr(slash + 1));
  }
  if (!i || !n || *n < 1 || *n > 100000 || *i >= *n)
    throw ConfigError("--shard '" + text +
                      "' is not i/n with 0 <= i < n <= 100000 (e.g. 0/4 for the first of four)");
  return {*i, *n};
}

std::vector<uint32_t> shard_of_cells(std::span<const double> weights, uint32_t count) {
  if (count == 0) throw ConfigError("a sweep needs at least one shard");
  double total = 0;
  for (double w : weights) total += std::max(w, 0.0);
  std::vector<uint32_t> shard(weights.size());
  double before = 0;
  for (size_t k = 0; k < weights.size(); ++k) {
    // Without weights every cell counts one.
    double w = total > 0 ? std::max(weights[k], 0.0) : 1.0;
    double sum = total > 0 ? total : double(weights.size());
    double middle = before + w / 2;
    auto s = static_cast<uint32_t>(std::floor(middle * count / sum));
    shard[k] = std::min(s, count - 1);
    before += w;
  }
  return shard;
}

void order_results_file(const std::string& path, std::span<const std::string> keys,
                        const std::function<std::string(const ResultLine&)>& key_of) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return;  // /dev/stdout: as it was streamed
  std::vector<std::string> line_keys;
  std::vector<ResultLine> lines =
      read_complete_lines(path, [&](const ResultLine& line) { line_keys.push_back(key_of(line)); });
  std::unordered_map<std::string, size_t> slot;
  for (size_t i = 0; i < keys.size(); ++i) slot.emplace(keys[i], i);
  std::vector<const std::string*> placed(keys.size(), nullptr);
  std::vector<const std::string*> rest;
  for (size_t l = 0; l < lines.size(); ++l) {
    const ResultLine& line = lines[l];
    auto it = slot.find(line_keys[l]);
    if (it != slot.end() && !placed[it->second]) {
      placed[it->second] = &line.text;
    } else {
      rest.push_back(&line.text);
    }
  }
  std::string out;
  for (const std::string* text : placed)
    if (text) out += *text + '\n';
  for (const std::string* text : rest) out += *text + '\n';
  write_file_atomically(path, out);
}

std::string merge_result_files(
    std::span<const std::string> paths,
    const std::function<RowIdentity(const ResultLine&, const std::string& path)>& identify) {
  struct Seen {
    const std::string* path;
    uint64_t line_no;
    std::string content;
  };
  std::unordered_map<std::string, Seen> seen;
  std::string out;
  for (const std::string& path : paths) {
    // A FIFO would block the open and a device never ends; merging reads each file whole.
    require_memory_for_file(path, require_regular_file(path, "results"), "");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, "", "cannot read the file");
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Read as it is: unlike resuming, merging never cuts an input file.
    uint64_t line_no = 0;
    for (size_t start = 0; start < data.size();) {
      size_t end = data.find('\n', start);
      ++line_no;
      if (end == std::string::npos)
        throw InputError(path, line_no, "",
                         "the last line has no end (a run still writing, or killed?): finish "
                         "it with --resume first");
      ResultLine line{line_no, data.substr(start, end - start)};
      start = end + 1;
      if (line.text.empty()) continue;
      RowIdentity id = identify(line, path);
      auto [it, fresh] = seen.try_emplace(id.key, Seen{&path, line_no, id.content});
      if (!fresh) {
        std::string where = *it->second.path + ":" + std::to_string(it->second.line_no);
        throw InputError(
            path, line_no, "",
            it->second.content == id.content
                ? "duplicate row: the same result as " + where + " (was a shard given twice?)"
                : "conflicting rows: the same configuration as " + where +
                      " with other results (shards of different sweeps?)");
      }
      out += line.text + '\n';
    }
  }
  return out;
}

std::vector<std::string> coordinate_cells(SweepComm& comm, std::span<const std::string> keys,
                                          std::span<const double> weights,
                                          const std::function<std::string(size_t)>& run,
                                          const CoordinatorOptions& options) {
  if (keys.size() != weights.size()) throw Error("coordinate_cells: one weight per cell");
  const auto start = std::chrono::steady_clock::now();
  const size_t n = keys.size();
  CoordinatorStats stats;
  stats.ranks.resize(static_cast<size_t>(std::max(comm.size(), 1)));
  std::vector<std::string> rows(n);
  std::vector<char> have(n, 0);
  if (options.resume && !options.json_path.empty()) {
    std::unordered_map<std::string, size_t> index;
    for (size_t i = 0; i < n; ++i) index.emplace(keys[i], i);
    read_complete_lines(options.json_path, [&](const ResultLine& line) {
      auto it = index.find(options.key_of(line));
      if (it != index.end() && !have[it->second]) {
        rows[it->second] = line.text;
        have[it->second] = 1;
      }
    });
  }
  std::vector<size_t> todo;
  for (size_t i : largest_first(weights))
    if (!have[i]) todo.push_back(i);
  ResultsFile out;
  if (!options.json_path.empty()) out = ResultsFile(options.json_path, !options.resume);

  std::mutex mu;
  size_t next = 0;
  size_t done = n - todo.size();
  auto take = [&]() -> std::optional<size_t> {
    std::lock_guard lock(mu);
    if (next < todo.size()) return todo[next++];
    return std::nullopt;
  };
  auto stop_handing_out = [&] {
    std::lock_guard lock(mu);
    next = todo.size();
  };
  auto record = [&](size_t i, std::string line, int rank, double busy) {
    std::lock_guard lock(mu);
    stats.ranks[static_cast<size_t>(rank)].cells++;
    stats.ranks[static_cast<size_t>(rank)].busy_seconds += busy;
    if (out.is_open()) out.append(line);
    rows[i] = std::move(line);
    have[i] = 1;
    ++done;
    if (options.progress) options.progress(done, n);
  };

  // Rank 0 runs cells too, on a thread of its own: its main thread only answers messages.
  std::exception_ptr error;
  std::thread local([&] {
    try {
      while (auto i = take()) {
        auto began = std::chrono::steady_clock::now();
        std::string row = run(*i);
        record(*i, std::move(row), 0, seconds_since(began));
      }
    } catch (...) {
      {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
      }
      stop_handing_out();
    }
  });
  try {
    for (int stopped = 0, workers = comm.size() - 1; stopped < workers;) {
      SweepComm::Message m = comm.receive(-1);
      auto received = std::chrono::steady_clock::now();
      if (m.from < 1 || m.from >= comm.size())
        throw Error("distributed sweep: a message from rank " + std::to_string(m.from));
      if (m.tag == kFailed) {
        std::lock_guard lock(mu);
        if (!error)
          error = std::make_exception_ptr(
              Error("rank " + std::to_string(m.from) + " failed: " + m.data));
        next = todo.size();
        ++stopped;
        continue;
      }
      if (m.tag == kRow) {
        // "cell busy_seconds\nrow"
        size_t eol = m.data.find('\n'), space = m.data.find(' ');
        if (eol == std::string::npos || space > eol)
          throw Error("distributed sweep: a row without its cell");
        record(parse_index(m.data.substr(0, space), n), m.data.substr(eol + 1), m.from,
               std::strtod(m.data.c_str() + space + 1, nullptr));
      } else if (m.tag != kReady) {
        throw Error("distributed sweep: unexpected message " + std::to_string(m.tag));
      }
      if (auto i = take()) {
        comm.send(m.from, kAssign, std::to_string(*i));
      } else {
        comm.send(m.from, kStop, "");
        ++stopped;
      }
      stats.messages++;
      stats.handling_seconds += seconds_since(received);
    }
  } catch (...) {
    stop_handing_out();
    local.join();
    throw;
  }
  local.join();
  if (error) std::rethrow_exception(error);
  if (out.is_open()) {
    out.finish();
    order_results_file(options.json_path, keys, options.key_of);
  }
  stats.wall_seconds = seconds_since(start);
  if (options.stats) *options.stats = stats;
  return rows;
}

void work_for_coordinator(SweepComm& comm, const std::function<std::string(size_t)>& run) {
  comm.send(0, kReady, "");
  for (;;) {
    SweepComm::Message m = comm.receive(0);
    if (m.tag == kStop) return;
    if (m.tag != kAssign)
      throw Error("distributed sweep: unexpected message " + std::to_string(m.tag));
    size_t i = parse_index(m.data, SIZE_MAX);
    std::string row;
    auto began = std::chrono::steady_clock::now();
    try {
      row = run(i);
    } catch (const std::exception& e) {
      comm.send(0, kFailed, e.what());
      throw;
    }
    comm.send(0, kRow, fmt::format("{} {:.6f}\n{}", i, seconds_since(began), row));
  }
}

}  // namespace kvpolicy
