// The one sweep over cells (configurations) that replay grids, serve and mrc go through, from
// either front end: on threads here, one shard of it (--shard i/n), or over an mpirun's ranks;
// resuming from and streaming to a results file, with a progress line. A command only says what
// its cells are: their keys and costs, how one runs into a row, how a row is read back.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kvpolicy/core/cell_sweep.h"
#include "kvpolicy/core/resumable.h"

namespace kvpolicy::app {

// A sweep's cells as a shard or a distributed run sees them: each cell's resume key and
// estimated cost, and how to read a results line's key.
struct SweepCells {
  std::vector<std::string> keys;                         // each cell's resume key
  std::vector<double> weights;                           // each cell's estimated cost
  std::function<std::string(const ResultLine&)> key_of;  // a results line's key
};

// The cells of `shard` (shard_of_cells), in configuration order.
std::vector<size_t> cells_of_shard(const SweepCells& cells, Shard shard);

// Where a sweep runs: all of it in this process (threads), one shard of it, or its share of an
// mpirun's cells (the transport is the front end's: MPI in the command line).
struct SweepPlacement {
  Shard shard;                // {0, 1}: every cell
  bool sharded = false;       // --shard given
  SweepComm* comm = nullptr;  // under mpirun
  // Ends the transport once the sweep is over, on every rank (nothing when empty).
  std::function<void()> end_comm;
  // An mpirun rank > 0: runs the cells rank 0 hands out and prints nothing.
  bool worker() const { return comm && comm->rank() > 0; }
};

struct SweepSettings {
  unsigned jobs = 0;      // cells at once on threads; 0 = every core
  std::string json_path;  // each row appended as it finishes (empty = none)
  bool resume = false;    // cells whose key has a row in json_path are not run again
  std::string what;       // the progress line's name
  SweepPlacement where;
};

// A sweep's cells without their results' type (run_sweep below gives them one).
struct SweepRows {
  SweepCells cells;
  // Runs cell i (`progress` hears its share done, may be empty) and returns its JSON row.
  std::function<std::string(size_t, const std::function<void(double)>&)> run;
  // Cell i's row read back (a resumed row, or any row of a distributed run), named `path`.
  std::function<void(size_t, const ResultLine&, const std::string& path)> read;
  // What the progress line says while cell i runs.
  std::function<std::string(size_t)> detail;
};

// Runs the cells `settings.where` places here: every cell on settings.jobs threads, or a shard's
// (the file is then rewritten in configuration order: the same for any -j, and the shards'
// files concatenate into the whole's), or on rank 0 every rank's (coordinate_cells; every row then
// read back through `read`, and a summary line on stderr). Returns the cells covered, in
// configuration order.
std::vector<size_t> sweep_rows(const SweepRows& rows, const SweepSettings& settings);

// An mpirun rank > 0: `make_run` is called on the first cell handed out (it loads the trace, so a
// rank that gets no cell never does) and gives the function that runs cell i into its JSON row.
// Then the transport ends. The environment variable KVPOLICY_TEST_FAIL_AFTER_CELLS=k (tests only)
// makes the rank exit abnormally on being handed its (k+1)-th cell, after its k rows were written.
void work_on_rank(const SweepPlacement& where,
                  const std::function<std::function<std::string(size_t)>()>& make_run);

// A sweep whose results are `Result`s: how cell i runs, its row, and a row read back.
template <typename Result>
struct Sweep {
  SweepCells cells;
  std::function<Result(size_t, const std::function<void(double)>&)> run;
  std::function<std::string(const Result&)> row;
  std::function<Result(const std::string& text, const std::string& path, uint64_t line_no)> parse;
  std::function<std::string(size_t)> detail;
};

// sweep_rows with results: a cell run here keeps the result it ran into, a row read back is
// parsed. Results of the cells covered, in configuration order.
template <typename Result>
std::vector<Result> run_sweep(const Sweep<Result>& sweep, const SweepSettings& settings) {
  std::vector<Result> slots(sweep.cells.keys.size());
  SweepRows rows;
  rows.cells = sweep.cells;
  rows.run = [&](size_t i, const std::function<void(double)>& progress) {
    slots[i] = sweep.run(i, progress);
    return sweep.row(slots[i]);
  };
  rows.read = [&](size_t i, const ResultLine& line, const std::string& path) {
    slots[i] = sweep.parse(line.text, path, line.line_no);
  };
  rows.detail = sweep.detail;
  std::vector<Result> out;
  for (size_t i : sweep_rows(rows, settings)) out.push_back(std::move(slots[i]));
  return out;
}

}  // namespace kvpolicy::app
