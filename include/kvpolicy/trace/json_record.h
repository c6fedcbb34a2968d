// One JSON object of a results file (replay's or serve mode's), read field by field for
// resuming a sweep; every problem is one InputError naming the file, line and field.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>

#include "kvpolicy/core/access.h"

namespace kvpolicy {

class JsonRecord {
 public:
  JsonRecord(const std::string& line, std::string path, uint64_t line_no);

  std::string str(const char* key) const;
  double num(const char* key) const;
  bool boolean(const char* key) const;
  // A string, or `fallback` when the field is absent or not a string.
  std::string str_or(const char* key, const std::string& fallback) const;
  // A number, or `fallback` when the field is absent or null.
  double num_or(const char* key, double fallback) const;
  bool boolean_or(const char* key, bool fallback) const;
  // A numeric field into any arithmetic type.
  template <typename T>
  void get(const char* key, T& out) const {
    out = static_cast<T>(num(key));
  }
  // An object of named numbers (policy_stats, router_stats); empty when absent.
  PolicyStats stats(const char* key) const;
  simdjson::dom::object object() const { return object_; }
  [[noreturn]] void fail(const std::string& field, const std::string& what) const;

 private:
  simdjson::dom::parser parser_;
  simdjson::dom::object object_;
  std::string path_;
  uint64_t line_no_;
};

}  // namespace kvpolicy
