// `key=value,...` parameters of policies, routers and generators, checked against a spec.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kvpolicy {

struct ParamSpec {
  std::string name;
  std::string default_value;
  std::string help;
};

class Params {
 public:
  Params() = default;
  // Parses "a=1,b=x"; throws ConfigError on a malformed item or a key not in `spec`.
  static Params parse(const std::string& text, const std::vector<ParamSpec>& spec,
                      const std::string& owner);

  std::string get_string(const std::string& name) const;
  double get_double(const std::string& name) const;
  int64_t get_int(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  // Canonical "a=1,b=x" with every parameter, defaults filled in.
  std::string canonical() const;

 private:
  const std::string& raw(const std::string& name) const;
  std::string owner_;
  std::map<std::string, std::string> values_;
};

}  // namespace kvpolicy
