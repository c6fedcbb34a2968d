#include "import_cells.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "kvpolicy/core/strings.h"

namespace kvpolicy::import_cells {

std::optional<uint64_t> parse_uint(std::string_view s) {
  s = trim(s);
  uint64_t v;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && p == s.data() + s.size()) return v;
  double d;
  auto [q, ec2] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec2 == std::errc() && q == s.data() + s.size() && d >= 0 && d == std::floor(d) && d < 1.8e19)
    return static_cast<uint64_t>(d);
  return std::nullopt;
}

std::string parse_int_list(std::string_view s, bool signed_ok, std::vector<uint64_t>& out) {
  out.clear();
  s = trim(s);
  if (!s.empty() && s.front() == '[') {
    if (s.back() != ']') return "a list that opens with '[' must close with ']'";
    s = s.substr(1, s.size() - 2);
  }
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    const char* begin = s.data() + i;
    const char* end = s.data() + s.size();
    const char* p;
    std::errc ec;
    uint64_t v = 0;
    if (c == '-' && signed_ok) {
      int64_t neg = 0;  // from_chars leaves it unset on an error, which is checked below
      auto r = std::from_chars(begin, end, neg);
      p = r.ptr;
      ec = r.ec;
      v = static_cast<uint64_t>(neg);
    } else {
      auto r = std::from_chars(begin, end, v);
      p = r.ptr;
      ec = r.ec;
    }
    if (ec != std::errc() ||
        (p < end && *p != ' ' && *p != ',' && *p != '\t' && *p != '\n' && *p != '\r'))
      return fmt::format("item {}: expected {}", out.size() + 1,
                         signed_ok ? "a 64-bit integer" : "a non-negative integer");
    out.push_back(v);
    i = static_cast<size_t>(p - s.data());
  }
  return "";
}

}  // namespace kvpolicy::import_cells
