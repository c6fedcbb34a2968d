// The embedding cache of DLRM inference (the LCR paper's second GPU cache,
// docs/results/embed.md): its vocabulary. A lookup names a row (`index`) of an embedding table; an
// SLS sample pools the rows of its lookups; a batch of samples is one SLS query. Keys put table and
// index in one 64-bit id.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/core/types.h"

namespace kvpolicy::embed {

using EmbKey = uint64_t;
inline constexpr uint32_t kIndexBits = 40;  // up to 2^40 rows per table, 2^24 tables
inline constexpr EmbKey make_key(uint32_t table, uint64_t index) {
  return (uint64_t{table} << kIndexBits) | (index & ((uint64_t{1} << kIndexBits) - 1));
}
inline constexpr uint32_t table_of(EmbKey k) { return static_cast<uint32_t>(k >> kIndexBits); }
inline constexpr uint64_t index_of(EmbKey k) { return k & ((uint64_t{1} << kIndexBits) - 1); }

// Embedding lookups in arrival order, grouped into samples (one pooled SLS output each).
struct EmbeddingTrace {
  std::string name;
  std::vector<EmbKey> keys;                // per lookup
  std::vector<uint64_t> sample_offset{0};  // sample s: lookups [offset[s], offset[s+1])
  std::vector<Time> sample_time;           // per sample, microseconds, non-decreasing

  size_t samples() const { return sample_time.size(); }
  size_t lookups() const { return keys.size(); }
  std::span<const EmbKey> sample(size_t s) const {
    return {keys.data() + sample_offset[s], keys.data() + sample_offset[s + 1]};
  }
  void add_sample(Time t, std::span<const EmbKey> lookups);
  // Column lengths, offsets and times; throws Error naming the first problem.
  void validate() const;
};

// Distinct keys of the trace.
size_t count_unique_keys(const EmbeddingTrace& trace);

// Where missed rows come from: the full tables, in host memory or a store such as Redis.
class EmbeddingStore {
 public:
  virtual ~EmbeddingStore() = default;
  virtual uint32_t dim() const = 0;  // floats per row
  // Writes the row of keys[i] to out[i * dim, (i + 1) * dim). Throws Error when a row is
  // missing or the store fails: never a silent zero vector.
  virtual void fetch(std::span<const EmbKey> keys, std::span<float> out) = 0;
  virtual std::string name() const = 0;
};

// The row a key has in every store of this project: deterministic floats from the key, so a
// store can be filled, checked and compared without a model's weights.
void synthetic_row(EmbKey key, std::span<float> out);

}  // namespace kvpolicy::embed
