#include "kvpolicy/core/capacity.h"

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
    if (v > 100) bad(text, "a share cannot exceed 100%");
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
      b = value * double(unique_blocks);
      break;
    case Unit::kTokens:
      b = value / block_tokens;
      break;
    case Unit::kBytes:
      b = value / kv_bytes_per_block;
      break;
  }
  if (b >= 1e15) bad(text, "more than 10^15 blocks");
  size_t blocks = static_cast<size_t>(std::floor(b));
  if (blocks == 0) bad(text, "less than one block");
  return blocks;
}

}  // namespace kvpolicy
