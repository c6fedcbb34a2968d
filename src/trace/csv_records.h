// RFC 4180 records, for `trace import`'s CSV logs. Internal to src/trace.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

// RFC 4180 records: fields separated by commas, records by LF or CRLF; a quoted field may hold
// commas, newlines and doubled quotes.
class CsvReader {
 public:
  CsvReader(const std::string& path, std::string data) : path_(path), data_(std::move(data)) {
    if (data_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;  // a UTF-8 byte-order mark
  }

  // The next non-blank record and the line it starts on; false at the end of the file.
  bool next(std::vector<std::string>& fields, uint64_t& start_line) {
    for (;;) {
      if (pos_ >= data_.size()) return false;
      fields.assign(1, std::string());
      start_line = line_;
      bool blank = true;
      for (;;) {
        if (pos_ >= data_.size()) break;
        char c = data_[pos_];
        if (c == '"' && fields.back().empty() && at_field_start_) {
          read_quoted(fields.back(), start_line);
          blank = false;
          continue;
        }
        ++pos_;
        if (c == ',') {
          fields.emplace_back();
          at_field_start_ = true;
          blank = false;
          continue;
        }
        if (c == '\n') {
          ++line_;
          at_field_start_ = true;
          break;
        }
        at_field_start_ = false;
        if (c == '\r' && pos_ < data_.size() && data_[pos_] == '\n') continue;
        fields.back() += c;
        if (c != ' ' && c != '\t' && c != '\r') blank = false;
      }
      at_field_start_ = true;
      if (!blank) return true;
    }
  }
  uint64_t lines() const { return line_ - (!data_.empty() && data_.back() == '\n'); }

 private:
  void read_quoted(std::string& out, uint64_t start_line) {
    ++pos_;  // the opening quote
    for (;;) {
      if (pos_ >= data_.size())
        throw InputError(path_, start_line, "",
                         "a quoted field is not closed before the end of the file");
      char c = data_[pos_++];
      if (c == '"') {
        if (pos_ < data_.size() && data_[pos_] == '"') {
          out += '"';
          ++pos_;
          continue;
        }
        break;
      }
      if (c == '\n') ++line_;
      out += c;
    }
    // After the closing quote: a separator, the end of the record, or (leniently) spaces.
    while (pos_ < data_.size() && (data_[pos_] == ' ' || data_[pos_] == '\t')) ++pos_;
    if (pos_ < data_.size() && data_[pos_] != ',' && data_[pos_] != '\n' && data_[pos_] != '\r')
      throw InputError(path_, line_, "", "text after the closing quote of a quoted field");
    at_field_start_ = false;
  }

  const std::string& path_;
  std::string data_;
  size_t pos_ = 0;
  uint64_t line_ = 1;
  bool at_field_start_ = true;
};

}  // namespace kvpolicy
