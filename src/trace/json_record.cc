#include "kvpolicy/trace/json_record.h"

#include <cmath>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

JsonRecord::JsonRecord(const std::string& line, std::string path, uint64_t line_no)
    : path_(std::move(path)), line_no_(line_no) {
  if (parser_.parse(line).get(object_)) fail("", "not a JSON object");
}

void JsonRecord::fail(const std::string& field, const std::string& what) const {
  throw InputError(path_, line_no_, field, what);
}

std::string JsonRecord::str(const char* key) const {
  std::string_view v;
  if (object_[key].get(v)) fail(key, "missing or not a string");
  return std::string(v);
}

double JsonRecord::num(const char* key) const {
  double v;
  if (object_[key].get(v)) fail(key, "missing or not a number");
  return v;
}

bool JsonRecord::boolean(const char* key) const {
  bool v;
  if (object_[key].get(v)) fail(key, "missing or not true or false");
  return v;
}

std::string JsonRecord::str_or(const char* key, const std::string& fallback) const {
  std::string_view v;
  return object_[key].get(v) ? fallback : std::string(v);
}

double JsonRecord::num_or(const char* key, double fallback) const {
  double v;
  return object_[key].get(v) ? fallback : v;
}

bool JsonRecord::boolean_or(const char* key, bool fallback) const {
  bool v;
  return object_[key].get(v) ? fallback : v;
}

PolicyStats JsonRecord::stats(const char* key) const {
  PolicyStats out;
  simdjson::dom::object o;
  if (object_[key].get(o)) return out;
  for (auto [name, value] : o) {
    double v;
    out.push_back({std::string(name), value.get(v) ? std::nan("") : v});  // null: not finite
  }
  return out;
}

}  // namespace kvpolicy
