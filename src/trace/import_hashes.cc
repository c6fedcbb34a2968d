#include "import_hashes.h"

#include <fmt/format.h>

#include <charconv>

namespace kvpolicy {
namespace {

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool all_hex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_hex(c)) return false;
  return true;
}

uint64_t hex_value(std::string_view s) {  // at most 16 hex digits
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return v;
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::string HashStringKeys::key(std::string_view s, uint64_t& out) {
  if (s.size() >= 17 && all_hex(s)) {
    out = hex_value(s.substr(0, 16));
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s.size() <= 18 &&
             all_hex(s.substr(2))) {
    out = hex_value(s.substr(2));
  } else {
    const char* end = s.data() + s.size();
    uint64_t u;
    int64_t i;
    if (!s.empty() && s[0] != '-' && std::from_chars(s.data(), end, u).ptr == end &&
        std::from_chars(s.data(), end, u).ec == std::errc()) {
      out = u;
    } else if (!s.empty() && s[0] == '-' && std::from_chars(s.data(), end, i).ptr == end &&
               std::from_chars(s.data(), end, i).ec == std::errc()) {
      out = static_cast<uint64_t>(i);
    } else if (s.size() <= 16 && all_hex(s)) {
      out = hex_value(s);
    } else {
      out = fnv1a(s);
    }
  }
  auto [it, inserted] = seen_.try_emplace(out, s);
  if (!inserted && it->second != s)
    return fmt::format(
        "block hashes '{}' and '{}' both map to the 64-bit key {:016x}: a "
        "collision, which would merge two different blocks",
        it->second, s, out);
  return "";
}

}  // namespace kvpolicy
