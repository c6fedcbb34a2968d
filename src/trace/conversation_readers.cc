// The text conversation datasets' readers, one per source's record shape (Chatbot Arena and
// ShareGPT chats, LooGLE documents with QA pairs), and the merge of same-role messages.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "formats/jsonl.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/text_trace.h"
#include "python_literal.h"

namespace kvpolicy {
namespace {

Role role_of(std::string_view r, const jsonl::Where& w, std::string_view field) {
  if (r == "user" || r == "human") return Role::kUser;
  if (r == "assistant" || r == "gpt" || r == "chatgpt" || r == "bard" || r == "model")
    return Role::kAssistant;
  if (r == "system") return Role::kSystem;
  w.fail(field, "unknown role '" + std::string(r) + "'");
}

// Chat records: an array of {role_key, text_key} objects. False when no message is the user's:
// valid data (the ShareGPT sample has such records) that makes no request.
bool read_chat(jsonl::object& obj, const jsonl::Where& w, std::string_view array_key,
               std::string_view role_key, std::string_view text_key, Conversation& c) {
  auto v = jsonl::field(obj, array_key, w);
  simdjson::dom::array arr;
  if (v.get_array().get(arr)) w.fail(array_key, "expected an array of messages");
  size_t k = 0;
  for (auto item : arr) {
    std::string where = fmt::format("{}[{}]", array_key, k++);
    simdjson::dom::object m;
    if (item.get_object().get(m)) w.fail(where, "expected an object");
    std::string_view role, text;
    if (m[role_key].get_string().get(role))
      w.fail(where + "." + std::string(role_key), "missing or not a string");
    if (m[text_key].get_string().get(text))
      w.fail(where + "." + std::string(text_key), "missing or not a string");
    c.messages.push_back(
        {role_of(role, w, where + "." + std::string(role_key)), std::string(text)});
  }
  bool user = false;
  for (auto& m : c.messages) user |= m.role == Role::kUser;
  return user;
}

void read_loogle(jsonl::object& obj, const jsonl::Where& w, Conversation& c) {
  std::string_view doc = jsonl::get_string(obj, "input", w);
  if (doc.empty()) w.fail("input", "empty document");
  std::string_view qa = jsonl::get_string(obj, "qa_pairs", w);
  c.independent_turns = true;
  c.messages.push_back({Role::kUser, std::string(doc)});
  if (qa == "none" || qa == "None" || qa.empty()) {
    // A summarization record: one request for the whole document, answered by "output".
    std::string question = "Summarize the document above.";
    if (jsonl::has_field(obj, "question")) {
      std::string_view q = jsonl::get_string(obj, "question", w);
      if (!q.empty() && q != "none" && q != "None") question = std::string(q);
    }
    c.messages.push_back({Role::kUser, question});
    c.messages.push_back({Role::kAssistant, std::string(jsonl::get_string(obj, "output", w))});
    return;
  }
  PyValue pairs;
  try {
    pairs = parse_python_literal(qa);
  } catch (const std::runtime_error& e) {
    w.fail("qa_pairs", e.what());
  }
  if (pairs.kind != PyValue::kList || pairs.items.empty())
    w.fail("qa_pairs", "expected a non-empty list of {'Q': ..., 'A': ...}");
  for (size_t k = 0; k < pairs.items.size(); ++k) {
    const PyValue& p = pairs.items[k];
    const PyValue* q = p.kind == PyValue::kDict ? p.get("Q") : nullptr;
    if (!q || q->kind != PyValue::kString)
      w.fail(fmt::format("qa_pairs[{}].Q", k), "missing or not a string");
    std::string answer;
    if (const PyValue* a = p.get("A")) a->collect(answer);
    c.messages.push_back({Role::kUser, q->text});
    c.messages.push_back({Role::kAssistant, answer});
  }
}

}  // namespace

std::vector<Conversation> read_conversations(const std::string& path, const std::string& source,
                                             bool skip_bad, TextReadReport& report) {
  enum { kArena, kShareGpt, kLoogle } kind;
  if (source == "chatbot-arena")
    kind = kArena;
  else if (source == "sharegpt")
    kind = kShareGpt;
  else if (source == "loogle")
    kind = kLoogle;
  else
    throw ConfigError("unknown text source '" + source +
                      "' (known: chatbot-arena, sharegpt, loogle)");
  std::vector<Conversation> out;
  ReadOptions opts;
  opts.skip_bad_lines = skip_bad;
  ReadReport rr;
  jsonl::for_each_record(path, opts, rr, [&](jsonl::object& obj, const jsonl::Where& w) {
    Conversation c;
    c.line = w.line;
    if (jsonl::has_field(obj, "id")) {
      std::string_view id;
      if (!obj["id"].get_string().get(id)) c.id = std::string(id);
    } else if (jsonl::has_field(obj, "title")) {
      std::string_view t;
      if (!obj["title"].get_string().get(t)) c.id = std::string(t);
    }
    bool has_user = true;
    if (kind == kArena) has_user = read_chat(obj, w, "messages", "role", "content", c);
    if (kind == kShareGpt) has_user = read_chat(obj, w, "conversations", "from", "value", c);
    if (kind == kLoogle) read_loogle(obj, w, c);
    if (!has_user) {
      ++report.without_user;
      return;
    }
    for (auto& m : c.messages) report.empty_messages += m.text.empty();
    out.push_back(std::move(c));
  });
  report.lines = rr.lines;
  report.bad_records = rr.skipped_lines;
  report.first_error = rr.first_skipped;
  report.conversations = out.size();
  for (auto& c : out)
    for (auto& m : c.messages) report.turns += m.role == Role::kUser;
  for (auto& c : out)
    if (c.independent_turns) --report.turns;  // the document is context, not a question
  // Consecutive messages of one role are one message (e.g. a user who sent two in a row).
  for (auto& c : out) {
    if (c.independent_turns) continue;
    std::vector<Message> merged;
    for (auto& m : c.messages) {
      if (!merged.empty() && merged.back().role == m.role) {
        merged.back().text += "\n\n" + m.text;
        ++report.merged_messages;
        if (m.role == Role::kUser) --report.turns;
      } else {
        merged.push_back(std::move(m));
      }
    }
    c.messages = std::move(merged);
  }
  return out;
}

}  // namespace kvpolicy
