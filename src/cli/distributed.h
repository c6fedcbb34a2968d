// How a sweep command (simulate, serve, mrc) takes part in a sweep: all of it in this process
// (threads, as always), one shard of it (--shard i/n), or its share of an mpirun's cells.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "kvpolicy/app/cells.h"
#include "kvpolicy/core/cell_sweep.h"

namespace kvpolicy::cli {

struct SweepPlacement {
  Shard shard;                // {0, 1}: every cell
  bool sharded = false;       // --shard given
  SweepComm* comm = nullptr;  // under mpirun
  // An mpirun rank > 0: runs the cells rank 0 hands out and prints nothing.
  bool worker() const { return comm && comm->rank() > 0; }
};

// Adds --shard i/n to a sweep command.
void add_shard_option(CLI::App* cmd, std::string& shard_text);
// Reads --shard (empty: none) and whether mpirun started this process (MPI starts here).
// Throws ConfigError on a bad --shard, --shard under mpirun, or --jobs above 1 under mpirun
// (each rank runs one cell at a time: start one rank per core instead).
SweepPlacement sweep_placement(const std::string& shard_text, unsigned jobs);

using app::cells_of_shard;
using app::keep_shard;
using app::SweepCells;

// Rank 0 of an mpirun: the cells over every rank (coordinate_cells), a progress line named
// `what`, then MPI ends. `run` runs cell i and returns its JSON row. Rows in configuration order.
std::vector<std::string> run_on_ranks(SweepComm& comm, const SweepCells& cells,
                                      const std::function<std::string(size_t)>& run,
                                      const std::string& json_path, bool resume,
                                      const std::string& what);

// A rank > 0: `make_run` is called on the first cell handed out (it loads the trace, so a rank
// that gets no cell never does) and gives the function that runs cell i into its JSON row. Then
// MPI ends. The environment variable KVPOLICY_TEST_FAIL_AFTER_CELLS=k (tests only) makes the
// rank exit abnormally on being handed its (k+1)-th cell, after its k rows were written.
void work_on_rank(SweepComm& comm,
                  const std::function<std::function<std::string(size_t)>()>& make_run);

}  // namespace kvpolicy::cli
