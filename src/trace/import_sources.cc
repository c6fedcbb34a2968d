#include "import_sources.h"

#include <fmt/format.h>

#include <unordered_map>

#include "csv_records.h"
#include "formats/jsonl.h"
#include "import_cells.h"
#include "import_join.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/strings.h"

namespace kvpolicy {
namespace {

class CsvRow : public RowSource {
 public:
  CsvRow(const std::string& path, uint64_t line, const std::vector<std::string>& fields,
         const std::unordered_map<std::string, size_t>& index)
      : path_(path), line_(line), fields_(fields), index_(index) {}

  std::optional<std::string> scalar(const std::string& column) const override {
    const std::string& c = cell(column);
    if (trim(c).empty()) return std::nullopt;
    return c;
  }
  void int_list(const std::string& column, bool signed_ok,
                std::vector<uint64_t>& out) const override {
    check(column, import_cells::parse_int_list(cell(column), signed_ok, out));
  }
  void hash_list(const std::string& column, HashStringKeys& keys,
                 std::vector<uint64_t>& out) const override {
    check(column, import_json::hash_cell(cell(column), keys, out));
  }
  void messages(const std::string& column, std::vector<ChatMessage>& out) const override {
    check(column, import_json::messages_cell(cell(column), out));
  }
  bool is_list(const std::string&) const override { return false; }
  // InputError's own wording is "field"; a CSV user thinks in columns.
  [[noreturn]] void fail(const std::string& column, const std::string& what) const override {
    throw InputError(path_, line_, "", "column '" + column + "': " + what);
  }
  uint64_t line() const override { return line_; }

 private:
  const std::string& cell(const std::string& column) const { return fields_[index_.at(column)]; }
  void check(const std::string& column, const std::string& err) const {
    if (!err.empty()) fail(column, err);
  }

  const std::string& path_;
  uint64_t line_;
  const std::vector<std::string>& fields_;
  const std::unordered_map<std::string, size_t>& index_;
};

}  // namespace

void import_csv(const std::string& path, std::string data, const MappedColumns& columns,
                const ImportOptions& opts, const OnRow& on_row, ImportReport& report) {
  if (!opts.map.id.empty())
    throw ConfigError(
        "trace import: id= joins the lines of a JSONL log; a CSV log has one "
        "row per request");
  CsvReader csv(path, std::move(data));
  std::vector<std::string> header, fields;
  uint64_t header_line, line;
  if (!csv.next(header, header_line)) throw InputError(path, 0, "", "empty file");
  std::unordered_map<std::string, size_t> index;
  std::string names;
  for (size_t i = 0; i < header.size(); ++i) {
    std::string name(trim(header[i]));
    index.emplace(name, i);
    names += (i ? ", " : "") + name;
  }
  for (const auto& [target, column] : columns)
    if (!index.count(column))
      throw InputError(
          path, header_line, "",
          fmt::format("column '{}' (mapped to {}) is not in the header; its columns: {}", column,
                      target, names));
  while (csv.next(fields, line)) {
    try {
      CsvRow row(path, line, fields, index);
      if (fields.size() != header.size())
        throw InputError(
            path, line, "",
            fmt::format("{} fields where the header has {}", fields.size(), header.size()));
      on_row(row);
    } catch (const InputError& e) {
      if (!opts.skip_bad_lines) throw;
      if (report.skipped_rows++ == 0) report.first_skipped = e.what();
    }
  }
  report.lines = csv.lines();
}

void import_jsonl(const std::string& path, const std::string& data, const MappedColumns& columns,
                  const ImportOptions& opts, const OnRow& on_row, ImportReport& report,
                  const std::vector<uint64_t>* source_lines) {
  auto where = [&](const jsonl::Where& w) {
    return jsonl::Where{w.path, source_lines ? (*source_lines)[w.line - 1] : w.line};
  };
  ReadOptions ro;
  ro.skip_bad_lines = opts.skip_bad_lines;
  ReadReport rr;
  simdjson::padded_string padded(data);
  const ImportMapping& m = opts.map;
  if (m.id.empty()) {
    jsonl::for_each_record_in(path, padded, ro, rr, [&](jsonl::object& obj, const jsonl::Where& w) {
      jsonl::Where at = where(w);
      jsonl::reject_duplicate_keys(obj, at);
      on_row(import_json::JsonRow(obj, path, at.line));
    });
  } else {
    std::vector<std::string> fields;
    for (const auto& [target, column] : columns)
      if (target != "id") fields.push_back(column);
    std::string prompt = !m.messages.empty() ? m.messages
                         : !m.text.empty()   ? m.text
                         : !m.tokens.empty() ? m.tokens
                                             : m.hashes;
    RequestJoin join(path, m.id, fields, prompt);
    jsonl::for_each_record_in(path, padded, ro, rr, [&](jsonl::object& obj, const jsonl::Where& w) {
      jsonl::Where at = where(w);
      jsonl::reject_duplicate_keys(obj, at);
      join.add(obj, at.line);
    });
    auto skip = [&](const InputError& e) {
      if (!opts.skip_bad_lines) throw e;
      if (rr.skipped_lines++ == 0) rr.first_skipped = e.what();
    };
    join.for_each(
        [&](const RowSource& row) {
          try {
            on_row(row);
          } catch (const InputError& e) {
            skip(e);
          }
        },
        [&](const InputError& e) {
          ++report.responses_without_request;
          skip(e);
        });
    report.joined_lines = join.joined_lines();
  }
  report.lines = rr.lines;
  report.skipped_rows = rr.skipped_lines;
  report.first_skipped = rr.first_skipped;
}

}  // namespace kvpolicy
