#include "kvpolicy/app/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "kvpolicy/app/progress.h"
#include "kvpolicy/core/atomic_file.h"

namespace kvpolicy::app {

std::vector<size_t> cells_of_shard(const SweepCells& cells, Shard shard) {
  std::vector<uint32_t> of = shard_of_cells(cells.weights, shard.count);
  std::vector<size_t> mine;
  for (size_t i = 0; i < of.size(); ++i)
    if (of[i] == shard.index) mine.push_back(i);
  return mine;
}

namespace {

// Rank 0 of an mpirun: the cells over every rank, then the transport ends and a summary line
// says where the time went. Every row is read back, rank 0's own too.
std::vector<size_t> run_on_ranks(const SweepRows& rows, const SweepSettings& s) {
  SweepComm& comm = *s.where.comm;
  Progress progress(fmt::format("{} on {} ranks", s.what, comm.size()));
  CoordinatorOptions options;
  options.json_path = s.json_path;
  options.resume = s.resume;
  options.key_of = rows.cells.key_of;
  options.progress = [&](size_t done, size_t total) {
    progress.update(double(done) / double(std::max<size_t>(total, 1)),
                    fmt::format("({} of {} configurations)", done, total));
  };
  CoordinatorStats stats;
  options.stats = &stats;
  auto texts = coordinate_cells(
      comm, rows.cells.keys, rows.cells.weights, [&](size_t i) { return rows.run(i, {}); },
      options);
  const int ranks = comm.size();
  if (s.where.end_comm) s.where.end_comm();  // `comm` is gone
  // Where the time went: how well the cells were spread, and what coordinating cost.
  std::string per_rank;
  for (size_t r = 0; r < stats.ranks.size(); ++r)
    per_rank += fmt::format("{}{}: {} ({:.2f} s)", r ? ", " : "", r, stats.ranks[r].cells,
                            stats.ranks[r].busy_seconds);
  fmt::print(stderr,
             "kvpolicy: {} configurations on {} ranks in {:.2f} s; cells run (busy) per rank: "
             "{}; rank 0 answered {} messages, {:.1f} us each\n",
             rows.cells.keys.size(), ranks, stats.wall_seconds, per_rank, stats.messages,
             stats.messages ? stats.handling_seconds / double(stats.messages) * 1e6 : 0.0);
  const std::string path = s.json_path.empty() ? "rank 0" : s.json_path;
  std::vector<size_t> all;
  for (size_t i = 0; i < texts.size(); ++i) {
    rows.read(i, ResultLine{i + 1, texts[i]}, path);
    all.push_back(i);
  }
  return all;
}

// The cells `mine` on threads, resuming from and appending to the results file; at the end the
// file is rewritten in configuration order (the rows of other configurations a resumed file
// held after them), so -j does not change it and a shard's files concatenate into the whole's.
void run_here(const SweepRows& rows, const std::vector<size_t>& mine, const SweepSettings& s) {
  Progress progress(s.what);
  // Rows already in the file, by key (a later repeat wins).
  std::map<std::string, ResultLine> finished;
  if (s.resume && !s.json_path.empty())
    read_complete_lines(s.json_path,
                        [&](const ResultLine& line) { finished[rows.cells.key_of(line)] = line; });
  ResultsFile out;
  if (!s.json_path.empty()) out = ResultsFile(s.json_path, !s.resume);
  std::vector<size_t> todo;
  std::vector<std::string> texts(rows.cells.keys.size());  // each cell's row, by index
  for (size_t i : mine) {
    auto it = finished.find(rows.cells.keys[i]);
    if (it != finished.end()) {
      rows.read(i, it->second, s.json_path);
      texts[i] = it->second.text;
      finished.erase(it);
    } else {
      todo.push_back(i);
    }
  }
  std::mutex mu;
  size_t completed = mine.size() - todo.size();
  parallel_for(todo.size(), s.jobs, [&](size_t k) {
    std::string detail = rows.detail ? rows.detail(todo[k]) : std::string();
    std::string row = rows.run(todo[k], [&](double f) {
      std::lock_guard lock(mu);
      progress.update((double(completed) + f) / double(mine.size()), detail);
    });
    std::lock_guard lock(mu);
    if (out.is_open()) out.append(row);
    texts[todo[k]] = std::move(row);
    ++completed;
  });
  out.finish();
  std::error_code ec;
  if (s.json_path.empty() || !std::filesystem::is_regular_file(s.json_path, ec)) return;
  std::string ordered;
  for (size_t i : mine) ordered += texts[i] + '\n';
  for (auto& [key, line] : finished) ordered += line.text + '\n';
  write_file_atomically(s.json_path, ordered);
}

}  // namespace

std::vector<size_t> sweep_rows(const SweepRows& rows, const SweepSettings& s) {
  if (s.where.comm) return run_on_ranks(rows, s);
  std::vector<size_t> mine;
  if (s.where.sharded) {
    mine = cells_of_shard(rows.cells, s.where.shard);
  } else {
    for (size_t i = 0; i < rows.cells.keys.size(); ++i) mine.push_back(i);
  }
  run_here(rows, mine, s);
  return mine;
}

void work_on_rank(const SweepPlacement& where,
                  const std::function<std::function<std::string(size_t)>()>& make_run) {
  SweepComm& comm = *where.comm;
  long fail_after = -1;
  if (const char* v = std::getenv("KVPOLICY_TEST_FAIL_AFTER_CELLS")) fail_after = std::atol(v);
  std::vector<size_t> finished;  // cells whose rows rank 0 has written (it asked for more)
  std::function<std::string(size_t)> run;
  work_for_coordinator(comm, [&](size_t i) {
    if (fail_after >= 0 && long(finished.size()) >= fail_after) {
      std::string cells;
      for (size_t c : finished) cells += (cells.empty() ? "" : ",") + std::to_string(c);
      fmt::print(stderr,
                 "kvpolicy: rank {}: KVPOLICY_TEST_FAIL_AFTER_CELLS={}: failing now, after "
                 "cells {}\n",
                 comm.rank(), fail_after, cells);
      std::_Exit(70);
    }
    finished.push_back(i);
    if (!run) run = make_run();
    return run(i);
  });
  if (where.end_comm) where.end_comm();
}

}  // namespace kvpolicy::app
