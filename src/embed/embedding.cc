#include "kvpolicy/embed/embedding.h"

#include <string>
#include <unordered_set>

#include "kvpolicy/core/error.h"

namespace kvpolicy::embed {

void EmbeddingTrace::add_sample(Time t, std::span<const EmbKey> lookups) {
  keys.insert(keys.end(), lookups.begin(), lookups.end());
  sample_offset.push_back(keys.size());
  sample_time.push_back(t);
}

void EmbeddingTrace::validate() const {
  if (sample_offset.size() != sample_time.size() + 1)
    throw Error("embedding trace: " + std::to_string(sample_offset.size()) + " offsets for " +
                std::to_string(sample_time.size()) + " samples");
  if (sample_offset.front() != 0 || sample_offset.back() != keys.size())
    throw Error("embedding trace: offsets do not span the lookups");
  for (size_t s = 0; s < samples(); ++s) {
    if (sample_offset[s + 1] < sample_offset[s])
      throw Error("embedding trace: sample " + std::to_string(s) + " has a negative length");
    if (s && sample_time[s] < sample_time[s - 1])
      throw Error("embedding trace: sample " + std::to_string(s) + " goes back in time");
  }
}

size_t count_unique_keys(const EmbeddingTrace& trace) {
  std::unordered_set<EmbKey> seen(trace.keys.begin(), trace.keys.end());
  return seen.size();
}

void synthetic_row(EmbKey key, std::span<float> out) {
  uint64_t x = mix64(key ^ 0x656d62656464ULL);  // "embedd"
  for (float& v : out) {
    x = mix64(x + 0x9e3779b97f4a7c15ULL);
    v = static_cast<float>(static_cast<int64_t>(x >> 40) - (int64_t{1} << 23)) / float(1 << 23);
  }
}

}  // namespace kvpolicy::embed
