// A cache capacity as a user writes it: blocks ("4096"), a share of the trace's unique blocks
// ("0.05", "5%", or above the trace like "150%"), tokens ("10000t"), or KV memory ("40GB",
// "4.8GiB", "512MB"; converted through the cost model's KV bytes per block). The one capacity
// type of every command: it carries its unit from the parser to the replay.
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
  // The share as results echo it ("capacity_fraction"): -1 unless written as a share.
  double fraction() const { return is_fraction() ? value : -1; }
  // In blocks, the one rounding rule of every command: a share rounds to the nearest block
  // (llround), tokens and KV memory round down (a budget holds whole blocks only). Tokens need
  // `block_tokens`, KV memory `kv_bytes_per_block`. Throws ConfigError below one block.
  size_t blocks(size_t unique_blocks, uint32_t block_tokens = 0,
                double kv_bytes_per_block = 0) const;
  // "5%" for a share, else as written ("4096", "40GB").
  std::string label() const;

  static CapacitySpec whole_blocks(size_t blocks);
  static CapacitySpec share(double fraction);  // of the unique blocks: 0.05 = 5%
};

// Throws ConfigError naming the text and the accepted forms.
CapacitySpec parse_capacity(const std::string& text);
std::vector<CapacitySpec> parse_capacity_list(const std::string& text);  // comma-separated

// What a replay takes: a share stays a share (results echo it), any other unit becomes its
// whole blocks (through blocks()).
CapacitySpec replay_capacity(const CapacitySpec& spec, size_t unique_blocks, uint32_t block_tokens,
                             double kv_bytes_per_block);

}  // namespace kvpolicy
