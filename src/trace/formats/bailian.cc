// Alibaba qwen-bailian JSONL: chat_id, parent_chat_id (-1 = root), timestamp (s), input_length,
// output_length, type, turn, hash_ids (16-token blocks), optionally continuation (a classifier's
// probability, on every record or none). A session is the tree of chats under one
// root chat; the category is the request type.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "jsonl.h"

namespace kvpolicy {
namespace {

constexpr int64_t kNoParent = -1;

// Index of `type` in the trace's category names, adding it if new (before anything else of the
// record is appended, so a throw leaves the trace unchanged).
CategoryId category_of(Trace& t, std::string_view type, const jsonl::Where& w) {
  for (size_t c = 0; c < t.category_names.size(); ++c)
    if (t.category_names[c] == type) return static_cast<CategoryId>(c);
  if (t.category_names.size() >= std::numeric_limits<CategoryId>::max())
    w.fail("type", "too many distinct request types");
  t.category_names.emplace_back(type);
  return static_cast<CategoryId>(t.category_names.size() - 1);
}

// Gives every request the id of its root chat's session: follow parent_chat_id until a root
// (-1) or a chat absent from the file (its children still share one session). Session ids are
// provisional (dense in file order); the caller renumbers them after sorting.
void assign_sessions(Trace& t, const std::string& path, const std::vector<int64_t>& chat,
                     const std::vector<int64_t>& parent, const std::vector<uint64_t>& line) {
  const size_t n = chat.size();
  std::unordered_map<int64_t, uint32_t> index_of;
  index_of.reserve(n);
  for (size_t i = 0; i < n; ++i) index_of.emplace(chat[i], static_cast<uint32_t>(i));
  enum : uint8_t { kUnseen, kOnPath, kDone };
  std::vector<uint8_t> state(n, kUnseen);
  std::vector<int64_t> root(n);
  std::vector<uint32_t> path_nodes;
  for (size_t i = 0; i < n; ++i) {
    path_nodes.clear();
    size_t j = i;
    int64_t r;
    for (;;) {
      if (state[j] == kDone) {
        r = root[j];
        break;
      }
      if (state[j] == kOnPath)
        throw InputError(path, line[j], "parent_chat_id", "parent chats form a cycle");
      state[j] = kOnPath;
      path_nodes.push_back(static_cast<uint32_t>(j));
      if (parent[j] == kNoParent) {
        r = chat[j];
        break;
      }
      auto it = index_of.find(parent[j]);
      if (it == index_of.end()) {
        r = parent[j];
        break;
      }
      j = it->second;
    }
    for (uint32_t k : path_nodes) {
      root[k] = r;
      state[k] = kDone;
    }
  }
  std::unordered_map<int64_t, SessionId> session_of;
  for (size_t i = 0; i < n; ++i)
    t.session[i] =
        session_of.emplace(root[i], static_cast<SessionId>(session_of.size())).first->second;
}

Trace read_bailian(const std::string& path, const ReadOptions& opts, ReadReport& report) {
  Trace t;
  t.name = path;
  t.block_tokens = opts.block_tokens ? opts.block_tokens : 16;
  std::vector<uint64_t> ids;
  std::vector<int64_t> chat, parent;
  std::vector<uint64_t> line;
  std::unordered_map<int64_t, uint64_t> line_of_chat;  // a repeated chat_id names both lines
  std::vector<float> continuation;  // optional (written by `trace build --classifier`)
  uint64_t first_without = 0;       // a line without it, for the message
  std::vector<int32_t> priority;    // optional: a record without it has priority 0
  double last = 0;
  jsonl::for_each_record(path, opts, report, [&](jsonl::object& obj, const jsonl::Where& w) {
    jsonl::reject_duplicate_keys(obj, w);
    int64_t chat_id = jsonl::get_int(obj, "chat_id", w);
    if (chat_id < 0) w.fail("chat_id", "negative");
    if (auto seen = line_of_chat.find(chat_id); seen != line_of_chat.end())
      w.fail("chat_id", fmt::format("chat_id {} is also on line {}; each request needs its own",
                                    chat_id, seen->second));
    int64_t parent_id = jsonl::get_int(obj, "parent_chat_id", w);
    if (parent_id < kNoParent) w.fail("parent_chat_id", "expected -1 (none) or a chat id");
    if (parent_id == chat_id) w.fail("parent_chat_id", "a chat cannot be its own parent");
    double sec = jsonl::get_double(obj, "timestamp", w);
    if (sec < 0) w.fail("timestamp", "negative");
    uint64_t input = jsonl::get_uint(obj, "input_length", w);
    if (input > UINT32_MAX) w.fail("input_length", "too large");
    uint64_t output = jsonl::get_uint(obj, "output_length", w);
    if (output > UINT32_MAX) w.fail("output_length", "too large");
    std::string_view type = jsonl::get_string(obj, "type", w);
    uint64_t turn = jsonl::get_uint(obj, "turn", w);
    if (turn == 0 || turn > UINT32_MAX) w.fail("turn", "expected a turn number from 1");
    jsonl::get_uint_array(obj, "hash_ids", w, ids);
    // Alibaba's hash_ids are of 16-token blocks; another --block-tokens relabels them.
    if (!opts.block_tokens) jsonl::check_block_count(ids.size(), input, t.block_tokens, w);
    double p_continues = -1;
    if (jsonl::has_field(obj, "continuation")) {
      p_continues = jsonl::get_double(obj, "continuation", w);
      if (!(p_continues >= 0 && p_continues <= 1))
        w.fail("continuation", "expected a probability in [0, 1]");
    }
    int64_t prio = 0;
    if (jsonl::has_field(obj, "priority")) {
      prio = jsonl::get_int(obj, "priority", w);
      if (prio < INT32_MIN || prio > INT32_MAX) w.fail("priority", "expected a 32-bit integer");
    }
    std::vector<RetentionHint> hints;
    jsonl::get_hints(obj, w, t.block_tokens, hints);
    if (!opts.sort_unsorted && !t.time.empty() && sec < last)
      w.fail("timestamp", "earlier than the line before");
    CategoryId cat = category_of(t, type, w);
    last = sec;
    t.add_request(jsonl::to_micros(sec, 1e6, w, "timestamp"), ids, static_cast<uint32_t>(input),
                  static_cast<uint32_t>(output), kNoSession, static_cast<uint32_t>(turn), cat);
    if (p_continues >= 0) {
      continuation.resize(t.size() - 1, -1.0f);  // earlier records without it
      continuation.push_back(static_cast<float>(p_continues));
    } else if (!first_without) {
      first_without = w.line;
    }
    if (prio != 0 || !priority.empty()) {
      priority.resize(t.size() - 1, 0);
      priority.push_back(static_cast<int32_t>(prio));
    }
    jsonl::append_request_hints(t, hints);
    line_of_chat.emplace(chat_id, w.line);
    chat.push_back(chat_id);
    parent.push_back(parent_id);
    line.push_back(w.line);
  });
  // The column is all or nothing: a file where only some records carry it is refused.
  if (!continuation.empty()) {
    if (first_without)
      throw InputError(path, first_without, "continuation",
                       "missing here but present on other records");
    t.continuation = std::move(continuation);
  }
  if (!priority.empty()) {
    priority.resize(t.size(), 0);
    t.priority = std::move(priority);
  }
  assign_sessions(t, path, chat, parent, line);
  // Time counts from the first request.
  Time first = *std::min_element(t.time.begin(), t.time.end());
  for (Time& x : t.time) x -= first;
  report.sorted = t.sort_by_time();
  // Number sessions in order of their first request.
  std::vector<SessionId> renumber(t.size(), kNoSession);
  SessionId next = 0;
  for (SessionId& s : t.session) {
    if (renumber[s] == kNoSession) renumber[s] = next++;
    s = renumber[s];
  }
  return t;
}

TraceFormatRegistrar registrar({"bailian",
                                "Alibaba qwen-bailian JSONL (chat_id, parent_chat_id, timestamp s, "
                                "input_length, output_length, type, turn, hash_ids; 16-token "
                                "blocks; sessions from parent chats, categories from type)",
                                read_bailian});

}  // namespace
}  // namespace kvpolicy
