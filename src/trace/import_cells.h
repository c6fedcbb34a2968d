// `trace import`'s cells of numbers: one integer, or a list of them. Internal to src/trace
// (import.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvpolicy::import_cells {

// A non-negative integer cell; integral decimals (12.0) are accepted.
std::optional<uint64_t> parse_uint(std::string_view s);
// A list of integers as a JSON array ("[1, 2, 3]") or separated by spaces or commas ("1 2 3");
// with `signed_ok`, negative 64-bit values are kept as their two's complement (Python's hash()).
// Returns an error message (empty on success).
std::string parse_int_list(std::string_view s, bool signed_ok, std::vector<uint64_t>& out);

}  // namespace kvpolicy::import_cells
