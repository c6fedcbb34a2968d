// The user format of embedding lookups: CSV rows `timestamp_us,table,index,sample`
// (docs/formats.md, "Embedding lookups").
#include <charconv>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <unordered_set>

#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/input_file.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/embed/workload.h"

namespace kvpolicy::embed {
namespace {

constexpr std::string_view kCsvHeader = "timestamp_us,table,index,sample";
constexpr const char* kCsvColumns[] = {"timestamp_us", "table", "index", "sample"};

uint64_t parse_csv_uint(std::string_view s, const std::string& path, uint64_t line,
                        const char* column, uint64_t limit, const char* limit_name) {
  s = trim(s);
  if (s.empty()) throw InputError(path, line, column, "empty");
  if (s.front() == '-')
    throw InputError(path, line, column, "negative number '" + std::string(s) + "'");
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range)
    throw InputError(path, line, column, "'" + std::string(s) + "' is out of range");
  if (ec != std::errc() || p != s.data() + s.size())
    throw InputError(path, line, column, "'" + std::string(s) + "' is not a non-negative integer");
  if (v > limit)
    throw InputError(path, line, column,
                     std::string(s) + " is out of range (must be below " + limit_name + ")");
  return v;
}

}  // namespace

EmbeddingTrace read_embedding_csv(const std::string& path, bool skip_bad_lines,
                                  EmbeddingCsvReport* report) {
  require_regular_file(path, "workloads");  // /dev/zero is one endless line; a FIFO blocks
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open file");
  EmbeddingCsvReport local;
  EmbeddingCsvReport& rep = report ? *report : local;
  rep = EmbeddingCsvReport{};

  std::string text;
  uint64_t line = 0;
  if (!std::getline(in, text)) throw InputError(path, 0, "", "empty file");
  ++line;
  if (trim(text) != kCsvHeader)
    throw InputError(
        path, line, "header",
        "expected '" + std::string(kCsvHeader) + "', got '" + std::string(trim(text)) + "'");

  EmbeddingTrace t;
  t.name = std::filesystem::path(path).stem().string();
  bool open = false;  // a sample has begun
  uint64_t sample_id = 0, sample_line = 0;
  std::unordered_set<uint64_t> finished;  // ids of samples already closed
  while (std::getline(in, text)) {
    ++line;
    std::string_view row = trim(text);
    if (row.empty()) continue;
    try {
      std::string_view field[4];
      size_t n = 0;
      for (size_t start = 0;;) {
        size_t comma = row.find(',', start);
        std::string_view piece = row.substr(
            start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        if (n == 4) throw InputError(path, line, "column 5", "more than 4 columns");
        field[n++] = piece;
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      if (n < 4) throw InputError(path, line, kCsvColumns[n], "missing");
      Time when = static_cast<Time>(parse_csv_uint(field[0], path, line, kCsvColumns[0],
                                                   std::numeric_limits<int64_t>::max(), "2^63"));
      uint32_t table = static_cast<uint32_t>(
          parse_csv_uint(field[1], path, line, kCsvColumns[1], (uint64_t{1} << 24) - 1, "2^24"));
      uint64_t index = parse_csv_uint(field[2], path, line, kCsvColumns[2],
                                      (uint64_t{1} << kIndexBits) - 1, "2^40");
      uint64_t id = parse_csv_uint(field[3], path, line, kCsvColumns[3],
                                   std::numeric_limits<uint64_t>::max(), "2^64");
      if (open && id == sample_id) {
        if (when != t.sample_time.back())
          throw InputError(path, line, "timestamp_us",
                           std::to_string(when) + " differs from sample " + std::to_string(id) +
                               "'s time stamp " + std::to_string(t.sample_time.back()) + " (line " +
                               std::to_string(sample_line) + ")");
      } else {
        if (finished.count(id))
          throw InputError(path, line, "sample",
                           "sample " + std::to_string(id) +
                               " appeared before: a sample's rows must be consecutive");
        if (open && when < t.sample_time.back())
          throw InputError(path, line, "timestamp_us",
                           "time goes back: " + std::to_string(when) + " after " +
                               std::to_string(t.sample_time.back()));
        if (open) {
          finished.insert(sample_id);
          t.sample_offset.push_back(t.keys.size());
        }
        open = true;
        sample_id = id;
        sample_line = line;
        t.sample_time.push_back(when);
      }
      t.keys.push_back(make_key(table, index));
      ++rep.rows;
    } catch (const InputError& e) {
      if (!skip_bad_lines) throw;
      if (rep.skipped_rows++ == 0) rep.first_skipped = e.what();
    }
  }
  if (in.bad()) throw InputError(path, line + 1, "", "read error");
  if (!open)
    throw InputError(path, 0, "", rep.skipped_rows ? "no valid rows" : "no rows after the header");
  t.sample_offset.push_back(t.keys.size());
  return t;
}

void write_embedding_csv(const EmbeddingTrace& trace, const std::string& path) {
  trace.validate();
  // Checked before the file is opened: a refused trace leaves no partial output behind.
  for (size_t s = 0; s < trace.samples(); ++s) {
    if (trace.sample_offset[s + 1] == trace.sample_offset[s])
      throw Error("'" + path + "': sample " + std::to_string(s) +
                  " has no lookups, which the CSV format cannot carry");
    if (trace.sample_time[s] < 0)
      throw Error("'" + path + "': sample " + std::to_string(s) + " has a negative time");
  }
  AtomicOutput out(path);
  std::string buf(kCsvHeader);
  buf += '\n';
  char num[24];
  auto append = [&](uint64_t v, char end) {
    auto r = std::to_chars(num, num + sizeof num, v);
    buf.append(num, r.ptr);
    buf += end;
  };
  for (size_t s = 0; s < trace.samples(); ++s) {
    for (EmbKey k : trace.sample(s)) {
      append(static_cast<uint64_t>(trace.sample_time[s]), ',');
      append(table_of(k), ',');
      append(index_of(k), ',');
      append(s, '\n');
    }
    if (buf.size() >= (1u << 20)) {
      out.write(buf);
      buf.clear();
    }
  }
  out.write(buf);
  out.commit();
}

}  // namespace kvpolicy::embed
