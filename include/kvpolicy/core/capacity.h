// A cache capacity as a user writes it: blocks ("4096"), a share of the trace's unique blocks
// ("0.05" or "5%"), tokens ("10000t"), or KV memory ("40GB", "4.8GiB", "512MB"; converted
// through the cost model's KV bytes per block).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kvpolicy {

struct CapacitySpec {
  enum class Unit { kBlocks, kFraction, kTokens, kBytes };
  Unit unit = Unit::kBlocks;
  double value = 0;
  std::string text;  // as written

  bool is_fraction() const { return unit == Unit::kFraction; }
  // In blocks (floor; at least 0). Throws ConfigError when the result is below one block.
  size_t blocks(size_t unique_blocks, uint32_t block_tokens, double kv_bytes_per_block) const;
};

// Throws ConfigError naming the text and the accepted forms.
CapacitySpec parse_capacity(const std::string& text);
std::vector<CapacitySpec> parse_capacity_list(const std::string& text);  // comma-separated

}  // namespace kvpolicy
