// The one reading of a number that a person or a file wrote: command-line options, parameter
// strings, capacities and list items all go through it, so they take the same spellings.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kvpolicy {

// The whole text as a decimal number: digits with an optional '-', fraction and exponent. No hex,
// no "inf" or "nan", no blanks, no '+'; the value finite.
std::optional<double> read_number(std::string_view text);
// The whole text as a decimal integer that fits the type (no exponent, no fraction).
std::optional<int64_t> read_int(std::string_view text);
std::optional<uint64_t> read_uint(std::string_view text);

// The same within [lo, hi]; otherwise a ConfigError "WHAT: 'TEXT' is not a number in [LO, HI]"
// (or "a whole number").
double checked_number(std::string_view text, double lo, double hi, std::string_view what);
uint64_t checked_uint(std::string_view text, uint64_t lo, uint64_t hi, std::string_view what);

// How many leading characters of `text` read as a number (0 if none do), for values with a unit
// after them ("4.8GiB", "5%").
size_t number_length(std::string_view text);

}  // namespace kvpolicy
