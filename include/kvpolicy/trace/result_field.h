// One field of a results file's rows (replay's, serve mode's), declared once: its name, type,
// unit and meaning, and how it is written to JSON, read back (resume, merge, distributed runs)
// and put in a CSV cell. The helpers build the common kinds from a member of the result.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <optional>
#include <string>

#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/trace/json_record.h"

namespace kvpolicy {

template <typename R>
struct ResultFieldOf {
  std::string name;
  std::string type;  // as docs/formats.md writes it: string, int, number, bool, number or null, ...
  std::string unit;  // "ms", "s", "GB", "blocks", ... or "" (a count, a share, a name)
  std::string description;
  // Adds the field to a JSON object (nothing when it is optional and absent).
  std::function<void(const R&, JsonObject&)> write;
  // Reads it back; empty for a field derived from others.
  std::function<void(const JsonRecord&, R&)> read;
  // Its CSV cell, unquoted; empty when it is not a CSV column.
  std::function<std::string(const R&)> csv = {};
};

namespace result_fields {

// A string; absent from older files it reads as `fallback` when one is given.
template <typename R>
ResultFieldOf<R> text(std::string name, std::string R::*m, std::string desc,
                      std::optional<std::string> fallback = std::nullopt) {
  std::string key = name;
  return {name,
          "string",
          "",
          std::move(desc),
          [key, m](const R& r, JsonObject& o) { o.add(key, r.*m); },
          [key, m, fallback](const JsonRecord& j, R& r) {
            r.*m = fallback ? j.str_or(key.c_str(), *fallback) : j.str(key.c_str());
          },
          [m](const R& r) { return r.*m; }};
}

// A string written only when not empty (absent reads as ""); not a CSV column.
template <typename R>
ResultFieldOf<R> optional_text(std::string name, std::string R::*m, std::string desc) {
  std::string key = name;
  return {name,
          "string",
          "",
          std::move(desc),
          [key, m](const R& r, JsonObject& o) {
            if (!(r.*m).empty()) o.add(key, r.*m);
          },
          [key, m](const JsonRecord& j, R& r) { r.*m = j.str_or(key.c_str(), ""); }};
}

// A bool, written as JSON's true or false; not a CSV column.
template <typename R>
ResultFieldOf<R> flag(std::string name, bool R::*m, std::string desc) {
  std::string key = name;
  return {name,
          "bool",
          "",
          std::move(desc),
          [key, m](const R& r, JsonObject& o) { o.raw(key, r.*m ? "true" : "false"); },
          [key, m](const JsonRecord& j, R& r) { r.*m = j.boolean(key.c_str()); }};
}

template <typename R, typename T>
ResultFieldOf<R> integer(std::string name, T R::*m, std::string unit, std::string desc) {
  std::string key = name;
  return {name,
          "int",
          std::move(unit),
          std::move(desc),
          [key, m](const R& r, JsonObject& o) { o.add(key, r.*m); },
          [key, m](const JsonRecord& j, R& r) { j.get(key.c_str(), r.*m); },
          [m](const R& r) { return fmt::format("{}", r.*m); }};
}

// A number reached through `at` (a member, or a member of one), with `decimals` in JSON and
// `csv_decimals` in CSV (< 0: not a CSV column); absent from older files it reads as `fallback`
// when one is given.
template <typename R, typename At>
ResultFieldOf<R> number_at(std::string name, At at, int decimals, int csv_decimals,
                           std::string unit, std::string desc,
                           std::optional<double> fallback = std::nullopt) {
  std::string key = name;
  ResultFieldOf<R> f{name,
                     "number",
                     std::move(unit),
                     std::move(desc),
                     [key, at, decimals](const R& r, JsonObject& o) {
                       o.add(key, at(const_cast<R&>(r)), decimals);
                     },
                     [key, at, fallback](const JsonRecord& j, R& r) {
                       if (fallback)
                         at(r) = j.num_or(key.c_str(), *fallback);
                       else
                         j.get(key.c_str(), at(r));
                     }};
  if (csv_decimals >= 0)
    f.csv = [at, csv_decimals](const R& r) {
      return fmt::format("{:.{}f}", at(const_cast<R&>(r)), csv_decimals);
    };
  return f;
}

template <typename R>
ResultFieldOf<R> number(std::string name, double R::*m, int decimals, int csv_decimals,
                        std::string unit, std::string desc,
                        std::optional<double> fallback = std::nullopt) {
  return number_at<R>(
      std::move(name), [m](R& r) -> double& { return r.*m; }, decimals, csv_decimals,
      std::move(unit), std::move(desc), fallback);
}

// A setting written as given ({:g}: 200, not 200.000000).
template <typename R>
ResultFieldOf<R> setting(std::string name, double R::*m, std::string unit, std::string desc) {
  std::string key = name;
  return {name,
          "number",
          std::move(unit),
          std::move(desc),
          [key, m](const R& r, JsonObject& o) { o.raw(key, fmt::format("{:g}", r.*m)); },
          [key, m](const JsonRecord& j, R& r) { j.get(key.c_str(), r.*m); },
          [m](const R& r) { return fmt::format("{:g}", r.*m); }};
}

// A number that is null when negative (not measured, or a capacity not given as a share of the
// unique blocks): shortest round-trip form, or rounded to `digits` decimals when given.
template <typename R>
ResultFieldOf<R> number_or_null(std::string name, double R::*m, std::string desc, int digits = -1) {
  std::string key = name;
  return {name,
          "number or null",
          "",
          std::move(desc),
          [key, m, digits](const R& r, JsonObject& o) {
            if (r.*m < 0)
              o.add_null(key);
            else if (digits >= 0)
              o.add(key, r.*m, digits);
            else
              o.raw(key, fmt::format("{}", r.*m));
          },
          [key, m](const JsonRecord& j, R& r) { r.*m = j.num_or(key.c_str(), -1); },
          [m](const R& r) { return r.*m < 0 ? std::string() : fmt::format("{}", r.*m); }};
}

}  // namespace result_fields

// The field named `name` of `fields`; nullptr if none.
template <typename R>
const ResultFieldOf<R>* find_result_field(const std::vector<ResultFieldOf<R>>& fields,
                                          const std::string& name) {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace kvpolicy
