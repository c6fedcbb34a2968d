// Text conversations to replayable traces: dataset readers, the chat template, arrival times,
// and the Alibaba-schema JSONL writer.
#include "kvpolicy/trace/text_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <queue>
#include <unordered_map>

#include "formats/jsonl.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/generators.h"

namespace kvpolicy {
namespace {

// --- A reader for the Python literals LooGLE stores its QA pairs in ---------------------------

struct PyValue {
  enum Kind { kNone, kBool, kNumber, kString, kList, kDict } kind = kNone;
  std::string text;  // kString; kNumber and kBool keep their spelling
  std::vector<PyValue> items;
  std::vector<std::pair<std::string, PyValue>> entries;

  const PyValue* get(std::string_view key) const {
    for (auto& [k, v] : entries)
      if (k == key) return &v;
    return nullptr;
  }
  // Every string inside, joined (an answer may be a string, a list or a dict of strings).
  void collect(std::string& out) const {
    if (kind == kString || kind == kNumber || kind == kBool) {
      if (!out.empty()) out += "; ";
      out += text;
    }
    for (auto& v : items) v.collect(out);
    for (auto& e : entries) e.second.collect(out);
  }
};

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Strings (' or " with Python's escapes), lists, tuples, dicts, numbers, None/True/False.
class PyLiteral {
 public:
  explicit PyLiteral(std::string_view s) : s_(s) {}
  PyValue parse() {
    PyValue v = value();
    skip();
    if (i_ != s_.size()) fail("unexpected text after the value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(fmt::format("Python literal, offset {}: {}", i_, what));
  }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }
  bool word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  PyValue value() {
    skip();
    if (i_ >= s_.size()) fail("unexpected end");
    char c = s_[i_];
    PyValue v;
    if (c == '\'' || c == '"') {
      v.kind = PyValue::kString;
      v.text = string();
    } else if (c == '[' || c == '(') {
      char close = c == '[' ? ']' : ')';
      v.kind = PyValue::kList;
      ++i_;
      while (true) {
        skip();
        if (i_ < s_.size() && s_[i_] == close) break;
        v.items.push_back(value());
        skip();
        if (i_ < s_.size() && s_[i_] == ',')
          ++i_;
        else if (i_ >= s_.size() || s_[i_] != close)
          fail("expected ',' or a closing bracket");
      }
      ++i_;
    } else if (c == '{') {
      v.kind = PyValue::kDict;
      ++i_;
      while (true) {
        skip();
        if (i_ < s_.size() && s_[i_] == '}') break;
        PyValue key = value();
        if (key.kind != PyValue::kString && key.kind != PyValue::kNumber)
          fail("a dict key that is not a string");
        skip();
        if (i_ >= s_.size() || s_[i_] != ':') fail("expected ':'");
        ++i_;
        v.entries.emplace_back(key.text, value());
        skip();
        if (i_ < s_.size() && s_[i_] == ',')
          ++i_;
        else if (i_ >= s_.size() || s_[i_] != '}')
          fail("expected ',' or '}'");
      }
      ++i_;
    } else if (word("None")) {
      v.kind = PyValue::kNone;
    } else if (word("True") || word("False")) {
      v.kind = PyValue::kBool;
      v.text = s_[i_ - 1] == 'e' && s_[i_ - 2] == 'u' ? "True" : "False";
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t start = i_++;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                                s_[i_] == '-' || s_[i_] == '+'))
        ++i_;
      v.kind = PyValue::kNumber;
      v.text = std::string(s_.substr(start, i_ - start));
    } else {
      fail(std::string("unexpected character '") + c + "'");
    }
    return v;
  }
  uint32_t hex(size_t digits) {
    if (i_ + digits > s_.size()) fail("short escape");
    uint32_t v = 0;
    for (size_t k = 0; k < digits; ++k) {
      char h = s_[i_++];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= uint32_t(h - '0');
      else if ((h | 0x20) >= 'a' && (h | 0x20) <= 'f')
        v |= uint32_t((h | 0x20) - 'a' + 10);
      else
        fail("bad hex escape");
    }
    return v;
  }
  std::string string() {
    char quote = s_[i_++];
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      char c = s_[i_++];
      if (c == quote) break;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unterminated escape");
      char e = s_[i_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case '0':
          out += '\0';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        case 'x':
          append_utf8(out, hex(2));
          break;
        case 'u':
          append_utf8(out, hex(4));
          break;
        case 'U':
          append_utf8(out, hex(8));
          break;
        case '\n':
          break;  // line continuation
        default:
          out += e;  // \\ \' \" and unknown escapes keep the character
      }
    }
    return out;
  }

  std::string_view s_;
  size_t i_ = 0;
};

// --- Readers ----------------------------------------------------------------------------------

Role role_of(std::string_view r, const jsonl::Where& w, std::string_view field) {
  if (r == "user" || r == "human") return Role::kUser;
  if (r == "assistant" || r == "gpt" || r == "chatgpt" || r == "bard" || r == "model")
    return Role::kAssistant;
  if (r == "system") return Role::kSystem;
  w.fail(field, "unknown role '" + std::string(r) + "'");
}

// Chat records: an array of {role_key, text_key} objects.
void read_chat(jsonl::object& obj, const jsonl::Where& w, std::string_view array_key,
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
  if (!user) w.fail(array_key, "no user message");
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
    pairs = PyLiteral(qa).parse();
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
    if (kind == kArena) read_chat(obj, w, "messages", "role", "content", c);
    if (kind == kShareGpt) read_chat(obj, w, "conversations", "from", "value", c);
    if (kind == kLoogle) read_loogle(obj, w, c);
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

ConversationTokens tokenize_conversation(const Conversation& c, const Tokenizer& tok,
                                         const std::string& system_prompt) {
  ConversationTokens t;
  t.independent = c.independent_turns;
  auto header = [&](Role r, std::vector<uint32_t>& out) {
    tok.encode(r == Role::kUser        ? "<|im_start|>user\n"
               : r == Role::kAssistant ? "<|im_start|>assistant\n"
                                       : "<|im_start|>system\n",
               out);
  };
  auto footer = [&](std::vector<uint32_t>& out) { tok.encode("<|im_end|>\n", out); };
  auto message = [&](Role r, const std::string& text, std::vector<uint32_t>& out) {
    header(r, out);
    tok.encode(text, out);
    footer(out);
  };
  if (!system_prompt.empty()) message(Role::kSystem, system_prompt, t.tokens);

  if (c.independent_turns) {
    // The first message is the shared context (a document); then question/answer pairs.
    size_t k = 0;
    if (!c.messages.empty()) {
      header(c.messages[0].role, t.tokens);
      tok.encode(c.messages[0].text, t.tokens);
      tok.encode("\n\n", t.tokens);
      k = 1;
    }
    for (; k < c.messages.size(); ++k) {
      if (c.messages[k].role != Role::kUser) continue;
      std::vector<uint32_t> q;
      tok.encode(c.messages[k].text, q);
      footer(q);
      header(Role::kAssistant, q);
      std::vector<uint32_t> answer;
      if (k + 1 < c.messages.size() && c.messages[k + 1].role == Role::kAssistant)
        tok.encode(c.messages[k + 1].text, answer);
      t.questions.push_back(std::move(q));
      t.answer_tokens.push_back(static_cast<uint32_t>(answer.size()));
    }
    return t;
  }

  bool pending_user = false;
  auto close_turn = [&](const std::string* answer) {
    header(Role::kAssistant, t.tokens);
    t.prompt_end.push_back(static_cast<uint32_t>(t.tokens.size()));
    if (answer) tok.encode(*answer, t.tokens);
    t.answer_end.push_back(static_cast<uint32_t>(t.tokens.size()));
    t.answer_tokens.push_back(t.answer_end.back() - t.prompt_end.back());
    if (answer) footer(t.tokens);
    pending_user = false;
  };
  for (const Message& m : c.messages) {
    if (m.role == Role::kAssistant && pending_user) {
      close_turn(&m.text);
    } else {
      // User and system messages join the next prompt; an assistant message before any user
      // message (a conversation cut out of a longer one) is context.
      message(m.role, m.text, t.tokens);
      pending_user |= m.role == Role::kUser;
    }
  }
  if (pending_user) close_turn(nullptr);  // a last question without an answer
  return t;
}

uint64_t text_block_id(const uint32_t* tokens, size_t count) {
  uint64_t h = 0x74657874626c6bULL ^ count;  // "textblk"
  for (size_t i = 0; i < count; ++i) h = mix64(h ^ (uint64_t{tokens[i]} + 0x9e3779b97f4a7c15ULL));
  return h & ((uint64_t{1} << 53) - 1);
}

namespace {

// Raw block ids of `tokens`: full blocks, then a partial last block of its own tokens.
void block_ids(const uint32_t* tokens, size_t n, uint32_t B, size_t from_block,
               std::vector<uint64_t>& ids) {
  for (size_t b = from_block * B; b < n; b += B)
    ids.push_back(text_block_id(tokens + b, std::min<size_t>(B, n - b)));
}

}  // namespace

Trace build_text_trace(const std::vector<Conversation>& conversations, const Tokenizer& tok,
                       const TextTraceParams& p, uint64_t seed, std::vector<uint64_t>* raw_ids) {
  if (p.block_tokens == 0 || !(p.session_rate > 0) || !(p.think_mean_s >= 0) || p.max_active == 0 ||
      !(p.decode_ms >= 0))
    throw ConfigError(
        "trace build: block_tokens, session_rate and max_active must be positive, "
        "think time and decode time >= 0");
  const uint32_t B = p.block_tokens;
  size_t count = conversations.size();
  if (p.max_conversations) count = std::min<size_t>(count, p.max_conversations);
  std::vector<ConversationTokens> toks(count);
  for (size_t i = 0; i < count; ++i)
    toks[i] = tokenize_conversation(conversations[i], tok, p.system_prompt);

  // Times: Poisson starts; a conversation waits while max_active are active; each next turn
  // follows the answer's decoding and an exponential think time.
  Rng rng(seed);
  struct Event {
    Time time;
    uint32_t session, turn;
  };
  std::vector<Event> events;
  std::priority_queue<double, std::vector<double>, std::greater<double>> active_ends;
  double arrival = 0;
  for (uint32_t s = 0; s < count; ++s) {
    if (s > 0) arrival += rng.exponential(1.0 / p.session_rate);
    while (!active_ends.empty() && active_ends.top() <= arrival) active_ends.pop();
    double t = arrival;
    if (active_ends.size() >= p.max_active) {
      t = std::max(t, active_ends.top());
      active_ends.pop();
    }
    const ConversationTokens& ct = toks[s];
    for (uint32_t k = 0; k < ct.turns(); ++k) {
      events.push_back({static_cast<Time>(std::llround(t * kMicrosPerSecond)), s, k});
      t += ct.answer_tokens[k] * p.decode_ms * 1e-3;
      if (k + 1 < ct.turns()) t += rng.exponential(p.think_mean_s);
    }
    active_ends.push(t);
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.time != b.time         ? a.time < b.time
           : a.session != b.session ? a.session < b.session
                                    : a.turn < b.turn;
  });

  Trace trace;
  trace.block_tokens = B;
  std::vector<std::vector<uint64_t>> full(count);  // per nested conversation: its full blocks
  std::vector<uint64_t> ids;
  std::vector<uint32_t> prompt;
  for (const Event& e : events) {
    const ConversationTokens& ct = toks[e.session];
    ids.clear();
    uint32_t prompt_tokens;
    if (ct.independent) {
      prompt.assign(ct.tokens.begin(), ct.tokens.end());
      prompt.insert(prompt.end(), ct.questions[e.turn].begin(), ct.questions[e.turn].end());
      block_ids(prompt.data(), prompt.size(), B, 0, ids);
      prompt_tokens = static_cast<uint32_t>(prompt.size());
    } else {
      prompt_tokens = ct.prompt_end[e.turn];
      std::vector<uint64_t>& f = full[e.session];
      size_t whole = prompt_tokens / B;
      for (size_t b = f.size(); b < whole; ++b) f.push_back(text_block_id(&ct.tokens[b * B], B));
      ids.assign(f.begin(), f.begin() + whole);
      if (prompt_tokens % B) ids.push_back(text_block_id(&ct.tokens[whole * B], prompt_tokens % B));
    }
    if (raw_ids) raw_ids->insert(raw_ids->end(), ids.begin(), ids.end());
    trace.add_request(e.time, ids, prompt_tokens, ct.answer_tokens[e.turn], e.session, e.turn + 1,
                      0);
    if (e.turn + 1 == ct.turns()) full[e.session] = {};
  }
  return trace;
}

void write_conversation_jsonl(const Trace& trace, const std::string& path,
                              const std::vector<uint64_t>& raw_ids, const std::string& type) {
  if (raw_ids.size() != trace.blocks.size())
    throw Error("write_conversation_jsonl: raw ids do not match the trace's blocks");
  std::ofstream out(path);
  if (!out) throw ConfigError("cannot write '" + path + "'");
  const size_t n = trace.size();
  std::vector<int64_t> prev(n, -1);
  std::vector<uint8_t> continues(n, 0);
  std::unordered_map<SessionId, size_t> last;
  for (size_t r = 0; r < n; ++r) {
    if (trace.session[r] == kNoSession) continue;
    auto [it, fresh] = last.try_emplace(trace.session[r], r);
    if (!fresh) {
      prev[r] = static_cast<int64_t>(it->second);
      continues[it->second] = 1;
      it->second = r;
    }
  }
  std::string line;
  for (size_t r = 0; r < n; ++r) {
    line = fmt::format(
        R"({{"chat_id":{},"parent_chat_id":{},"timestamp":{:.6f},"input_length":{},)"
        R"("output_length":{},"type":{:?},"turn":{},"session":{},"continues":{},"hash_ids":[)",
        r, prev[r], double(trace.time[r]) / kMicrosPerSecond, trace.prompt_tokens[r],
        trace.output_tokens[r], type, trace.turn[r],
        trace.session[r] == kNoSession ? int64_t{-1} : int64_t{trace.session[r]},
        continues[r] ? "true" : "false");
    for (uint64_t a = trace.block_offset[r]; a < trace.block_offset[r + 1]; ++a)
      fmt::format_to(std::back_inserter(line), "{}{}", a == trace.block_offset[r] ? "" : ",",
                     raw_ids[a]);
    line += "]}\n";
    out << line;
  }
  if (!out) throw ConfigError("error writing '" + path + "'");
}

}  // namespace kvpolicy
