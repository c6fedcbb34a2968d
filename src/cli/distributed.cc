#include "distributed.h"

#include <fmt/format.h>

#include <cstdlib>

#include "common.h"
#include "kvpolicy/core/error.h"
#include "mpi_comm.h"

namespace kvpolicy::cli {

void add_shard_option(CLI::App* cmd, std::string& shard_text) {
  cmd->add_option("--shard", shard_text,
                  "run only shard i of n of the configurations (i/n, 0 <= i < n: contiguous "
                  "runs of configuration order of about equal estimated cost); join the shards' "
                  "--json files with `kvpolicy merge`");
}

SweepPlacement sweep_placement(const std::string& shard_text, unsigned jobs) {
  SweepPlacement p;
  if (!shard_text.empty()) {
    p.shard = parse_shard(shard_text);
    p.sharded = true;
  }
  p.comm = mpi_sweep_comm();
  if (p.comm && p.sharded)
    throw ConfigError(
        "--shard splits a sweep between separate runs; under mpirun the ranks "
        "share the cells already (drop --shard)");
  if (p.comm && jobs > 1)
    throw ConfigError(fmt::format(
        "--jobs {}: under mpirun each rank runs one configuration at a time; start one rank per "
        "core (mpirun -np N) instead",
        jobs));
  return p;
}

std::vector<std::string> run_on_ranks(SweepComm& comm, const SweepCells& cells,
                                      const std::function<std::string(size_t)>& run,
                                      const std::string& json_path, bool resume,
                                      const std::string& what) {
  Progress progress(fmt::format("{} on {} ranks", what, comm.size()));
  CoordinatorOptions options;
  options.json_path = json_path;
  options.resume = resume;
  options.key_of = cells.key_of;
  options.progress = [&](size_t done, size_t total) {
    progress.update(double(done) / double(std::max<size_t>(total, 1)),
                    fmt::format("({} of {} configurations)", done, total));
  };
  CoordinatorStats stats;
  options.stats = &stats;
  auto rows = coordinate_cells(comm, cells.keys, cells.weights, run, options);
  const int ranks = comm.size();
  mpi_finish();  // `comm` is gone
  // Where the time went: how well the cells were spread, and what coordinating cost.
  std::string per_rank;
  for (size_t r = 0; r < stats.ranks.size(); ++r)
    per_rank += fmt::format("{}{}: {} ({:.2f} s)", r ? ", " : "", r, stats.ranks[r].cells,
                            stats.ranks[r].busy_seconds);
  fmt::print(stderr,
             "kvpolicy: {} configurations on {} ranks in {:.2f} s; cells run (busy) per rank: "
             "{}; rank 0 answered {} messages, {:.1f} us each\n",
             cells.keys.size(), ranks, stats.wall_seconds, per_rank, stats.messages,
             stats.messages ? stats.handling_seconds / double(stats.messages) * 1e6 : 0.0);
  return rows;
}

void work_on_rank(SweepComm& comm,
                  const std::function<std::function<std::string(size_t)>()>& make_run) {
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
  mpi_finish();
}

}  // namespace kvpolicy::cli
