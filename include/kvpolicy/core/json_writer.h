// A flat JSON object written field by field, for result lines (one object per line).
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <string_view>

namespace kvpolicy {

class JsonObject {
 public:
  JsonObject& add(std::string_view key, std::string_view value) {
    return raw(key, fmt::format("{:?}", value));
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
    body_ += fmt::format("{:?}:", key);
    body_ += json;
    return *this;
  }
  std::string str() const { return body_.empty() ? "{}" : body_ + "}"; }

 private:
  std::string body_;
};

}  // namespace kvpolicy
