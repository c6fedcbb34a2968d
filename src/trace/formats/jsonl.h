// Shared line loop and typed field access for the JSONL trace readers (internal header).
#pragma once

#include <simdjson.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/input_file.h"
#include "kvpolicy/trace/input_bytes.h"
#include "kvpolicy/trace/trace.h"
#include "kvpolicy/trace/trace_stream.h"

namespace kvpolicy::jsonl {

// DOM API: it dispatches to the machine's best SIMD kernels at run time, unlike On-Demand,
// which Debian's build pins to the portable fallback.
using simdjson::dom::object;

// Where a record came from, so every error names file, line and field.
struct Where {
  const std::string& path;
  uint64_t line;
  [[noreturn]] void fail(std::string_view field, const std::string& what) const {
    throw InputError(path, line, std::string(field), what);
  }
};

inline simdjson::dom::element field(object& obj, std::string_view name, const Where& w) {
  simdjson::dom::element v;
  auto err = obj.at_key(name).get(v);
  if (err == simdjson::NO_SUCH_FIELD) w.fail(name, "missing");
  if (err) w.fail(name, std::string("unreadable JSON (") + simdjson::error_message(err) + ")");
  return v;
}

inline bool has_field(object& obj, std::string_view name) {
  simdjson::dom::element v;
  return obj.at_key(name).get(v) == simdjson::SUCCESS;
}

// A non-negative integer, the full uint64 range read exactly; integral doubles (e.g. 12.0) are
// accepted.
inline uint64_t get_uint(object& obj, std::string_view name, const Where& w) {
  auto v = field(obj, name, w);
  uint64_t u;
  if (!v.get_uint64().get(u)) return u;
  double d;
  if (v.get_double().get(d)) w.fail(name, "expected a number");
  // 2^64 is exact as a double: every integral double below it converts without overflow.
  if (!(d >= 0 && d < 18446744073709551616.0) || d != std::floor(d))
    w.fail(name, "expected a non-negative integer (at most 2^64 - 1)");
  return static_cast<uint64_t>(d);
}

// A signed integer (e.g. parent_chat_id, where -1 means none), the full int64 range read exactly;
// integral doubles are accepted.
inline int64_t get_int(object& obj, std::string_view name, const Where& w) {
  auto v = field(obj, name, w);
  int64_t i;
  if (!v.get_int64().get(i)) return i;
  double d;
  if (v.get_double().get(d)) w.fail(name, "expected a number");
  // -2^63 and 2^63 are exact as doubles, so the bounds convert without overflow.
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != std::floor(d))
    w.fail(name, "expected an integer in the int64 range");
  return static_cast<int64_t>(d);
}

inline double get_double(object& obj, std::string_view name, const Where& w) {
  auto v = field(obj, name, w);
  double d;
  if (v.get_double().get(d)) w.fail(name, "expected a number");
  if (!std::isfinite(d)) w.fail(name, "not finite");
  return d;
}

// A non-negative time in `field`, given in units of `micros_per_unit` microseconds, as Time:
// one that would not fit in the int64 microseconds of a trace (about 292,000 years) is an error,
// never a wrap to a negative time.
inline Time to_micros(double value, double micros_per_unit, const Where& w,
                      std::string_view field) {
  if (!(value >= 0)) w.fail(field, "negative");
  double micros = value * micros_per_unit;
  if (!(micros < double(kMaxTime))) w.fail(field, "too large: times stay below 2^62 microseconds");
  return static_cast<Time>(std::llround(micros));
}

inline std::string_view get_string(object& obj, std::string_view name, const Where& w) {
  auto v = field(obj, name, w);
  std::string_view s;
  if (v.get_string().get(s)) w.fail(name, "expected a string");
  return s;
}

// A key given twice in one record is an error rather than a silent choice of one value (the DOM
// keeps both). Records hold a handful of keys, so comparing each with those before it is cheaper
// than hashing; only an unusually wide record pays for a set.
inline void reject_duplicate_keys(object& obj, const Where& w) {
  if (obj.size() > 32) {
    std::unordered_set<std::string_view> seen;
    for (auto f : obj)
      if (!seen.insert(f.key).second) w.fail(f.key, "duplicate key");
    return;
  }
  size_t i = 0;
  for (auto f : obj) {
    size_t j = 0;
    for (auto before : obj) {
      if (j++ == i) break;
      if (before.key == f.key) w.fail(f.key, "duplicate key");
    }
    ++i;
  }
}

// A prompt of `input` tokens is ceil(input / block_tokens) blocks, the last one partial: any
// other number of hash_ids would make token and block hit rates disagree without a word.
inline void check_block_count(size_t blocks, uint64_t input, uint32_t block_tokens,
                              const Where& w) {
  uint64_t want = (input + block_tokens - 1) / block_tokens;
  if (blocks != want)
    w.fail("hash_ids", std::to_string(blocks) + " blocks for input_length " +
                           std::to_string(input) + " (expected " + std::to_string(want) + " of " +
                           std::to_string(block_tokens) + " tokens)");
}

inline void get_uint_array(object& obj, std::string_view name, const Where& w,
                           std::vector<uint64_t>& out) {
  out.clear();
  auto v = field(obj, name, w);
  simdjson::dom::array arr;
  if (v.get_array().get(arr)) w.fail(name, "expected an array of integers");
  for (auto item : arr) {
    uint64_t x;  // the full 64-bit range: some traces hash ids to 64 bits
    if (item.get_uint64().get(x)) w.fail(name, "expected an array of non-negative integers");
    out.push_back(x);
  }
}

// The optional `hints` field: retention hints as token ranges (TensorRT-LLM's
// TokenRangeRetentionConfig), [{"first_token": 0, "end_token": 512, "priority": 90,
// "duration_s": 600}, ...]; end_token missing or null = to the end of the sequence, duration_s
// missing or null = never expires. A block takes a range's hint when the range holds the block's
// first token (a later range overrides); a range that holds no block's first token hints none.
inline void get_hints(object& obj, const Where& w, uint32_t block_tokens,
                      std::vector<RetentionHint>& out) {
  out.clear();
  if (!has_field(obj, "hints")) return;
  simdjson::dom::array arr;
  if (field(obj, "hints", w).get_array().get(arr)) w.fail("hints", "expected an array of objects");
  size_t i = 0;
  for (auto item : arr) {
    std::string at = "hints[" + std::to_string(i++) + "]";
    object h;
    if (item.get_object().get(h)) w.fail(at, "expected an object");
    auto number = [&](std::string_view name, bool optional, double& value) {
      simdjson::dom::element v;
      auto err = h.at_key(name).get(v);
      if (err == simdjson::NO_SUCH_FIELD || (!err && v.is_null())) {
        if (!optional) w.fail(at + "." + std::string(name), "missing");
        return false;
      }
      if (err || v.get_double().get(value) || !std::isfinite(value))
        w.fail(at + "." + std::string(name), "expected a number");
      return true;
    };
    for (auto f : h)
      if (f.key != "first_token" && f.key != "end_token" && f.key != "priority" &&
          f.key != "duration_s")
        w.fail(at + "." + std::string(f.key),
               "unknown (expected first_token, end_token, priority, duration_s)");
    double first = 0, end = 0, prio = 0, dur = 0;
    number("first_token", false, first);
    bool has_end = number("end_token", true, end);
    number("priority", false, prio);
    bool has_dur = number("duration_s", true, dur);
    if (!(first >= 0 && first < 4294967296.0) || first != std::floor(first))
      w.fail(at + ".first_token", "expected a token index (a non-negative integer)");
    if (has_end && (!(end >= 0 && end < 4294967296.0) || end != std::floor(end)))
      w.fail(at + ".end_token", "expected a token index (a non-negative integer) or null");
    if (has_end && end <= first) w.fail(at + ".end_token", "not after first_token");
    if (!(prio >= 0 && prio <= 100) || prio != std::floor(prio))
      w.fail(at + ".priority", "expected an integer from 0 to 100");
    if (has_dur && dur < 0) w.fail(at + ".duration_s", "negative");
    RetentionHint r;
    r.first_block = static_cast<uint32_t>((uint64_t(first) + block_tokens - 1) / block_tokens);
    r.end_block = has_end ? static_cast<uint32_t>((uint64_t(end) + block_tokens - 1) / block_tokens)
                          : RetentionHint::kToEnd;
    r.priority = static_cast<int32_t>(prio);
    r.duration = has_dur ? to_micros(dur, 1e6, w, at + ".duration_s") : RetentionHint::kForever;
    if (r.first_block < r.end_block) out.push_back(r);
  }
}

// Appends the hints of the request just added to `t` (the column starts at the first request
// that has any; earlier ones get none).
inline void append_request_hints(Trace& t, const std::vector<RetentionHint>& list) {
  if (list.empty() && !t.has_hints()) return;
  if (!t.has_hints()) t.hint_offset.assign(t.size(), 0);
  t.hints.insert(t.hints.end(), list.begin(), list.end());
  t.hint_offset.push_back(t.hints.size());
}

// Calls on_record for each line of `data` (the whole of `path`, padded); `on_record(obj, where)`
// must parse every field before it appends anything, so a record that throws leaves the trace
// unchanged (and can be skipped).
template <typename OnRecord>
void for_each_record_in(const std::string& path, const simdjson::padded_string& data,
                        const ReadOptions& opts, ReadReport& report, OnRecord&& on_record) {
  simdjson::dom::parser parser;
  const char* begin = data.data();
  // A UTF-8 byte-order mark (written by some Windows tools) is not part of the first record.
  if (data.size() >= 3 && std::string_view(begin, 3) == "\xEF\xBB\xBF") begin += 3;
  const char* end = data.data() + data.size();
  uint64_t line_no = 0, records = 0;
  for (const char* p = begin; p < end;) {
    const char* nl = static_cast<const char*>(memchr(p, '\n', end - p));
    const char* line_end = nl ? nl : end;
    ++line_no;
    const char* q = p;
    while (q < line_end && (*q == ' ' || *q == '\t' || *q == '\r')) ++q;
    if (q < line_end) {
      Where where{path, line_no};
      try {
        // The whole file is padded, so a line can be parsed in place.
        simdjson::dom::element doc;
        auto err = parser.parse(p, line_end - p, false).get(doc);
        object obj;
        if (!err) err = doc.get_object().get(obj);
        if (err)
          where.fail("", std::string("not a JSON object (") + simdjson::error_message(err) + ")");
        on_record(obj, where);
        ++records;
      } catch (const InputError& e) {
        if (!opts.skip_bad_lines) throw;
        if (report.skipped_lines++ == 0) report.first_skipped = e.what();
      }
      if (opts.max_requests && records >= opts.max_requests) break;
    }
    p = line_end + 1;
  }
  report.lines = line_no;
  if (records == 0) throw InputError(path, 0, "", line_no == 0 ? "empty file" : "no valid records");
}

// Reads `path` line by line: loaded in place when plain, decompressed first when gzip or zstd or
// standard input ("-"), as read_input_bytes does (input_bytes.h).
template <typename OnRecord>
void for_each_record(const std::string& path, const ReadOptions& opts, ReadReport& report,
                     OnRecord&& on_record) {
  simdjson::padded_string data;
  if (input_needs_decoding(path)) {
    data = simdjson::padded_string(read_input_bytes(path, "traces", kStreamHint));
  } else {
    require_memory_for_file(path, require_regular_file(path, "traces"), kStreamHint);
    if (simdjson::padded_string::load(path).get(data))
      throw InputError(path, 0, "", "cannot read file");
  }
  for_each_record_in(path, data, opts, report, on_record);
}

}  // namespace kvpolicy::jsonl

namespace kvpolicy::jsonl {

// The records of a JSONL file read a block of bytes at a time (a stream's memory is one block
// and the longest line), with for_each_record's rules: blank lines skipped, errors naming file,
// line and field, --skip-bad-lines counted, max_requests honoured.
class RecordReader {
 public:
  RecordReader(const std::string& path, const ReadOptions& opts)
      : path_(path), opts_(opts), f_(std::fopen(path.c_str(), "rb")) {
    if (!f_) throw InputError(path, 0, "", "cannot read file");
    buf_.resize(kBlock + simdjson::SIMDJSON_PADDING);
    // The streamed reader reads plain files only (whole-file readers decompress).
    char head[4];
    size_t got = std::fread(head, 1, sizeof head, f_);
    if (detect_compression({head, got}) != InputCompression::kNone) {
      std::fclose(f_);
      throw InputError(path, 0, "",
                       std::string("a ") + compression_name(detect_compression({head, got})) +
                           " file: the streamed reader reads plain files only; decompress it, "
                           "or read it whole (without --stream)");
    }
    std::rewind(f_);
  }
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;
  ~RecordReader() { std::fclose(f_); }

  // Calls on_record(obj, where) for the next good record; false at the end of the file.
  template <typename OnRecord>
  bool next(OnRecord&& on_record) {
    if (opts_.max_requests && records_ >= opts_.max_requests) return finish();
    std::string_view line;
    while (next_line(line)) {
      size_t i = 0;
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      if (i == line.size()) continue;
      Where where{path_, line_no_};
      try {
        simdjson::dom::element doc;
        // The buffer holds SIMDJSON_PADDING readable bytes past any line.
        auto err = parser_.parse(line.data(), line.size(), false).get(doc);
        object obj;
        if (!err) err = doc.get_object().get(obj);
        if (err)
          where.fail("", std::string("not a JSON object (") + simdjson::error_message(err) + ")");
        on_record(obj, where);
        ++records_;
        return true;
      } catch (const InputError& e) {
        if (!opts_.skip_bad_lines) throw;
        if (report_.skipped_lines++ == 0) report_.first_skipped = e.what();
      }
    }
    return finish();
  }
  const ReadReport& report() const { return report_; }

 private:
  static constexpr size_t kBlock = size_t{4} << 20;

  bool finish() {
    report_.lines = line_no_;
    if (records_ == 0)
      throw InputError(path_, 0, "", line_no_ == 0 ? "empty file" : "no valid records");
    return false;
  }
  bool next_line(std::string_view& line) {
    for (;;) {
      char* base = buf_.data();
      if (const void* nl = memchr(base + begin_, '\n', end_ - begin_)) {
        size_t at = static_cast<const char*>(nl) - base;
        return take(line, at, at + 1);
      }
      if (eof_) return begin_ < end_ && take(line, end_, end_);
      // Keep the partial line, grow for a line longer than the buffer, read on.
      std::memmove(base, base + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
      size_t room = buf_.size() - simdjson::SIMDJSON_PADDING;
      if (end_ == room) buf_.resize(2 * room + simdjson::SIMDJSON_PADDING);
      room = buf_.size() - simdjson::SIMDJSON_PADDING;
      size_t got = std::fread(buf_.data() + end_, 1, room - end_, f_);
      if (got == 0) {
        if (std::ferror(f_)) throw InputError(path_, line_no_ + 1, "", "read failed");
        eof_ = true;
      }
      end_ += got;
    }
  }
  bool take(std::string_view& line, size_t line_end, size_t next_begin) {
    const char* p = buf_.data() + begin_;
    size_t n = line_end - begin_;
    // A UTF-8 byte-order mark (written by some Windows tools) is not part of the first record.
    if (line_no_ == 0 && n >= 3 && std::string_view(p, 3) == "\xEF\xBB\xBF") p += 3, n -= 3;
    line = {p, n};
    begin_ = next_begin;
    ++line_no_;
    return true;
  }

  const std::string path_;
  ReadOptions opts_;
  std::FILE* f_;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t line_no_ = 0, records_ = 0;
  ReadReport report_;
  simdjson::dom::parser parser_;
};

}  // namespace kvpolicy::jsonl
