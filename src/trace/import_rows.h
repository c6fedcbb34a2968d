// `trace import`'s rows, whatever the file's format: the importer asks a RowSource for the
// mapped columns by target (CSV cells, JSONL fields by path, JSONL lines joined by request id).
// Internal to src/trace.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat_template.h"
#include "import_hashes.h"

namespace kvpolicy {

// Why a log of prompt lengths alone cannot be imported, for the errors that meet one.
inline constexpr const char* kLengthsAreNotPrompts =
    "a prefix cache hits when requests share a prompt prefix, and token counts cannot say "
    "which requests do. Missing: the prompts' content or the engine's block hashes. Either "
    "would supply it: map text=COLUMN (the prompt text), messages=COLUMN (OpenAI chat "
    "messages), tokens=COLUMN (a list of token ids per row) or hashes=COLUMN (the engine's "
    "chained block hashes, from its block-hash log). A log of lengths only (such as Azure's LLM "
    "inference trace) is replayed only under stated assumptions: map prompt_tokens=COLUMN and "
    "add --assume MODEL (Python: assume=), which simulates what the prompts share (shared "
    "system prompts, sessions), stores the assumptions in the trace and prints them above every "
    "table";

class RowSource {
 public:
  virtual ~RowSource() = default;
  // The cell as text; nullopt when empty (CSV) or null (JSON). A column mapped but absent from
  // a JSON record is an error.
  virtual std::optional<std::string> scalar(const std::string& column) const = 0;
  // A list of integers: a JSON array, or a cell parsed by parse_int_list.
  virtual void int_list(const std::string& column, bool signed_ok,
                        std::vector<uint64_t>& out) const = 0;
  // Block hashes: integers, or strings given their keys by `keys`.
  virtual void hash_list(const std::string& column, HashStringKeys& keys,
                         std::vector<uint64_t>& out) const = 0;
  // OpenAI chat messages: a JSON array (in CSV, a cell holding one).
  virtual void messages(const std::string& column, std::vector<ChatMessage>& out) const = 0;
  // Whether the column holds a JSON array (a prompt given as token ids rather than text).
  virtual bool is_list(const std::string& column) const = 0;
  [[noreturn]] virtual void fail(const std::string& column, const std::string& what) const = 0;
  // The log's line the row starts on (the one holding the prompt, for joined lines); 0 unknown.
  virtual uint64_t line() const { return 0; }
};

namespace import_json {

enum class Found { kYes, kMissing, kBad };

// The value at `path` in `obj`: a key that exists literally wins, else dotted and indexed steps
// (usage.prompt_tokens, messages[-1].content). A null on the way is the value (absent). On
// kMissing or kBad, `why` says which step failed.
Found resolve(simdjson::dom::object obj, std::string_view path, simdjson::dom::element& out,
              std::string& why);

// Parsers of one JSON value; each returns an error message, empty on success.
std::string scalar(simdjson::dom::element v, std::optional<std::string>& out);
std::string int_list(simdjson::dom::element v, bool signed_ok, std::vector<uint64_t>& out);
std::string hash_list(simdjson::dom::element v, HashStringKeys& keys, std::vector<uint64_t>& out);
std::string messages(simdjson::dom::element v, std::vector<ChatMessage>& out);
// The same written in a text cell (CSV, or a JSON string): hashes as a JSON array or separated
// by spaces or commas; messages as a JSON array.
std::string hash_cell(std::string_view s, HashStringKeys& keys, std::vector<uint64_t>& out);
std::string messages_cell(std::string_view s, std::vector<ChatMessage>& out);

// A RowSource over JSON values: get(column) gives the value or fails.
class JsonCells : public RowSource {
 public:
  std::optional<std::string> scalar(const std::string& column) const override;
  void int_list(const std::string& column, bool signed_ok,
                std::vector<uint64_t>& out) const override;
  void hash_list(const std::string& column, HashStringKeys& keys,
                 std::vector<uint64_t>& out) const override;
  void messages(const std::string& column, std::vector<ChatMessage>& out) const override;
  bool is_list(const std::string& column) const override;

 protected:
  virtual simdjson::dom::element get(const std::string& column) const = 0;
};

// One JSONL record, its fields read by path.
class JsonRow : public JsonCells {
 public:
  JsonRow(simdjson::dom::object obj, const std::string& path, uint64_t line)
      : obj_(obj), path_(path), line_(line) {}
  [[noreturn]] void fail(const std::string& column, const std::string& what) const override;
  uint64_t line() const override { return line_; }

 protected:
  simdjson::dom::element get(const std::string& column) const override;

 private:
  simdjson::dom::object obj_;
  const std::string& path_;
  uint64_t line_;
};

}  // namespace import_json
}  // namespace kvpolicy
