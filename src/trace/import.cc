// `trace import`: a user's request log (CSV per RFC 4180, or JSONL) into a Trace. CSV and JSONL
// rows go through one parser (RowSource, import_rows.h), so both formats read every column the
// same way; the readers are in import_sources.cc, the chat templates in chat_template.cc, the
// targets, presets and --map parsing in import_mapping.cc.
#include "kvpolicy/trace/import.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>

#include "chat_template.h"
#include "import_cells.h"
#include "import_hashes.h"
#include "import_otlp.h"
#include "import_sources.h"
#include "import_time.h"
#include "import_vllm_log.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/input_file.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/trace/assumed_prompts.h"
#include "kvpolicy/trace/input_bytes.h"

namespace kvpolicy {
namespace {

using import_cells::parse_uint;
using import_time::parse_time;
using import_time::parse_unit;
using import_time::Unit;

constexpr const char* kNotChained =
    "these are not chained block hashes (each block's hash must cover the blocks before it, as "
    "vLLM's and SGLang's do); chain them, or map the prompts' tokens or text instead";

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
  if (!m.tokens.empty() || !m.text.empty() || !m.messages.empty() || !m.hashes.empty() ||
      m.prompt_tokens.empty())
    throw ConfigError(
        "trace import: --assume is for a log of lengths only: map prompt_tokens=COLUMN and no "
        "tokens, text, messages or hashes (a log with the prompts' content needs no assumption)");
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
      : m_(opts.map),
        opts_(opts),
        unit_(parse_unit(opts.time_unit)),
        chat_(parse_chat_template(opts.chat_template)) {
    if ((!m_.text.empty() || !m_.messages.empty() || !m_.output_text.empty()) && !opts.tokenizer)
      throw ConfigError("trace import: mapping text, messages or output_text needs a tokenizer");
    trace_.name = path;
    trace_.block_tokens = opts.block_tokens ? opts.block_tokens : 16;
    if (opts.assume)
      assume_ = assumed_prompts_for(m_, *opts.assume);
    else if (m_.tokens.empty() && m_.text.empty() && m_.messages.empty() && m_.hashes.empty())
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
      row.hash_list(m_.hashes, hash_keys_, ids_);
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
      // OpenAI's completions take a prompt as text or as token ids: a list under text= is ids.
      const std::string& ids_column =
          !m_.tokens.empty() ? m_.tokens
                             : (!m_.text.empty() && row.is_list(m_.text) ? m_.text : "");
      if (!ids_column.empty()) {
        row.int_list(ids_column, false, ids_);
        for (uint64_t x : ids_) {
          if (x > UINT32_MAX) row.fail(ids_column, fmt::format("token id {} over 2^32 - 1", x));
          tokens_.push_back(static_cast<uint32_t>(x));
        }
        ids_.clear();
        one_number = tokens_.size() == 1;
      } else if (!m_.messages.empty()) {
        // The log's messages hold the earlier turns already: rendered as they are.
        row.messages(m_.messages, messages_);
        text_ = render_chat(chat_, messages_);
        opts_.tokenizer->encode(text_, tokens_);
      } else {
        auto text = row.scalar(m_.text);
        text_ = text.value_or("");
        if (text) {
          opts_.tokenizer->encode(*text, tokens_);
          std::string_view digits = trim(*text);
          one_number = std::all_of(digits.begin(), digits.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
        }
      }
      const std::string& column = prompt_column();
      if (tokens_.empty()) row.fail(column, "empty prompt");
      prompt_tokens = tokens_.size();
      text_block_ids(tokens_.data(), tokens_.size(), B, ids_);
    }
    if (prompt_tokens > UINT32_MAX) row.fail(prompt_column(), "over 2^32 - 1 prompt tokens");

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
    if (!m_.text.empty() || !m_.messages.empty()) k.text = text_;
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
      throw InputError(path, 0, prompt_column(),
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
  const std::string& prompt_column() const {
    return !m_.tokens.empty()     ? m_.tokens
           : !m_.text.empty()     ? m_.text
           : !m_.messages.empty() ? m_.messages
                                  : m_.hashes;
  }

  const ImportMapping& m_;
  const ImportOptions& opts_;
  Unit unit_;
  ChatTemplate chat_;
  HashStringKeys hash_keys_;
  std::vector<ChatMessage> messages_;
  Trace trace_;
  Names sessions_, categories_, users_;
  std::vector<uint64_t> ids_;
  std::vector<uint32_t> tokens_, out_tokens_;
  uint64_t one_number_rows_ = 0;
  std::optional<AssumedPromptModel> assume_;  // --assume: a log of lengths only
  std::string text_;                          // the row's prompt text (text or messages)
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

// csv or jsonl: by the name's extension (after a compression's), else by the first character.
std::string detect_import_format(const std::string& path, const std::string& data) {
  std::string name = path;
  for (const char* z : {".gz", ".zst", ".zstd"}) {
    std::string_view suffix(z);
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      name.resize(name.size() - suffix.size());
  }
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".csv")) return "csv";
  if (ends_with(".jsonl") || ends_with(".ndjson") || ends_with(".json")) return "jsonl";
  size_t i = data.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  for (; i < data.size(); ++i) {
    char c = data[i];
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return c == '{' ? "jsonl" : "csv";
  }
  throw InputError(path, 0, "", "empty file");
}

}  // namespace

Trace import_trace(const std::string& path, const ImportOptions& opts, ImportReport& report) {
  report = ImportReport{};
  InputCompression compression;
  // A file is checked (regular, fits in memory) before it is opened; stdin as it is read.
  std::string data = read_input_bytes(path, "logs", "", &compression);
  const std::string name = path == "-" ? "<stdin>" : path;
  report.compression = compression_name(compression);
  report.format =
      opts.format.empty() || opts.format == "auto" ? detect_import_format(name, data) : opts.format;
  if (report.format != "csv" && report.format != "jsonl" && report.format != "vllm-log" &&
      report.format != "otlp-json")
    throw ConfigError("trace import: format '" + report.format +
                      "': expected csv, jsonl, vllm-log or otlp-json");
  MappedColumns columns = mapped_columns(opts.map);
  Importer importer(name, opts);
  auto add = [&](const RowSource& row) { importer.add(row); };
  if (report.format == "csv") {
    import_csv(name, std::move(data), columns, opts, add, report);
  } else if (report.format == "jsonl") {
    import_jsonl(name, data, columns, opts, add, report);
  } else if (report.format == "otlp-json") {
    // Each GenAI span as a JSON line; errors name the line of the log that held it.
    uint64_t skipped = 0;
    std::string first;
    std::vector<uint64_t> lines;
    data = otlp_spans_to_jsonl(name, data, opts.skip_bad_lines, skipped, first, lines);
    import_jsonl(name, data, columns, opts, add, report, &lines);
    if (skipped && report.skipped_rows == 0) report.first_skipped = first;
    report.skipped_rows += skipped;
    report.lines = lines.back();
  } else {
    // vLLM's request lines as JSONL, line for line: errors keep the log's line numbers.
    uint64_t skipped = 0;
    std::string first;
    data = vllm_log_to_jsonl(name, data, opts.skip_bad_lines, skipped, first);
    import_jsonl(name, data, columns, opts, add, report);
    if (skipped && report.skipped_rows == 0) report.first_skipped = first;
    report.skipped_rows += skipped;
  }
  Trace t = importer.finish(name, report);
  if (t.size() == 0) throw InputError(name, 0, "", "no valid rows");
  t.validate();
  return t;
}

}  // namespace kvpolicy
