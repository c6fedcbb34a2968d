// Errors thrown at boundaries (parsing, configuration, I/O); hot paths never throw.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kvpolicy {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input in a file: the message names file, line and field.
class InputError : public Error {
 public:
  InputError(std::string file, uint64_t line, std::string field, const std::string& what)
      : Error(format(file, line, field, what)),
        file_(std::move(file)),
        line_(line),
        field_(std::move(field)) {}
  const std::string& file() const { return file_; }
  uint64_t line() const { return line_; }
  const std::string& field() const { return field_; }

 private:
  static std::string format(const std::string& file, uint64_t line, const std::string& field,
                            const std::string& what) {
    std::string s = file;
    if (line > 0) s += ":" + std::to_string(line);
    if (!field.empty()) s += ": field '" + field + "'";
    return s + ": " + what;
  }
  std::string file_;
  uint64_t line_;
  std::string field_;
};

// A bad command-line value or policy parameter.
class ConfigError : public Error {
 public:
  using Error::Error;
};

}  // namespace kvpolicy
