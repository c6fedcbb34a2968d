#include "kvpolicy/core/numbers.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

namespace {

template <typename T>
std::optional<T> read_whole(std::string_view text) {
  T v;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<double> read_number(std::string_view text) {
  // from_chars also reads "inf", "nan" and "infinity"; a number starts with a digit or a '.'.
  size_t first = !text.empty() && text[0] == '-' ? 1 : 0;
  if (first >= text.size() ||
      !(std::isdigit(static_cast<unsigned char>(text[first])) || text[first] == '.'))
    return std::nullopt;
  std::optional<double> v = read_whole<double>(text);
  if (v && !std::isfinite(*v)) return std::nullopt;
  return v;
}

std::optional<int64_t> read_int(std::string_view text) { return read_whole<int64_t>(text); }

std::optional<uint64_t> read_uint(std::string_view text) { return read_whole<uint64_t>(text); }

double checked_number(std::string_view text, double lo, double hi, std::string_view what) {
  std::optional<double> v = read_number(text);
  if (!v || *v < lo || *v > hi)
    throw ConfigError(fmt::format("{}: '{}' is not a number in [{:g}, {:g}]", what, text, lo, hi));
  return *v;
}

uint64_t checked_uint(std::string_view text, uint64_t lo, uint64_t hi, std::string_view what) {
  std::optional<uint64_t> v = read_uint(text);
  if (!v || *v < lo || *v > hi)
    throw ConfigError(
        fmt::format("{}: '{}' is not a whole number from {} to {}", what, text, lo, hi));
  return *v;
}

size_t number_length(std::string_view text) {
  double v;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc()) return 0;
  size_t n = static_cast<size_t>(end - text.data());
  return read_number(text.substr(0, n)) ? n : 0;
}

}  // namespace kvpolicy
