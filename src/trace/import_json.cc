// JSONL rows of `trace import`: fields by path, and the JSON values the targets take (lists of
// token ids, block hashes, chat messages).
#include <fmt/format.h>

#include <charconv>

#include "import_cells.h"
#include "import_rows.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/strings.h"

namespace kvpolicy::import_json {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

struct Step {
  bool index = false;
  std::string key;
  int64_t at = 0;
};

// "a.b[0].c" into steps; false when it is not a path (then only the literal key can match).
bool parse_path(std::string_view path, std::vector<Step>& steps) {
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '[') {
      size_t close = path.find(']', i);
      if (close == std::string_view::npos) return false;
      Step s;
      s.index = true;
      std::string_view n = path.substr(i + 1, close - i - 1);
      auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), s.at);
      if (n.empty() || ec != std::errc() || p != n.data() + n.size()) return false;
      steps.push_back(s);
      i = close + 1;
      if (i < path.size() && path[i] == '.') {
        ++i;
        if (i == path.size()) return false;
      }
      continue;
    }
    size_t end = path.find_first_of(".[", i);
    if (end == std::string_view::npos) end = path.size();
    if (end == i) return false;
    steps.push_back({false, std::string(path.substr(i, end - i)), 0});
    i = end;
    if (i < path.size() && path[i] == '.') {
      ++i;
      if (i == path.size()) return false;
    }
  }
  return !steps.empty();
}

// A non-text content part as a placeholder: its type and a hash of the part, so the same image
// is the same text and different ones differ.
std::string placeholder(std::string_view type, element part) {
  std::string json = simdjson::minify(part);
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : json) h = (h ^ c) * 1099511628211ull;
  return fmt::format("<|{} {:016x}|>", type, h);
}

}  // namespace

Found resolve(simdjson::dom::object obj, std::string_view path, element& out, std::string& why) {
  auto err = obj.at_key(path).get(out);
  if (!err) return Found::kYes;
  std::vector<Step> steps;
  if (!parse_path(path, steps) || (steps.size() == 1 && !steps[0].index)) {
    why = "missing";
    return Found::kMissing;
  }
  element cur;
  bool at_root = true;
  std::string so_far;
  for (const Step& s : steps) {
    if (!at_root && cur.is_null()) break;  // absent on the way: the value is null
    if (s.index && at_root) {
      why = "the record is an object, not an array";
      return Found::kBad;
    }
    if (s.index) {
      simdjson::dom::array arr;
      if (cur.get_array().get(arr)) {
        why = fmt::format("'{}' is not an array", so_far);
        return Found::kBad;
      }
      int64_t n = static_cast<int64_t>(arr.size());
      int64_t at = s.at < 0 ? n + s.at : s.at;
      if (at < 0 || at >= n) {
        why = fmt::format("'{}' has {} item(s), no [{}]", so_far, n, s.at);
        return Found::kMissing;
      }
      cur = arr.at(static_cast<size_t>(at)).value_unsafe();
      so_far += fmt::format("[{}]", s.at);
      continue;
    }
    simdjson::dom::object o = obj;
    if (!at_root && cur.get_object().get(o)) {
      why = so_far.empty() ? "the record is not an object"
                           : fmt::format("'{}' is not an object", so_far);
      return Found::kBad;
    }
    element next;
    if (o.at_key(s.key).get(next)) {
      why = so_far.empty()
                ? fmt::format("missing: no key '{}' and no '{}' in the record", path, s.key)
                : fmt::format("'{}' has no '{}'", so_far, s.key);
      return Found::kMissing;
    }
    cur = next;
    at_root = false;
    so_far += (so_far.empty() ? "" : ".") + s.key;
  }
  out = cur;
  return Found::kYes;
}

std::string scalar(element v, std::optional<std::string>& out) {
  switch (v.type()) {
    case element_type::NULL_VALUE:
      out.reset();
      return "";
    case element_type::STRING: {
      std::string_view s = v.get_string().value_unsafe();
      if (trim(s).empty())
        out.reset();
      else
        out = std::string(s);
      return "";
    }
    case element_type::INT64:
      out = std::to_string(v.get_int64().value_unsafe());
      return "";
    case element_type::UINT64:
      out = std::to_string(v.get_uint64().value_unsafe());
      return "";
    case element_type::DOUBLE:
      out = fmt::format("{}", v.get_double().value_unsafe());  // shortest, round-trips
      return "";
    default:
      return "expected a string or a number";
  }
}

std::string int_list(element v, bool signed_ok, std::vector<uint64_t>& out) {
  simdjson::dom::array arr;
  if (v.is_number())
    return std::string("one number, not a list: if it is the prompt's length, ") +
           kLengthsAreNotPrompts;
  if (v.get_array().get(arr)) return "expected an array of integers";
  out.clear();
  for (auto item : arr) {
    uint64_t x;
    int64_t neg;
    if (!item.get_uint64().get(x)) {
      out.push_back(x);
    } else if (signed_ok && !item.get_int64().get(neg)) {
      out.push_back(static_cast<uint64_t>(neg));
    } else {
      return fmt::format("item {}: expected {}", out.size() + 1,
                         signed_ok ? "a 64-bit integer" : "a non-negative integer");
    }
  }
  return "";
}

std::string hash_list(element v, HashStringKeys& keys, std::vector<uint64_t>& out) {
  simdjson::dom::array arr;
  if (v.get_array().get(arr)) return int_list(v, true, out);  // its error
  out.clear();
  for (auto item : arr) {
    std::string_view s;
    uint64_t x;
    int64_t neg;
    if (!item.get_string().get(s)) {
      std::string err = keys.key(trim(s), x);
      if (!err.empty()) return fmt::format("item {}: {}", out.size() + 1, err);
      out.push_back(x);
    } else if (!item.get_uint64().get(x)) {
      out.push_back(x);
    } else if (!item.get_int64().get(neg)) {
      out.push_back(static_cast<uint64_t>(neg));
    } else {
      return fmt::format("item {}: expected a 64-bit integer or a string", out.size() + 1);
    }
  }
  return "";
}

std::string messages(element v, std::vector<ChatMessage>& out) {
  out.clear();
  simdjson::dom::array arr;
  if (v.get_array().get(arr))
    return "expected an array of chat messages ({\"role\": ..., \"content\": ...})";
  for (auto item : arr) {
    size_t n = out.size() + 1;
    simdjson::dom::object m;
    std::string_view role;
    if (item.get_object().get(m)) return fmt::format("message {}: not an object", n);
    if (m.at_key("role").get_string().get(role))
      return fmt::format("message {}: no 'role' string", n);
    ChatMessage msg{std::string(role), ""};
    element content, parts_value;
    std::string_view text;
    simdjson::dom::array parts;
    bool has_parts = false;
    if (m.at_key("content").get(content)) {
      // OpenTelemetry's GenAI messages hold `parts` (text in "content") where OpenAI's hold
      // `content` (text parts in "text"); neither (an assistant's tool calls alone): empty.
      if (!m.at_key("parts").get(parts_value)) {
        if (parts_value.get_array().get(parts))
          return fmt::format("message {}: 'parts' is not an array", n);
        has_parts = true;
      }
    } else if (!content.is_null()) {
      if (!content.get_string().get(text))
        msg.content = text;
      else if (!content.get_array().get(parts))
        has_parts = true;
      else
        return fmt::format("message {}: 'content' is neither a string nor an array of parts", n);
    }
    if (has_parts) {
      bool first = true;
      for (auto part : parts) {
        std::string_view type;
        if (part.at_key("type").get_string().get(type))
          return fmt::format("message {}: a content part with no 'type'", n);
        if (!first) msg.content += '\n';
        first = false;
        if (type == "text") {
          if (part.at_key("text").get_string().get(text) &&
              part.at_key("content").get_string().get(text))
            return fmt::format("message {}: a text part with no 'text' string", n);
          msg.content += text;
        } else {
          msg.content += placeholder(type, part);
        }
      }
    }
    out.push_back(std::move(msg));
  }
  if (out.empty()) return "no messages";
  return "";
}

std::string hash_cell(std::string_view s, HashStringKeys& keys, std::vector<uint64_t>& out) {
  s = trim(s);
  if (!s.empty() && s.front() == '[') {
    simdjson::dom::parser parser;
    element v;
    if (parser.parse(s.data(), s.size()).get(v)) return "not a JSON array of hashes";
    return hash_list(v, keys, out);
  }
  out.clear();
  size_t i = 0;
  while (i < s.size()) {
    size_t end = s.find_first_of(" ,\t\r\n", i);
    if (end == std::string_view::npos) end = s.size();
    if (end > i) {
      uint64_t x;
      std::string err = keys.key(s.substr(i, end - i), x);
      if (!err.empty()) return fmt::format("item {}: {}", out.size() + 1, err);
      out.push_back(x);
    }
    i = end + 1;
  }
  return "";
}

std::string messages_cell(std::string_view s, std::vector<ChatMessage>& out) {
  simdjson::dom::parser parser;
  element v;
  if (parser.parse(s.data(), s.size()).get(v)) return "not a JSON array of chat messages";
  return messages(v, out);
}

// --- JsonCells --------------------------------------------------------------------------------

std::optional<std::string> JsonCells::scalar(const std::string& column) const {
  std::optional<std::string> out;
  std::string err = import_json::scalar(get(column), out);
  if (!err.empty()) fail(column, err);
  return out;
}

void JsonCells::int_list(const std::string& column, bool signed_ok,
                         std::vector<uint64_t>& out) const {
  element v = get(column);
  std::string_view s;
  std::string err = !v.get_string().get(s) ? import_cells::parse_int_list(s, signed_ok, out)
                                           : import_json::int_list(v, signed_ok, out);
  if (!err.empty()) fail(column, err);
}

void JsonCells::hash_list(const std::string& column, HashStringKeys& keys,
                          std::vector<uint64_t>& out) const {
  element v = get(column);
  std::string_view s;
  std::string err =
      !v.get_string().get(s) ? hash_cell(s, keys, out) : import_json::hash_list(v, keys, out);
  if (!err.empty()) fail(column, err);
}

void JsonCells::messages(const std::string& column, std::vector<ChatMessage>& out) const {
  element v = get(column);
  std::string_view s;
  std::string err = !v.get_string().get(s) ? messages_cell(s, out) : import_json::messages(v, out);
  if (!err.empty()) fail(column, err);
}

bool JsonCells::is_list(const std::string& column) const { return get(column).is_array(); }

// --- JsonRow ----------------------------------------------------------------------------------

void JsonRow::fail(const std::string& column, const std::string& what) const {
  throw InputError(path_, line_, column, what);
}

element JsonRow::get(const std::string& column) const {
  element v;
  std::string why;
  if (resolve(obj_, column, v, why) != Found::kYes) fail(column, why);
  return v;
}

}  // namespace kvpolicy::import_json
