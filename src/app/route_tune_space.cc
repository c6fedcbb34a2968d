// route-tune's search space: which of a router's parameters are searched and over what range,
// from their ParamSpecs (docs/serve.md, "Autotuning a router: route-tune").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kvpolicy/app/route_tune.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/strings.h"

namespace kvpolicy::app {
namespace {

// Parameters that bound the router's memory, not its decisions: left out of the default space
// (--space brings one back).
const std::set<std::string> kNotKnobs = {"max_tree_tokens"};

std::string format_number(double v, bool integer) {
  if (integer) return fmt::format("{}", static_cast<int64_t>(std::llround(v)));
  return fmt::format("{:.6g}", v);
}

double to_double(const std::string& text, const std::string& what) {
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw ConfigError(what + ": '" + text + "' is not a number");
}

// The range around or within a numeric parameter's declaration (docs/serve.md,
// "Autotuning a router: route-tune"): its bounds when it has both, else default / 4 .. default x 4.
TuneKnob numeric_knob(const ParamSpec& spec) {
  TuneKnob k;
  k.name = spec.name;
  k.integer = spec.kind == ParamKind::kInt;
  k.default_value = spec.default_value;
  double d = to_double(spec.default_value, "parameter " + spec.name);
  ParamRange r = spec.range.value_or(ParamRange{});
  if (r.min && r.max) {
    k.lo = *r.min, k.hi = *r.max;
    double inside = (k.hi - k.lo) * 0.01;  // an exclusive end moved inside by 1 % of the span
    if (r.min_exclusive) k.lo += inside;
    if (r.max_exclusive) k.hi -= inside;
    k.scale = k.lo > 0 && k.hi / k.lo >= 100 ? TuneKnob::Scale::kLog : TuneKnob::Scale::kLinear;
    k.origin = "bounds";
  } else {
    if (d > 0) {
      k.lo = d / 4, k.hi = d * 4, k.scale = TuneKnob::Scale::kLog;
    } else if (d == 0) {
      k.lo = 0, k.hi = 1, k.scale = TuneKnob::Scale::kLinear;
    } else {
      k.lo = d * 4, k.hi = d / 4, k.scale = TuneKnob::Scale::kLinear;
    }
    if (r.min && k.lo <= *r.min) k.lo = r.min_exclusive ? *r.min + (k.hi - *r.min) * 0.01 : *r.min;
    if (r.max && k.hi >= *r.max) k.hi = r.max_exclusive ? *r.max - (*r.max - k.lo) * 0.01 : *r.max;
    if (k.lo <= 0) k.scale = TuneKnob::Scale::kLinear;
    k.origin = "around default";
  }
  if (k.integer) k.lo = std::ceil(k.lo), k.hi = std::floor(k.hi);
  return k;
}

const ParamSpec& find_param(const RouterInfo& info, const std::string& key,
                            const std::string& flag) {
  for (const ParamSpec& p : info.params)
    if (p.name == key && !p.deprecated) return p;
  std::vector<std::string> names;
  for (const ParamSpec& p : info.params)
    if (!p.deprecated) names.push_back(p.name);
  throw ConfigError(
      fmt::format("{}: router {} has no parameter '{}' (its parameters: {})", flag, info.name, key,
                  names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
}

void check_value(const ParamSpec& spec, const std::string& value, const std::string& item) {
  std::string why = spec.problem(value);
  if (!why.empty()) throw ConfigError("--space: " + item + ": " + spec.name + " " + why);
}

}  // namespace

std::string TuneKnob::at(double u) const {
  u = std::clamp(u, 0.0, 1.0);
  switch (scale) {
    case Scale::kList:
      return values[std::min(values.size() - 1, static_cast<size_t>(u * double(values.size())))];
    case Scale::kLog:
      return format_number(std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo))), integer);
    case Scale::kLinear:
      break;
  }
  return format_number(lo + u * (hi - lo), integer);
}

std::string TuneKnob::describe() const {
  if (scale == Scale::kList)
    return fmt::format("{}: {} ({})", name, fmt::join(values, " | "), origin);
  return fmt::format("{}: {} .. {} {}{} ({})", name, format_number(lo, integer),
                     format_number(hi, integer), scale == Scale::kLog ? "log" : "linear",
                     integer ? " integer" : "", origin);
}

std::vector<TuneKnob> tune_space(const RouterInfo& info, const std::string& space,
                                 std::map<std::string, std::string>* fixed) {
  std::map<std::string, TuneKnob> overrides;
  std::set<std::string> fixed_keys;
  for (const std::string& item : split_top_level(space)) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw ConfigError("--space: '" + item + "' is not key=lo:hi, key=a|b|c or key=value");
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    const ParamSpec& spec = find_param(info, key, "--space");
    if (overrides.count(key) || fixed_keys.count(key))
      throw ConfigError("--space: parameter '" + key + "' given twice");
    TuneKnob k;
    k.name = key;
    k.default_value = spec.default_value;
    k.origin = "--space";
    k.integer = spec.kind == ParamKind::kInt;
    if (value.find('|') != std::string::npos) {
      k.scale = TuneKnob::Scale::kList;
      for (const std::string& v : split_list(value, '|')) {
        check_value(spec, v, item);
        k.values.push_back(v);
      }
    } else if (value.find(':') != std::string::npos) {
      if (spec.kind != ParamKind::kInt && spec.kind != ParamKind::kDouble)
        throw ConfigError("--space: " + item + ": a range lo:hi needs a numeric parameter; " + key +
                          " is " + spec.type_name() + " (list its values as a|b)");
      std::vector<std::string> parts = split_list(value, ':');
      if (parts.size() < 2 || parts.size() > 3)
        throw ConfigError("--space: " + item + ": a range is lo:hi or lo:hi:log or lo:hi:lin");
      check_value(spec, parts[0], item);
      check_value(spec, parts[1], item);
      k.lo = to_double(parts[0], "--space " + key);
      k.hi = to_double(parts[1], "--space " + key);
      if (!(k.lo < k.hi)) throw ConfigError("--space: " + item + ": lo must be below hi");
      std::string scale =
          parts.size() == 3 ? parts[2] : (k.lo > 0 && k.hi / k.lo >= 100 ? "log" : "lin");
      if (scale == "log") {
        if (k.lo <= 0) throw ConfigError("--space: " + item + ": a log range needs lo > 0");
        k.scale = TuneKnob::Scale::kLog;
      } else if (scale == "lin") {
        k.scale = TuneKnob::Scale::kLinear;
      } else {
        throw ConfigError("--space: " + item + ": the scale is log or lin, not '" + scale + "'");
      }
    } else {
      check_value(spec, value, item);
      (*fixed)[key] = value;
      fixed_keys.insert(key);
      continue;
    }
    overrides[key] = k;
  }
  std::vector<TuneKnob> knobs;
  for (const ParamSpec& spec : info.params) {
    if (spec.deprecated || fixed_keys.count(spec.name)) continue;
    if (auto it = overrides.find(spec.name); it != overrides.end()) {
      knobs.push_back(it->second);
      continue;
    }
    if (kNotKnobs.count(spec.name)) continue;
    TuneKnob k;
    switch (spec.kind) {
      case ParamKind::kBool:
        k.name = spec.name, k.scale = TuneKnob::Scale::kList, k.values = {"0", "1"};
        k.default_value = spec.default_value, k.origin = "bool";
        break;
      case ParamKind::kChoice:
        k.name = spec.name, k.scale = TuneKnob::Scale::kList, k.values = spec.choices;
        k.default_value = spec.default_value, k.origin = "choices";
        break;
      case ParamKind::kInt:
      case ParamKind::kDouble:
        try {
          k = numeric_knob(spec);
        } catch (const ConfigError&) {
          continue;  // a default that is no finite number ("inf"): no range around it
        }
        if (!(k.lo < k.hi)) continue;  // nothing to search between its bounds
        break;
      default:
        continue;  // strings and nested components are no knobs
    }
    knobs.push_back(k);
  }
  return knobs;
}

}  // namespace kvpolicy::app
