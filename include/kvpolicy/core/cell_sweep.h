// A sweep's configurations as cells that several processes share: the order a coordinator hands
// them out (largest first), the deterministic split of `--shard i/n`, the results file put back
// in configuration order, and the coordinator and worker loops of a distributed run over any
// message transport (MPI in the command line, an in-process fake in tests).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/core/resumable.h"

namespace kvpolicy {

// Cell indices, heaviest estimated cost first; equal weights keep configuration order.
std::vector<size_t> largest_first(std::span<const double> weights);

// `--shard i/n`: this process runs shard `index` of `count`.
struct Shard {
  uint32_t index = 0;
  uint32_t count = 1;
};
// Parses "i/n" (0 <= i < n <= 100000); throws ConfigError naming the text.
Shard parse_shard(const std::string& text);
// The shard of every cell: contiguous runs of configuration order holding about equal weight
// (cell k goes to the shard whose share of the total weight holds the middle of cell k's weight),
// so concatenating the shards' files in shard order gives configuration order.
std::vector<uint32_t> shard_of_cells(std::span<const double> weights, uint32_t count);

// Rewrites the results file at `path` (a regular file; anything else is left alone) all or
// nothing: first the line of every key in `keys` that has one, in that order, then every other
// line as it was (rows of other configurations, repeats), in file order. `key_of` gives a line's
// key (and throws InputError on a line that is no result).
void order_results_file(const std::string& path, std::span<const std::string> keys,
                        const std::function<std::string(const ResultLine&)>& key_of);

// What `merge` compares of a results row: its configuration's key, and its content without the
// fields that time the run (equal for two runs of one configuration).
struct RowIdentity {
  std::string key;
  std::string content;
};
// Joins results files (the shards of one sweep) into one text, their rows in the order given.
// Throws InputError naming file and line for a last line cut short, a line `identify` rejects
// (it throws: not a result), or a configuration already seen (a duplicate row when the contents
// are equal, conflicting rows when not; both places named). Blank lines are dropped.
std::string merge_result_files(
    std::span<const std::string> paths,
    const std::function<RowIdentity(const ResultLine&, const std::string& path)>& identify);

// Messages between the processes of a distributed sweep. Rank 0 coordinates.
class SweepComm {
 public:
  struct Message {
    int from = -1;
    int tag = 0;
    std::string data;
  };
  virtual ~SweepComm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void send(int to, int tag, const std::string& data) = 0;
  // Waits for the next message to this rank from `from` (-1: from anyone). A waiting
  // implementation must not spin a core: rank 0 runs cells on another thread meanwhile.
  virtual Message receive(int from) = 0;
};

// Where a distributed sweep's time went, for its summary line and scaling measurements.
struct CoordinatorStats {
  struct Rank {
    size_t cells = 0;
    double busy_seconds = 0;  // running cells (a worker's first includes loading the trace)
  };
  std::vector<Rank> ranks;      // by rank
  size_t messages = 0;          // answered by rank 0's main thread
  double handling_seconds = 0;  // spent answering them (writing rows included)
  double wall_seconds = 0;      // coordinate_cells from start to end
};

struct CoordinatorOptions {
  std::string json_path;  // append each row as it arrives (empty: none); ordered at the end
  bool resume = false;    // cells whose key has a row in json_path are not run again
  // A row's key, for resuming and ordering; throws InputError on a line that is no result.
  std::function<std::string(const ResultLine&)> key_of;
  // Called as rows arrive (on either of rank 0's threads, one call at a time): rows done,
  // resumed ones included, and the total.
  std::function<void(size_t, size_t)> progress;
  CoordinatorStats* stats = nullptr;  // filled in when given
};

// Rank 0: hands out the cells not yet in the file, heaviest first, to the worker ranks as they
// ask, and runs cells itself on a second thread; appends every row to the file when it arrives
// (flushed and checked, so a rank failing later loses no finished row), and when all are in
// rewrites the file in configuration order (order_results_file). Returns every cell's row in
// configuration order (resumed rows as read). A worker's error is rethrown here naming its rank.
std::vector<std::string> coordinate_cells(SweepComm& comm, std::span<const std::string> keys,
                                          std::span<const double> weights,
                                          const std::function<std::string(size_t)>& run,
                                          const CoordinatorOptions& options);

// Ranks > 0: asks rank 0 for a cell, runs it, sends its row (which asks for the next), until
// told to stop. An exception from `run` is reported to rank 0 and rethrown.
void work_for_coordinator(SweepComm& comm, const std::function<std::string(size_t)>& run);

}  // namespace kvpolicy
