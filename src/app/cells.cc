#include "kvpolicy/app/cells.h"

namespace kvpolicy::app {

std::vector<size_t> cells_of_shard(const SweepCells& cells, Shard shard) {
  std::vector<uint32_t> of = shard_of_cells(cells.weights, shard.count);
  std::vector<size_t> mine;
  for (size_t i = 0; i < of.size(); ++i)
    if (of[i] == shard.index) mine.push_back(i);
  return mine;
}

}  // namespace kvpolicy::app
