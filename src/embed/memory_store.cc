#include <algorithm>
#include <string>

#include "kvpolicy/core/error.h"
#include "kvpolicy/embed/stores.h"

namespace kvpolicy::embed {

MemoryStore::MemoryStore(std::span<const EmbKey> keys, uint32_t dim) : dim_(dim) {
  if (dim == 0) throw ConfigError("memory store: dim must be positive");
  row_of_.reserve(keys.size());
  table_.reserve(keys.size() * size_t{dim});
  for (EmbKey k : keys) {
    if (!row_of_.try_emplace(k, row_of_.size()).second) continue;
    table_.resize(table_.size() + dim);
    synthetic_row(k, std::span<float>(table_).last(dim));
  }
}

void MemoryStore::fetch(std::span<const EmbKey> keys, std::span<float> out) {
  if (out.size() != keys.size() * size_t{dim_})
    throw Error("memory store: " + std::to_string(keys.size()) + " keys of dim " +
                std::to_string(dim_) + " need " + std::to_string(keys.size() * size_t{dim_}) +
                " floats, the output has " + std::to_string(out.size()));
  for (size_t i = 0; i < keys.size(); ++i) {
    auto it = row_of_.find(keys[i]);
    if (it == row_of_.end())
      throw Error("memory store: no row for key " + std::to_string(keys[i]) + " (table " +
                  std::to_string(table_of(keys[i])) + ", index " +
                  std::to_string(index_of(keys[i])) + ")");
    const float* row = table_.data() + it->second * dim_;
    std::copy(row, row + dim_, out.begin() + i * dim_);
  }
}

}  // namespace kvpolicy::embed
