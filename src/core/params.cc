#include "kvpolicy/core/params.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/strings.h"

namespace kvpolicy {

namespace {

std::optional<bool> to_bool(const std::string& s) {
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  return std::nullopt;
}

bool in_range(double v, const ParamRange& r) {
  for (double s : r.special)
    if (v == s) return true;
  if (r.min && (r.min_exclusive ? v <= *r.min : v < *r.min)) return false;
  if (r.max && (r.max_exclusive ? v >= *r.max : v > *r.max)) return false;
  return true;
}

// ">= 1", "in (0, 1]", "> 0, or -1"; empty when any number goes.
std::string range_text(const ParamRange& r) {
  std::string out;
  if (r.min && r.max) {
    out = fmt::format("in {}{}, {}{}", r.min_exclusive ? '(' : '[', *r.min, *r.max,
                      r.max_exclusive ? ')' : ']');
  } else if (r.min) {
    out = fmt::format("{} {}", r.min_exclusive ? ">" : ">=", *r.min);
  } else if (r.max) {
    out = fmt::format("{} {}", r.max_exclusive ? "<" : "<=", *r.max);
  }
  for (double s : r.special) out += fmt::format("{}{}", out.empty() ? "" : ", or ", s);
  return out;
}

std::string number_text(const char* noun, const ParamRange& r) {
  std::string range = range_text(r);
  return range.empty() ? noun : std::string(noun) + " " + range;
}

}  // namespace

std::string ParamSpec::type_name() const {
  switch (kind) {
    case ParamKind::kInt:
      return "int";
    case ParamKind::kDouble:
      return "double";
    case ParamKind::kBool:
      return "bool";
    case ParamKind::kString:
      return "string";
    case ParamKind::kChoice:
      return "choice";
    case ParamKind::kNested:
      return "name(key=value,...)";
  }
  return "?";
}

std::string ParamSpec::allowed() const {
  switch (kind) {
    case ParamKind::kInt:
      return number_text("an integer", range.value_or(ParamRange{}));
    case ParamKind::kDouble:
      return number_text("a number", range.value_or(ParamRange{}));
    case ParamKind::kBool:
      return "a boolean (1, 0, true, false, yes, no, on, off)";
    case ParamKind::kString:
      return "a string";
    case ParamKind::kChoice: {
      std::string out = "one of ";
      for (size_t i = 0; i < choices.size(); ++i) out += (i ? ", " : "") + choices[i];
      if (range) out += ", or " + number_text("a number", *range);
      return out;
    }
    case ParamKind::kNested: {
      std::string out = "one of ";
      std::vector<NestedChoice> all = nested ? nested() : std::vector<NestedChoice>{};
      for (size_t i = 0; i < all.size(); ++i) out += (i ? ", " : "") + all[i].name;
      return out + ", each optionally with its parameters: name(key=value,...)";
    }
  }
  return "?";
}

std::string ParamSpec::problem(const std::string& value) const {
  if (kind != ParamKind::kNested) return accepts(value) ? "" : "must be " + allowed();
  std::pair<std::string, std::string> parts;
  try {
    parts = split_nested(value);
  } catch (const ConfigError& e) {
    return std::string("is invalid: ") + e.what();
  }
  for (const NestedChoice& c : nested ? nested() : std::vector<NestedChoice>{}) {
    if (c.name != parts.first) continue;
    if (!c.unavailable.empty()) return "is unavailable: " + c.unavailable;
    try {
      Params::parse(parts.second, c.params, name + " " + c.name);
    } catch (const ConfigError& e) {
      return std::string("is invalid: ") + e.what();
    }
    return "";
  }
  return "must be " + allowed();
}

std::pair<std::string, std::string> split_nested(const std::string& value) {
  size_t open = value.find('(');
  if (open == std::string::npos) {
    if (value.find(')') != std::string::npos)
      throw ConfigError("'" + value + "' has a ')' without a '('");
    return {value, ""};
  }
  if (value.back() != ')' || value.find('(', open + 1) != std::string::npos ||
      value.find(')') != value.size() - 1)
    throw ConfigError("'" + value + "' must be name(key=value,...) with one pair of parentheses");
  return {value.substr(0, open), value.substr(open + 1, value.size() - open - 2)};
}

std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '(') ++depth;
    if (i < text.size() && text[i] == ')') --depth;
    if (i == text.size() || (text[i] == ',' && depth <= 0)) {
      if (i > start) out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

bool ParamSpec::accepts(const std::string& value) const {
  ParamRange any;
  switch (kind) {
    case ParamKind::kInt: {
      std::optional<int64_t> v = read_int(value);
      return v && in_range(double(*v), range.value_or(any));
    }
    case ParamKind::kDouble: {
      std::optional<double> v = read_number(value);
      return v && in_range(*v, range.value_or(any));
    }
    case ParamKind::kBool:
      return to_bool(value).has_value();
    case ParamKind::kString:
      return true;
    case ParamKind::kNested:
      return problem(value).empty();
    case ParamKind::kChoice: {
      for (auto& c : choices)
        if (value == c) return true;
      std::optional<double> v = range ? read_number(value) : std::nullopt;
      return v && in_range(*v, *range);
    }
  }
  return false;
}

ParamSpec param_int(std::string name, int64_t default_value, ParamRange range, std::string help) {
  return {std::move(name), ParamKind::kInt, std::to_string(default_value), std::move(help),
          std::move(range)};
}

ParamSpec param_double(std::string name, double default_value, ParamRange range, std::string help) {
  // fmt's shortest round-trip form: 0.1 stays "0.1", 1800 is "1800".
  return {std::move(name), ParamKind::kDouble, fmt::format("{}", default_value), std::move(help),
          std::move(range)};
}

ParamSpec param_bool(std::string name, bool default_value, std::string help) {
  return {std::move(name), ParamKind::kBool, default_value ? "1" : "0", std::move(help)};
}

ParamSpec param_string(std::string name, std::string default_value, std::string help) {
  return {std::move(name), ParamKind::kString, std::move(default_value), std::move(help)};
}

ParamSpec param_choice(std::string name, std::string default_value,
                       std::vector<std::string> choices, std::string help,
                       std::optional<ParamRange> or_number) {
  return {std::move(name), ParamKind::kChoice,   std::move(default_value),
          std::move(help), std::move(or_number), std::move(choices)};
}

ParamSpec param_nested(std::string name, std::string default_value,
                       std::function<std::vector<NestedChoice>()> choices, std::string help) {
  ParamSpec s{std::move(name), ParamKind::kNested, std::move(default_value), std::move(help)};
  s.nested = std::move(choices);
  return s;
}

ParamSpec deprecated(ParamSpec spec) {
  spec.deprecated = true;
  return spec;
}

Params Params::parse(const std::string& text, const std::vector<ParamSpec>& spec,
                     const std::string& owner) {
  Params p;
  p.owner_ = owner;
  for (auto& s : spec) p.values_[s.name] = s.default_value;
  for (const std::string& item : split_top_level(text)) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError(owner + ": parameter '" + item + "' is not key=value");
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    auto it = std::find_if(spec.begin(), spec.end(), [&](auto& s) { return s.name == key; });
    std::string problem;
    if (it == spec.end()) {
      std::string known;
      for (auto& s : spec)
        if (!s.deprecated) known += (known.empty() ? "" : ", ") + s.name;
      problem = known.empty() ? "is unknown (it takes none)" : "is unknown (known: " + known + ")";
    } else {
      problem = it->problem(value);
    }
    if (!problem.empty())
      throw ConfigError(owner + ": parameter " + key + " = '" + value + "' " + problem);
    p.values_[key] = value;
  }
  return p;
}

const std::string& Params::raw(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw ConfigError(owner_ + ": no parameter '" + name + "'");
  return it->second;
}

// The getters convert what parse accepted; they throw only when a value is read as another kind
// than its declaration's (a bug in the reader).
std::string Params::get_string(const std::string& name) const { return raw(name); }

double Params::get_double(const std::string& name) const {
  std::optional<double> v = read_number(raw(name));
  if (!v) throw ConfigError(owner_ + ": parameter " + name + " = '" + raw(name) + "' is no number");
  return *v;
}

int64_t Params::get_int(const std::string& name) const {
  std::optional<int64_t> v = read_int(raw(name));
  if (!v)
    throw ConfigError(owner_ + ": parameter " + name + " = '" + raw(name) + "' is no integer");
  return *v;
}

bool Params::get_bool(const std::string& name) const {
  std::optional<bool> v = to_bool(raw(name));
  if (!v)
    throw ConfigError(owner_ + ": parameter " + name + " = '" + raw(name) + "' is no boolean");
  return *v;
}

std::string Params::canonical() const {
  std::string out;
  for (auto& [k, v] : values_) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

}  // namespace kvpolicy
