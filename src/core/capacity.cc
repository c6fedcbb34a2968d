#include "kvpolicy/core/capacity.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/strings.h"

namespace kvpolicy {
namespace {

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw ConfigError("capacity '" + text + "': " + why +
                    " (write blocks like 4096, a share of the trace's unique blocks like 0.05 "
                    "or 5%, tokens like 10000t, or KV memory like 40GB or 4.8GiB)");
}

}  // namespace

CapacitySpec parse_capacity(const std::string& text) {
  CapacitySpec c;
  c.text = text;
  size_t digits = number_length(text);
  if (digits == 0) bad(text, "not a number");
  double v = *read_number(std::string_view(text).substr(0, digits));
  if (v <= 0) bad(text, "must be a positive number");
  const std::string rest = text.substr(digits);
  std::string unit = rest;
  for (char& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  struct Suffix {
    const char* name;
    double bytes;
  };
  static const Suffix kBytes[] = {
      {"kb", 1e3},     {"mb", 1e6},        {"gb", 1e9},           {"tb", 1e12},
      {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0}};
  if (unit.empty()) {
    c.unit = v < 1 ? CapacitySpec::Unit::kFraction : CapacitySpec::Unit::kBlocks;
    if (c.unit == CapacitySpec::Unit::kBlocks && v != std::floor(v))
      bad(text, "a number of blocks must be whole");
    c.value = v;
  } else if (unit == "%") {
    c.unit = CapacitySpec::Unit::kFraction;
    c.value = v / 100;
  } else if (unit == "t") {
    c.unit = CapacitySpec::Unit::kTokens;
    c.value = v;
  } else {
    bool found = false;
    for (const Suffix& s : kBytes) {
      if (unit == s.name) {
        c.unit = CapacitySpec::Unit::kBytes;
        c.value = v * s.bytes;
        found = true;
      }
    }
    if (!found) bad(text, "unknown unit '" + rest + "'");
  }
  return c;
}

std::vector<CapacitySpec> parse_capacity_list(const std::string& text) {
  std::vector<CapacitySpec> out;
  for (const std::string& item : split_list(text)) out.push_back(parse_capacity(item));
  if (out.empty()) throw ConfigError("no capacity given");
  return out;
}

size_t CapacitySpec::blocks(size_t unique_blocks, uint32_t block_tokens,
                            double kv_bytes_per_block) const {
  double b = 0;
  switch (unit) {
    case Unit::kBlocks:
      b = value;
      break;
    case Unit::kFraction:
      // Nearest, as replays always rounded a share (the recorded results stay).
      b = std::round(value * double(unique_blocks));
      break;
    case Unit::kTokens:
      if (block_tokens == 0) bad(text, "tokens need the trace's block size");
      b = std::floor(value / block_tokens);
      break;
    case Unit::kBytes:
      if (!(kv_bytes_per_block > 0)) bad(text, "KV memory needs the KV bytes of a block");
      b = std::floor(value / kv_bytes_per_block);
      break;
  }
  if (b >= 1e15) bad(text, "more than 10^15 blocks");
  if (b < 1) bad(text, "less than one block");
  return static_cast<size_t>(b);
}

std::string CapacitySpec::label() const {
  return is_fraction() ? fmt::format("{:g}%", value * 100) : text;
}

CapacitySpec CapacitySpec::whole_blocks(size_t blocks) {
  CapacitySpec c;
  c.value = double(blocks);
  c.text = std::to_string(blocks);
  return c;
}

CapacitySpec CapacitySpec::share(double fraction) {
  CapacitySpec c;
  c.unit = Unit::kFraction;
  c.value = fraction;
  c.text = c.label();
  return c;
}

CapacitySpec replay_capacity(const CapacitySpec& spec, size_t unique_blocks, uint32_t block_tokens,
                             double kv_bytes_per_block) {
  if (spec.is_fraction()) {
    spec.blocks(unique_blocks);  // below one block is refused here too
    return spec;
  }
  return CapacitySpec::whole_blocks(spec.blocks(unique_blocks, block_tokens, kv_bytes_per_block));
}

}  // namespace kvpolicy
