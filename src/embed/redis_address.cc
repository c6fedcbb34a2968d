// parse_redis_address: only text, so it is built with or without hiredis (KVPOLICY_REDIS).
#include <charconv>
#include <string>
#include <string_view>

#include "kvpolicy/core/error.h"
#include "kvpolicy/embed/stores.h"

namespace kvpolicy::embed {
namespace {

// `s` with its %XX escapes decoded; false on a malformed escape.
bool percent_decode(std::string_view s, std::string& out) {
  out.clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    unsigned value = 0;
    if (i + 2 >= s.size()) return false;
    auto [end, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, value, 16);
    if (ec != std::errc() || end != s.data() + i + 3) return false;
    out += static_cast<char>(value);
    i += 2;
  }
  return true;
}

}  // namespace

RedisOptions parse_redis_address(const std::string& address, const std::string& flag) {
  RedisOptions o;
  std::string_view rest = address;
  const bool url = rest.starts_with("redis://");
  auto bad = [&](const std::string& why) -> ConfigError {
    // The address may hold a password: the message names the flag, not the text.
    return ConfigError(flag + ": " + why +
                       " (expected HOST:PORT or redis://[[USER]:PASSWORD@]HOST[:PORT][/0])");
  };
  if (url) {
    rest.remove_prefix(8);
    if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
      std::string_view db = rest.substr(slash + 1);
      if (!db.empty() && db != "0") throw bad("databases other than 0 are not supported");
      rest = rest.substr(0, slash);
    }
    if (size_t at = rest.rfind('@'); at != std::string_view::npos) {
      std::string_view userinfo = rest.substr(0, at);
      rest = rest.substr(at + 1);
      size_t colon = userinfo.find(':');
      std::string_view user = userinfo.substr(0, colon);
      std::string_view password =
          colon == std::string_view::npos ? std::string_view() : userinfo.substr(colon + 1);
      if (!percent_decode(user, o.username) || !percent_decode(password, o.password))
        throw bad("a malformed %XX escape in the user or password");
      if (o.password.empty()) throw bad("a user without a password");
    }
  }
  size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos) {
    if (!url) throw bad("no port");
    o.host = std::string(rest);
  } else {
    o.host = std::string(rest.substr(0, colon));
    std::string_view port = rest.substr(colon + 1);
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value < 1 ||
        value > 65535)
      throw bad("the port must be a number in [1, 65535]");
    o.port = static_cast<int>(value);
  }
  if (o.host.empty()) throw bad("no host");
  return o;
}

}  // namespace kvpolicy::embed
