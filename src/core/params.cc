#include "kvpolicy/core/params.h"

#include <charconv>
#include <cmath>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

Params Params::parse(const std::string& text, const std::vector<ParamSpec>& spec,
                     const std::string& owner) {
  Params p;
  p.owner_ = owner;
  for (auto& s : spec) p.values_[s.name] = s.default_value;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError(owner + ": parameter '" + item + "' is not key=value");
    std::string key = item.substr(0, eq);
    if (!p.values_.count(key)) {
      std::string known;
      for (auto& s : spec) known += (known.empty() ? "" : ", ") + s.name;
      throw ConfigError(owner + ": unknown parameter '" + key + "'" +
                        (known.empty() ? " (it takes none)" : " (known: " + known + ")"));
    }
    p.values_[key] = item.substr(eq + 1);
  }
  return p;
}

const std::string& Params::raw(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw ConfigError(owner_ + ": no parameter '" + name + "'");
  return it->second;
}

std::string Params::get_string(const std::string& name) const { return raw(name); }

double Params::get_double(const std::string& name) const {
  const std::string& s = raw(name);
  double v;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v))
    throw ConfigError(owner_ + ": parameter '" + name + "' = '" + s + "' is not a number");
  return v;
}

int64_t Params::get_int(const std::string& name) const {
  const std::string& s = raw(name);
  int64_t v;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size())
    throw ConfigError(owner_ + ": parameter '" + name + "' = '" + s + "' is not an integer");
  return v;
}

bool Params::get_bool(const std::string& name) const {
  const std::string& s = raw(name);
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  throw ConfigError(owner_ + ": parameter '" + name + "' = '" + s + "' is not a boolean");
}

std::string Params::canonical() const {
  std::string out;
  for (auto& [k, v] : values_) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

}  // namespace kvpolicy
