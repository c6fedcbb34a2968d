// A flat JSON object written field by field, for result lines (one object per line), and the one
// JSON string writer every JSON output uses.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <string_view>

namespace kvpolicy {

// `s` as an RFC 8259 JSON string, quotes included: '"', '\\' and the control characters below
// 0x20 escaped (\n, \t, ... or \u00XX), valid UTF-8 kept as it is, and each byte that is not part
// of a valid UTF-8 sequence written as \ufffd (JSON text is Unicode; a raw byte cannot be kept).
std::string json_string(std::string_view s);

class JsonObject {
 public:
  JsonObject& add(std::string_view key, std::string_view value) {
    return raw(key, json_string(value));
  }
  JsonObject& add(std::string_view key, const char* value) {
    return add(key, std::string_view(value));
  }
  template <typename Int>
  requires std::is_integral_v<Int> JsonObject& add(std::string_view key, Int value) {
    return raw(key, fmt::format("{}", value));
  }
  // Non-finite numbers become null, which JSON can carry and NaN cannot.
  JsonObject& add(std::string_view key, double value, int decimals = 6) {
    return raw(key, std::isfinite(value) ? fmt::format("{:.{}f}", value, decimals) : "null");
  }
  JsonObject& add_null(std::string_view key) { return raw(key, "null"); }
  // `json` must already be valid JSON (an object, array or number).
  JsonObject& raw(std::string_view key, std::string_view json) {
    body_ += body_.empty() ? "{" : ",";
    body_ += json_string(key);
    body_ += ':';
    body_ += json;
    return *this;
  }
  std::string str() const { return body_.empty() ? "{}" : body_ + "}"; }

 private:
  std::string body_;
};

}  // namespace kvpolicy
