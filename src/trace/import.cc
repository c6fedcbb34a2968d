// `trace import`: a user's request log (CSV per RFC 4180, or JSONL) into a Trace. CSV and JSONL
// rows go through one parser (RowSource), so both formats read every column the same way.
#include "kvpolicy/trace/import.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "csv_records.h"
#include "formats/jsonl.h"
#include "import_cells.h"
#include "import_time.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/input_file.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/trace/assumed_prompts.h"

namespace kvpolicy {
namespace {

using import_cells::parse_int_list;
using import_cells::parse_uint;
using import_time::parse_time;
using import_time::parse_unit;
using import_time::Unit;

struct Target {
  const char* name;
  std::string ImportMapping::*column;
};

constexpr Target kTargets[] = {
    {"time", &ImportMapping::time},     {"session", &ImportMapping::session},
    {"tokens", &ImportMapping::tokens}, {"text", &ImportMapping::text},
    {"hashes", &ImportMapping::hashes}, {"prompt_tokens", &ImportMapping::prompt_tokens},
    {"output", &ImportMapping::output}, {"output_text", &ImportMapping::output_text},
    {"turn", &ImportMapping::turn},     {"category", &ImportMapping::category},
    {"user", &ImportMapping::user},
};

// Why a log of prompt lengths alone cannot be imported, for the errors that meet one.
constexpr const char* kLengthsAreNotPrompts =
    "a prefix cache hits when requests share a prompt prefix, and token counts cannot say "
    "which requests do. Missing: the prompts' content or the engine's block hashes. Either "
    "would supply it: map text=COLUMN (the prompt text, or the chat messages as sent), "
    "tokens=COLUMN (a list of token ids per row) or hashes=COLUMN (the engine's chained block "
    "hashes, from its block-hash log). A log of lengths only (such as Azure's LLM inference "
    "trace) is replayed only under stated assumptions: map prompt_tokens=COLUMN and add "
    "--assume MODEL (Python: assume=), which simulates what the prompts share (shared system "
    "prompts, sessions), stores the assumptions in the trace and prints them above every table";

constexpr const char* kNotChained =
    "these are not chained block hashes (each block's hash must cover the blocks before it, as "
    "vLLM's and SGLang's do); chain them, or map the prompts' tokens or text instead";

// One row's cells, whatever the file's format: the row parser below asks it for the mapped
// columns by target.
class RowSource {
 public:
  virtual ~RowSource() = default;
  // The cell as text; nullopt when empty (CSV) or null (JSON). A column mapped but absent from
  // a JSON record is an error.
  virtual std::optional<std::string> scalar(const std::string& column) const = 0;
  // A list of integers: a JSON array, or a cell parsed by parse_int_list.
  virtual void int_list(const std::string& column, bool signed_ok,
                        std::vector<uint64_t>& out) const = 0;
  [[noreturn]] virtual void fail(const std::string& column, const std::string& what) const = 0;
  virtual uint64_t line() const = 0;  // where the row starts (keep_prompts)
};

class CsvRow : public RowSource {
 public:
  CsvRow(const std::string& path, uint64_t line, const std::vector<std::string>& fields,
         const std::unordered_map<std::string, size_t>& index)
      : path_(path), line_(line), fields_(fields), index_(index) {}

  std::optional<std::string> scalar(const std::string& column) const override {
    const std::string& cell = fields_[index_.at(column)];
    if (trim(cell).empty()) return std::nullopt;
    return cell;
  }
  void int_list(const std::string& column, bool signed_ok,
                std::vector<uint64_t>& out) const override {
    std::string err = parse_int_list(fields_[index_.at(column)], signed_ok, out);
    if (!err.empty()) fail(column, err);
  }
  // InputError's own wording is "field"; a CSV user thinks in columns.
  [[noreturn]] void fail(const std::string& column, const std::string& what) const override {
    throw InputError(path_, line_, "", "column '" + column + "': " + what);
  }
  uint64_t line() const override { return line_; }

 private:
  const std::string& path_;
  uint64_t line_;
  const std::vector<std::string>& fields_;
  const std::unordered_map<std::string, size_t>& index_;
};

class JsonRow : public RowSource {
 public:
  JsonRow(jsonl::object& obj, const jsonl::Where& where) : obj_(obj), where_(where) {}

  std::optional<std::string> scalar(const std::string& column) const override {
    auto v = jsonl::field(obj_, column, where_);
    switch (v.type()) {
      case simdjson::dom::element_type::NULL_VALUE:
        return std::nullopt;
      case simdjson::dom::element_type::STRING: {
        std::string_view s = v.get_string().value_unsafe();
        if (trim(s).empty()) return std::nullopt;
        return std::string(s);
      }
      case simdjson::dom::element_type::INT64:
        return std::to_string(v.get_int64().value_unsafe());
      case simdjson::dom::element_type::UINT64:
        return std::to_string(v.get_uint64().value_unsafe());
      case simdjson::dom::element_type::DOUBLE:
        return fmt::format("{}", v.get_double().value_unsafe());  // shortest, round-trips
      default:
        break;
    }
    JsonRow::fail(column, "expected a string or a number");  // qualified: [[noreturn]] to -O0 too
  }
  void int_list(const std::string& column, bool signed_ok,
                std::vector<uint64_t>& out) const override {
    auto v = jsonl::field(obj_, column, where_);
    std::string_view s;
    if (!v.get_string().get(s)) {  // a list written as a string, as in CSV
      std::string err = parse_int_list(s, signed_ok, out);
      if (!err.empty()) fail(column, err);
      return;
    }
    simdjson::dom::array arr;
    if (v.is_number())
      fail(column, std::string("one number, not a list: if it is the prompt's length, ") +
                       kLengthsAreNotPrompts);
    if (v.get_array().get(arr)) fail(column, "expected an array of integers");
    out.clear();
    for (auto item : arr) {
      uint64_t x;
      int64_t neg;
      if (!item.get_uint64().get(x)) {
        out.push_back(x);
      } else if (signed_ok && !item.get_int64().get(neg)) {
        out.push_back(static_cast<uint64_t>(neg));
      } else {
        fail(column, fmt::format("item {}: expected {}", out.size() + 1,
                                 signed_ok ? "a 64-bit integer" : "a non-negative integer"));
      }
    }
  }
  [[noreturn]] void fail(const std::string& column, const std::string& what) const override {
    where_.fail(column, what);
  }
  uint64_t line() const override { return where_.line; }

 private:
  jsonl::object& obj_;
  const jsonl::Where& where_;
};

// --- Rows into the trace --------------------------------------------------------------------

// Interns a string as a dense id in order of first appearance.
class Names {
 public:
  uint32_t id(const std::string& name) {
    auto [it, inserted] = ids_.emplace(name, static_cast<uint32_t>(names_.size()));
    if (inserted) names_.push_back(name);
    return it->second;
  }
  bool has(const std::string& name) const { return ids_.count(name) > 0; }
  size_t size() const { return names_.size(); }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::string> names_;
};

constexpr uint32_t kTurnUnknown = 0;  // filled in after sorting: order within the session

// --assume takes a log of lengths only, and makes its sessions itself (assumed_prompts.h).
AssumedPromptModel assumed_prompts_for(const ImportMapping& m, const std::string& model) {
  if (!m.tokens.empty() || !m.text.empty() || !m.hashes.empty() || m.prompt_tokens.empty())
    throw ConfigError(
        "trace import: --assume is for a log of lengths only: map prompt_tokens=COLUMN and no "
        "tokens, text or hashes (a log with the prompts' content needs no assumption)");
  if (!m.session.empty() || !m.turn.empty())
    throw ConfigError(
        "trace import: --assume makes the sessions and turns by its model; map "
        "no session or turn with it");
  return parse_assumed_prompt_model(model);
}

// A logged prompt length, from 1 to 2^32 - 1 tokens.
uint64_t prompt_length(const RowSource& row, const std::string& column) {
  auto cell = row.scalar(column);
  std::optional<uint64_t> n;
  if (!cell || !(n = parse_uint(*cell)) || *n == 0 || *n > UINT32_MAX)
    row.fail(column, "expected a prompt length from 1 to 2^32 - 1 tokens");
  return *n;
}

class Importer {
 public:
  Importer(const std::string& path, const ImportOptions& opts)
      : m_(opts.map), opts_(opts), unit_(parse_unit(opts.time_unit)) {
    if ((!m_.text.empty() || !m_.output_text.empty()) && !opts.tokenizer)
      throw ConfigError("trace import: mapping text or output_text needs a tokenizer");
    trace_.name = path;
    trace_.block_tokens = opts.block_tokens ? opts.block_tokens : 16;
    if (opts.assume)
      assume_ = assumed_prompts_for(m_, *opts.assume);
    else if (m_.tokens.empty() && m_.text.empty() && m_.hashes.empty())
      throw ConfigError(
          fmt::format("trace import: a log of lengths only and no assumption model: {}",
                      kLengthsAreNotPrompts));
  }

  // Parses every mapped cell first, so a bad row throws before anything is appended.
  void add(const RowSource& row) {
    const uint32_t B = trace_.block_tokens;
    auto time_cell = row.scalar(m_.time);
    if (!time_cell) row.fail(m_.time, "empty");
    Time t;
    std::string err = parse_time(*time_cell, unit_, t);
    if (!err.empty()) row.fail(m_.time, err);

    std::optional<std::string> session;
    if (!m_.session.empty()) session = row.scalar(m_.session);

    ids_.clear();
    uint64_t prompt_tokens = 0;
    bool keys_as_is = false;
    bool one_number = false;  // the prompt's whole content is one number: a length?
    if (!m_.hashes.empty()) {
      row.int_list(m_.hashes, true, ids_);
      if (ids_.empty()) row.fail(m_.hashes, "empty prompt: no block hashes");
      keys_as_is = true;
      one_number = ids_.size() == 1;
      prompt_tokens = ids_.size() * B;
      if (!m_.prompt_tokens.empty()) {
        auto cell = row.scalar(m_.prompt_tokens);
        std::optional<uint64_t> n;
        if (!cell || !(n = parse_uint(*cell)))
          row.fail(m_.prompt_tokens, "expected a non-negative integer");
        // Engines hash full blocks only (vLLM, SGLang) or a partial last block too.
        uint64_t full = *n / B, all = (*n + B - 1) / B;
        if (ids_.size() < full || ids_.size() > all)
          row.fail(m_.hashes, fmt::format("{} block hashes for {} prompt tokens (expected {}{} "
                                          "blocks of {} tokens)",
                                          ids_.size(), *n, full,
                                          all != full ? fmt::format(" or {}", all) : "", B));
        prompt_tokens = *n;
      }
      check_chained(row);
    } else if (assume_) {  // lengths only: the model makes the blocks once rows are in time order
      prompt_tokens = prompt_length(row, m_.prompt_tokens);
    } else {
      tokens_.clear();
      if (!m_.tokens.empty()) {
        row.int_list(m_.tokens, false, ids_);
        for (uint64_t x : ids_) {
          if (x > UINT32_MAX) row.fail(m_.tokens, fmt::format("token id {} over 2^32 - 1", x));
          tokens_.push_back(static_cast<uint32_t>(x));
        }
        ids_.clear();
        one_number = tokens_.size() == 1;
      } else {
        auto text = row.scalar(m_.text);
        if (text) {
          opts_.tokenizer->encode(*text, tokens_);
          std::string_view digits = trim(*text);
          one_number = std::all_of(digits.begin(), digits.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
        }
      }
      const std::string& column = m_.tokens.empty() ? m_.text : m_.tokens;
      if (tokens_.empty()) row.fail(column, "empty prompt");
      prompt_tokens = tokens_.size();
      text_block_ids(tokens_.data(), tokens_.size(), B, ids_);
    }
    if (prompt_tokens > UINT32_MAX)
      row.fail(keys_as_is           ? m_.hashes
               : !m_.tokens.empty() ? m_.tokens
                                    : m_.text,
               "over 2^32 - 1 prompt tokens");

    uint64_t output = 0;
    if (!m_.output.empty()) {
      auto cell = row.scalar(m_.output);
      if (cell) {
        auto n = parse_uint(*cell);
        if (!n || *n > UINT32_MAX) row.fail(m_.output, "expected a token count");
        output = *n;
      }
    } else if (!m_.output_text.empty()) {
      auto text = row.scalar(m_.output_text);
      if (text) {
        out_tokens_.clear();
        opts_.tokenizer->encode(*text, out_tokens_);
        output = out_tokens_.size();
      }
    }
    uint32_t turn = kTurnUnknown;
    if (!m_.turn.empty()) {
      auto cell = row.scalar(m_.turn);
      if (cell) {
        auto n = parse_uint(*cell);
        if (!n || *n == 0 || *n > UINT32_MAX) row.fail(m_.turn, "expected a turn number from 1");
        turn = static_cast<uint32_t>(*n);
      }
    }
    std::string category, user;
    if (!m_.category.empty()) {
      category = row.scalar(m_.category).value_or("(empty)");
      if (!categories_.has(category) &&
          categories_.size() >= std::numeric_limits<CategoryId>::max())
        row.fail(m_.category, "too many distinct categories");
    }
    if (!m_.user.empty()) user = row.scalar(m_.user).value_or("");

    // Nothing below throws: the row is whole.
    one_number_rows_ += one_number;
    if (opts_.keep_prompts) keep_prompt(row);
    if (keys_as_is)
      for (size_t i = 0; i < ids_.size(); ++i)
        place_of_.try_emplace(ids_[i], Place{i ? ids_[i - 1] : 0, i, trace_.size()});
    SessionId s = session ? sessions_.id(*session) : kNoSession;
    CategoryId cat = m_.category.empty() ? 0 : static_cast<CategoryId>(categories_.id(category));
    uint32_t user_id = m_.user.empty() ? 0 : users_.id(user);
    if (keys_as_is)
      trace_.add_request_keys(t, ids_, static_cast<uint32_t>(prompt_tokens),
                              static_cast<uint32_t>(output), s, turn, cat, user_id);
    else
      trace_.add_request(t, ids_, static_cast<uint32_t>(prompt_tokens),
                         static_cast<uint32_t>(output), s, turn, cat, user_id);
  }

  // Engines' chained hashes stand for their whole prefix, so a hash has one place: one position
  // and one hash before it. Hashes of block contents alone repeat at other places, and taken as
  // keys they would count as hits that no prefix cache makes (a ceiling no replay reaches).
  void check_chained(const RowSource& row) {
    for (size_t i = 0; i < ids_.size(); ++i) {
      auto it = place_of_.find(ids_[i]);
      if (it == place_of_.end()) continue;
      const Place& p = it->second;
      if (p.position != i || (i && p.before != ids_[i - 1]))
        row.fail(m_.hashes,
                 fmt::format("hash {} is block {} here but block {} of request {}: {}", ids_[i],
                             i + 1, p.position + 1, p.request + 1, kNotChained));
    }
    sorted_.assign(ids_.begin(), ids_.end());
    std::sort(sorted_.begin(), sorted_.end());
    auto twice = std::adjacent_find(sorted_.begin(), sorted_.end());
    if (twice != sorted_.end())
      row.fail(m_.hashes,
               fmt::format("hash {} is repeated in one prompt: {}", *twice, kNotChained));
  }

  // --- keep_prompts (kvpolicy doctor): each row's prompt, moved to the trace's order ---
  void keep_prompt(const RowSource& row) {
    KeptPrompt k;
    k.line = row.line();
    if (!m_.text.empty()) k.text = row.scalar(m_.text).value_or("");
    if (m_.hashes.empty()) k.tokens = tokens_;
    if (!m_.output_text.empty()) k.output_text = row.scalar(m_.output_text).value_or("");
    kept_.push_back(std::move(k));
  }
  // The order Trace::sort_by_time gives (a stable sort by time), applied to the kept prompts.
  std::vector<KeptPrompt> kept_in_time_order() {
    const std::vector<Time>& time = trace_.time;
    std::vector<uint32_t> order(kept_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return time[a] < time[b]; });
    std::vector<KeptPrompt> out;
    out.reserve(kept_.size());
    for (uint32_t i : order) out.push_back(std::move(kept_[i]));
    kept_.clear();
    return out;
  }

  // Sorts by time, counts time from the first request, numbers sessions in order of their first
  // request and gives rows without a turn their place in the session.
  Trace finish(const std::string& path, ImportReport& report) {
    Trace& t = trace_;
    // Most prompts one number is a column of lengths (or ids of whole prompts), not content:
    // imported, each would be a one-token (or one-block) prompt and the hit rates fiction.
    if (t.size() && one_number_rows_ * 2 > t.size()) {
      const std::string& column = !m_.tokens.empty() ? m_.tokens
                                  : !m_.text.empty() ? m_.text
                                                     : m_.hashes;
      throw InputError(path, 0, column,
                       fmt::format("{}, which looks like a token count rather than the prompt: {}",
                                   one_number_rows_ == t.size()
                                       ? std::string("every row's prompt is one number")
                                       : fmt::format("{} of {} rows' prompts are one number",
                                                     one_number_rows_, t.size()),
                                   kLengthsAreNotPrompts));
    }
    if (!m_.category.empty()) t.category_names = categories_.names();
    report.rows = t.size();
    if (opts_.keep_prompts) report.prompts = kept_in_time_order();
    report.sorted = t.sort_by_time();
    if (t.size()) {
      Time first = t.time.front();
      // Each time is below 2^62 us, but ISO dates before 1970 are negative: the span can pass it.
      if (t.time.back() - first >= kMaxTime)
        throw InputError(path, 0, m_.time,
                         "the times span 2^62 microseconds or more (146,000 years)");
      for (Time& x : t.time) x -= first;
    }
    std::vector<SessionId> renumber(sessions_.size(), kNoSession);
    std::vector<uint32_t> turns_so_far;
    SessionId next = 0;
    for (size_t r = 0; r < t.size(); ++r) {
      SessionId& s = t.session[r];
      if (s != kNoSession) {
        if (renumber[s] == kNoSession) {
          renumber[s] = next++;
          turns_so_far.push_back(0);
        }
        s = renumber[s];
      }
      uint32_t nth = s == kNoSession ? 1 : ++turns_so_far[s];
      if (t.turn[r] == kTurnUnknown) t.turn[r] = nth;
    }
    if (assume_) report.assumed = assume_prompts(t, *assume_);
    return std::move(trace_);
  }

 private:
  const ImportMapping& m_;
  const ImportOptions& opts_;
  Unit unit_;
  Trace trace_;
  Names sessions_, categories_, users_;
  std::vector<uint64_t> ids_;
  std::vector<uint32_t> tokens_, out_tokens_;
  uint64_t one_number_rows_ = 0;
  std::optional<AssumedPromptModel> assume_;  // --assume: a log of lengths only
  // Where each hash was seen (check_chained): its position, the hash before it, its request.
  struct Place {
    uint64_t before;
    size_t position;
    size_t request;
  };
  std::unordered_map<uint64_t, Place> place_of_;
  std::vector<uint64_t> sorted_;
  std::vector<KeptPrompt> kept_;  // keep_prompts, in the log's order
};

void import_csv(const std::string& path, const ImportOptions& opts, Importer& importer,
                ImportReport& report) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  CsvReader csv(path, ss.str());
  std::vector<std::string> header, fields;
  uint64_t header_line, line;
  if (!csv.next(header, header_line)) throw InputError(path, 0, "", "empty file");
  std::unordered_map<std::string, size_t> index;
  std::string columns;
  for (size_t i = 0; i < header.size(); ++i) {
    std::string name(trim(header[i]));
    index.emplace(name, i);
    columns += (i ? ", " : "") + name;
  }
  for (const Target& target : kTargets) {
    const std::string& column = opts.map.*target.column;
    if (!column.empty() && !index.count(column))
      throw InputError(
          path, header_line, "",
          fmt::format("column '{}' (mapped to {}) is not in the header; its columns: {}", column,
                      target.name, columns));
  }
  while (csv.next(fields, line)) {
    try {
      CsvRow row(path, line, fields, index);
      if (fields.size() != header.size())
        throw InputError(
            path, line, "",
            fmt::format("{} fields where the header has {}", fields.size(), header.size()));
      importer.add(row);
    } catch (const InputError& e) {
      if (!opts.skip_bad_lines) throw;
      if (report.skipped_rows++ == 0) report.first_skipped = e.what();
    }
  }
  report.lines = csv.lines();
}

void import_jsonl(const std::string& path, const ImportOptions& opts, Importer& importer,
                  ImportReport& report) {
  ReadOptions ro;
  ro.skip_bad_lines = opts.skip_bad_lines;
  ReadReport rr;
  jsonl::for_each_record(path, ro, rr, [&](jsonl::object& obj, const jsonl::Where& w) {
    jsonl::reject_duplicate_keys(obj, w);
    importer.add(JsonRow(obj, w));
  });
  report.lines = rr.lines;
  report.skipped_rows = rr.skipped_lines;
  report.first_skipped = rr.first_skipped;
}

std::string detect_import_format(const std::string& path) {
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".csv")) return "csv";
  if (ends_with(".jsonl") || ends_with(".ndjson") || ends_with(".json")) return "jsonl";
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", "cannot open file");
  char c;
  while (in.get(c))
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return c == '{' ? "jsonl" : "csv";
  throw InputError(path, 0, "", "empty file");
}

}  // namespace

ImportMapping parse_import_mapping(const std::string& spec, bool lengths_only_ok) {
  ImportMapping m;
  std::string valid;
  for (const Target& t : kTargets) valid += (valid.empty() ? "" : ", ") + std::string(t.name);
  std::string_view rest = spec;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw ConfigError(fmt::format("--map: '{}' is not target=column", item));
    std::string target(trim(item.substr(0, eq))), column(trim(item.substr(eq + 1)));
    const Target* found = nullptr;
    for (const Target& t : kTargets)
      if (target == t.name) found = &t;
    if (!found)
      throw ConfigError(
          fmt::format("--map: unknown target '{}' (valid targets: {})", target, valid));
    if (column.empty()) throw ConfigError(fmt::format("--map: {} names no column", target));
    std::string& slot = m.*found->column;
    if (!slot.empty()) throw ConfigError(fmt::format("--map: {} is mapped twice", target));
    slot = column;
  }
  if (m.time.empty()) throw ConfigError("--map: time=COLUMN is required");
  int prompts = !m.tokens.empty() + !m.text.empty() + !m.hashes.empty();
  if (prompts > 1)
    throw ConfigError("--map: map exactly one of tokens, text and hashes (the prompt)");
  if (prompts == 0 && !m.prompt_tokens.empty() && !lengths_only_ok)
    throw ConfigError(
        fmt::format("--map: a log of lengths only (prompt_tokens, no tokens, text "
                    "or hashes) and no --assume: {}",
                    kLengthsAreNotPrompts));
  if (prompts == 0 && m.prompt_tokens.empty())
    throw ConfigError(
        fmt::format("--map: no prompt mapped (tokens, text or hashes): {}", kLengthsAreNotPrompts));
  if (!m.prompt_tokens.empty() && prompts == 1 && m.hashes.empty())
    throw ConfigError("--map: prompt_tokens goes with hashes (tokens and text are counted)");
  if (!m.output.empty() && !m.output_text.empty())
    throw ConfigError("--map: map output or output_text, not both");
  return m;
}

Trace import_trace(const std::string& path, const ImportOptions& opts, ImportReport& report) {
  report = ImportReport{};
  // Before anything opens it: a FIFO would block the open, /dev/zero would fill memory.
  require_memory_for_file(path, require_regular_file(path, "logs"), "");
  report.format =
      opts.format.empty() || opts.format == "auto" ? detect_import_format(path) : opts.format;
  if (report.format != "csv" && report.format != "jsonl")
    throw ConfigError("trace import: format '" + report.format + "': expected csv or jsonl");
  Importer importer(path, opts);
  if (report.format == "csv")
    import_csv(path, opts, importer, report);
  else
    import_jsonl(path, opts, importer, report);
  Trace t = importer.finish(path, report);
  if (t.size() == 0) throw InputError(path, 0, "", "no valid rows");
  t.validate();
  return t;
}

}  // namespace kvpolicy
