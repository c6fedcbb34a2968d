// `key=value,...` parameters of policies, predictors, generators and the cost model. Each
// parameter declares its kind and what it accepts; Params::parse checks every value against its
// declaration, so constructors read values that are already valid.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kvpolicy {

// kNested: a component chosen by name with its own parameters in parentheses,
// `predictor=reuse(window=20000,trees=50)` (the name alone takes its defaults).
enum class ParamKind { kInt, kDouble, kBool, kString, kChoice, kNested };

struct ParamSpec;

// One choice of a kNested parameter: its name, what it is, and its own parameters.
// `unavailable`, when set, is why this build cannot make it (the error naming the option).
struct NestedChoice {
  std::string name;
  std::string summary;
  std::vector<ParamSpec> params;
  std::string unavailable;
};

// What a number may be: bounds (unset = unbounded), and special values accepted outside them
// (T-LRU's `alpha = -1` for "from the cost model").
struct ParamRange {
  std::optional<double> min = {}, max = {};
  bool min_exclusive = false, max_exclusive = false;
  std::vector<double> special = {};
};

struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::kString;
  std::string default_value;
  std::string help;
  // kInt, kDouble: the numbers accepted. kChoice: if set, a number in it is accepted besides the
  // words (WA's `life` = p90 | p90_all | none | seconds).
  std::optional<ParamRange> range = {};
  std::vector<std::string> choices = {};  // kChoice: the words accepted
  // kNested: the choices, asked for when a value is checked or listed (a registry filled at
  // static initialisation, so not read when the declaration is made).
  std::function<std::vector<NestedChoice>()> nested = {};
  // A deprecated spelling kept for old result files and scripts: accepted, not listed.
  bool deprecated = false;

  // "int", "double", "bool", "string" or "choice".
  std::string type_name() const;
  // What a value may be, as error messages and `kvpolicy policies` say it: "an integer >= 1",
  // "a number in (0, 1)", "one of model, depth, uniform".
  std::string allowed() const;
  // Whether `value` is one the declaration accepts.
  bool accepts(const std::string& value) const;
  // Why `value` is not accepted ("" when it is): "must be ...", or a nested parameter's error.
  std::string problem(const std::string& value) const;
};

// "reuse(window=5,trees=3)" -> {"reuse", "window=5,trees=3"}; "gbm" -> {"gbm", ""}. Throws
// ConfigError on unbalanced parentheses or text after the closing one.
std::pair<std::string, std::string> split_nested(const std::string& value);
// Splits at the commas outside parentheses: "a=1,p=r(x=1,y=2)" -> {"a=1", "p=r(x=1,y=2)"}.
std::vector<std::string> split_top_level(const std::string& text);

// One-line declarations: param_int("c", 4, {.min = 1}, "LRU candidates per eviction").
ParamSpec param_int(std::string name, int64_t default_value, ParamRange range, std::string help);
ParamSpec param_double(std::string name, double default_value, ParamRange range, std::string help);
ParamSpec param_bool(std::string name, bool default_value, std::string help);
ParamSpec param_string(std::string name, std::string default_value, std::string help);
ParamSpec param_choice(std::string name, std::string default_value,
                       std::vector<std::string> choices, std::string help,
                       std::optional<ParamRange> or_number = {});
ParamSpec param_nested(std::string name, std::string default_value,
                       std::function<std::vector<NestedChoice>()> choices, std::string help);
ParamSpec deprecated(ParamSpec spec);

class Params {
 public:
  Params() = default;
  // Parses "a=1,b=x"; throws ConfigError "<owner>: parameter <key> = '<value>' ..." on a
  // malformed item, a key not in `spec`, or a value its declaration does not accept.
  static Params parse(const std::string& text, const std::vector<ParamSpec>& spec,
                      const std::string& owner);

  std::string get_string(const std::string& name) const;
  double get_double(const std::string& name) const;
  int64_t get_int(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  // Canonical "a=1,b=x" with every parameter, defaults filled in.
  std::string canonical() const;
  // Who takes these parameters ("policy laru"), for error messages.
  const std::string& owner() const { return owner_; }

 private:
  const std::string& raw(const std::string& name) const;
  std::string owner_;
  std::map<std::string, std::string> values_;
};

}  // namespace kvpolicy
