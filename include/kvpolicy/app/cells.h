// A sweep's cells (its configurations) as a shard or a distributed run sees them: each cell's
// resume key and estimated cost, and how to read a results line's key.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kvpolicy/core/cell_sweep.h"
#include "kvpolicy/core/resumable.h"

namespace kvpolicy::app {

struct SweepCells {
  std::vector<std::string> keys;                         // each cell's resume key
  std::vector<double> weights;                           // each cell's estimated cost
  std::function<std::string(const ResultLine&)> key_of;  // a results line's key
};

// The cells of `shard` (shard_of_cells), in configuration order.
std::vector<size_t> cells_of_shard(const SweepCells& cells, Shard shard);

// Keeps only `shard`'s configurations, and their keys in `cells`.
template <typename Config>
void keep_shard(std::vector<Config>& configs, SweepCells& cells, Shard shard) {
  std::vector<Config> mine;
  std::vector<std::string> keys;
  for (size_t i : cells_of_shard(cells, shard)) {
    mine.push_back(configs[i]);
    keys.push_back(cells.keys[i]);
  }
  configs = std::move(mine);
  cells.keys = std::move(keys);
}

}  // namespace kvpolicy::app
