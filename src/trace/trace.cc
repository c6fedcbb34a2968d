#include "kvpolicy/trace/trace.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/input_file.h"
#include "kvpolicy/core/key_map.h"
#include "kvpolicy/core/time_range.h"
#include "kvpolicy/trace/input_bytes.h"

namespace kvpolicy {

void Trace::add_request(Time t, std::span<const uint64_t> ids, uint32_t prompt_tok,
                        uint32_t output_tok, SessionId s, uint32_t turn_no, CategoryId cat,
                        uint32_t user_id) {
  BlockKey key = kRootKey;
  for (uint64_t id : ids) {
    key = chain_key(key, id);
    blocks.push_back(key);
  }
  time.push_back(t);
  session.push_back(s);
  turn.push_back(turn_no);
  category.push_back(cat);
  user.push_back(user_id);
  prompt_tokens.push_back(prompt_tok);
  output_tokens.push_back(output_tok);
  block_offset.push_back(blocks.size());
}

void Trace::add_request_keys(Time t, std::span<const BlockKey> keys, uint32_t prompt_tok,
                             uint32_t output_tok, SessionId s, uint32_t turn_no, CategoryId cat,
                             uint32_t user_id) {
  blocks.insert(blocks.end(), keys.begin(), keys.end());
  time.push_back(t);
  session.push_back(s);
  turn.push_back(turn_no);
  category.push_back(cat);
  user.push_back(user_id);
  prompt_tokens.push_back(prompt_tok);
  output_tokens.push_back(output_tok);
  block_offset.push_back(blocks.size());
}

void Trace::reserve(size_t requests, size_t block_accesses) {
  time.reserve(requests);
  session.reserve(requests);
  turn.reserve(requests);
  category.reserve(requests);
  user.reserve(requests);
  prompt_tokens.reserve(requests);
  output_tokens.reserve(requests);
  block_offset.reserve(requests + 1);
  blocks.reserve(block_accesses);
}

void Trace::clear_requests() {
  time.clear();
  session.clear();
  turn.clear();
  category.clear();
  user.clear();
  prompt_tokens.clear();
  output_tokens.clear();
  block_offset.assign(1, 0);
  blocks.clear();
  continuation.clear();
  priority.clear();
  hints.clear();
  hint_offset.clear();
}

void Trace::set_hints(const std::vector<std::vector<RetentionHint>>& per_request) {
  hints.clear();
  hint_offset.assign(1, 0);
  for (const auto& list : per_request) {
    hints.insert(hints.end(), list.begin(), list.end());
    hint_offset.push_back(hints.size());
  }
}

bool Trace::sort_by_time() {
  if (std::is_sorted(time.begin(), time.end())) return false;
  std::vector<uint32_t> order(size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return time[a] < time[b]; });
  Trace sorted;
  std::vector<std::vector<RetentionHint>> sorted_hints;
  sorted.name = name;
  sorted.block_tokens = block_tokens;
  sorted.category_names = category_names;
  sorted.assumptions = assumptions;
  sorted.reserve(size(), blocks.size());
  for (uint32_t r : order) {
    sorted.add_request_keys(time[r], prompt(r), prompt_tokens[r], output_tokens[r], session[r],
                            turn[r], category[r], user[r]);
    if (has_continuation()) sorted.continuation.push_back(continuation[r]);
    if (has_priority()) sorted.priority.push_back(priority[r]);
    if (has_hints()) sorted_hints.emplace_back(hints_of(r).begin(), hints_of(r).end());
  }
  if (has_hints()) sorted.set_hints(sorted_hints);
  *this = std::move(sorted);
  return true;
}

void Trace::validate() const {
  size_t n = size();
  if (session.size() != n || turn.size() != n || category.size() != n || user.size() != n ||
      prompt_tokens.size() != n || output_tokens.size() != n || block_offset.size() != n + 1)
    throw Error("trace '" + name + "': column lengths differ");
  if (has_continuation()) {
    if (continuation.size() != n)
      throw Error("trace '" + name + "': the continuation column has " +
                  std::to_string(continuation.size()) + " values for " + std::to_string(n) +
                  " requests");
    for (size_t r = 0; r < n; ++r)
      if (!(continuation[r] >= 0 && continuation[r] <= 1))
        throw Error("trace '" + name + "': request " + std::to_string(r) +
                    "'s continuation probability is not in [0, 1]");
  }
  if (has_priority() && priority.size() != n)
    throw Error("trace '" + name + "': the priority column has " + std::to_string(priority.size()) +
                " values for " + std::to_string(n) + " requests");
  if (has_hints()) {
    if (hint_offset.size() != n + 1 || hint_offset.back() != hints.size())
      throw Error("trace '" + name + "': the hints column does not cover its requests");
    for (size_t r = 0; r < n; ++r)
      for (const RetentionHint& h : hints_of(r))
        if (h.priority < 0 || h.priority > 100 || h.first_block >= h.end_block || h.duration < 0)
          throw Error("trace '" + name + "': request " + std::to_string(r) +
                      " has a retention hint with a priority outside 0-100, an empty range or "
                      "a negative duration");
  }
  if (block_offset.back() != blocks.size())
    throw Error("trace '" + name + "': block offsets do not cover the block array");
  for (size_t r = 0; r < n; ++r) {
    if (block_offset[r] > block_offset[r + 1])
      throw Error("trace '" + name + "': request " + std::to_string(r) + " has negative length");
    if (r > 0 && time[r] < time[r - 1])
      throw Error("trace '" + name + "': request " + std::to_string(r) + " goes back in time");
    if (turn[r] == 0)
      throw Error("trace '" + name + "': request " + std::to_string(r) + " has turn 0");
  }
  // Times in [0, 2^62) us, as every reader keeps them (types.h): policies add intervals to them.
  if (n && !(valid_time(time.front()) && valid_time(time.back())))
    throw Error("trace '" + name + "': times must lie in [0, 2^62) microseconds");
  if (block_tokens == 0) throw Error("trace '" + name + "': block size 0");
}

namespace {
// How far ahead whole-trace passes fetch the slots of the keys they will look up.
constexpr size_t kKeysAhead = 16;
}  // namespace

size_t count_unique_blocks(const Trace& trace) {
  KeyMap seen(trace.blocks.size() / 2 + 16);
  const std::vector<BlockKey>& keys = trace.blocks;
  for (size_t a = 0; a < keys.size(); ++a) {
    if (a + kKeysAhead < keys.size()) seen.prefetch(keys[a + kKeysAhead]);
    seen.get_or_insert(keys[a], 0);
  }
  return seen.size();
}

RequestView request_view(const Trace& trace, size_t r) {
  RequestView v;
  v.index = static_cast<RequestIndex>(r);
  v.time = trace.time[r];
  v.session = trace.session[r];
  v.turn = trace.turn[r];
  v.category = trace.category[r];
  v.prompt_tokens = trace.prompt_tokens[r];
  v.output_tokens = trace.output_tokens[r];
  v.first_access = trace.block_offset[r];
  v.blocks = trace.prompt(r);
  if (trace.has_continuation()) v.continuation = trace.continuation[r];
  if (trace.has_priority()) v.priority = trace.priority[r];
  v.hints = trace.hints_of(r);
  return v;
}

OracleView Oracle::view(const Trace& trace) const {
  OracleView v;
  v.next_request = next_request;
  v.next_in_session = next_in_session;
  v.request_time = trace.time;
  v.prompt_tokens = trace.prompt_tokens;
  for (size_t r = 0; r < trace.size(); ++r)
    v.longest_prompt_blocks = std::max(v.longest_prompt_blocks, trace.prompt_blocks(r));
  return v;
}

Oracle compute_oracle(const Trace& trace) {
  Oracle o;
  size_t n = trace.size();
  o.next_request.assign(trace.blocks.size(), Oracle::kNoNext);
  if (trace.blocks.size() >= Oracle::kNoNext) throw Error("oracle: over 2^32 - 1 block accesses");
  // One pass: a key's previous access a' points to this request. Until a later access of its
  // key comes, next_request[a'] holds a''s own request.
  KeyMap last(trace.blocks.size() / 2 + 16);  // key -> its latest access so far
  for (size_t r = 0; r < n; ++r) {
    for (uint64_t a = trace.block_offset[r]; a < trace.block_offset[r + 1]; ++a) {
      if (a + kKeysAhead < trace.blocks.size()) last.prefetch(trace.blocks[a + kKeysAhead]);
      bool inserted;
      uint32_t& prev = last.get_or_insert(trace.blocks[a], static_cast<uint32_t>(a), &inserted);
      if (!inserted) {
        o.next_request[prev] = static_cast<uint32_t>(r);
        prev = static_cast<uint32_t>(a);
      }
      o.next_request[a] = static_cast<uint32_t>(r);
    }
  }
  last.for_each_value([&](uint32_t latest) { o.next_request[latest] = Oracle::kNoNext; });
  o.next_in_session.assign(n, Oracle::kNoNext);
  KeyMap last_of_session(1024);
  for (size_t r = n; r-- > 0;) {
    if (trace.session[r] == kNoSession) continue;
    bool inserted;
    uint32_t& v =
        last_of_session.get_or_insert(trace.session[r], static_cast<uint32_t>(r), &inserted);
    if (!inserted) {
      o.next_in_session[r] = v;
      v = static_cast<uint32_t>(r);
    }
  }
  return o;
}

Trace repeat_with_fresh_keys(const Trace& base, size_t copies) {
  if (copies == 0) throw ConfigError("repeat: at least one copy");
  Trace t;
  t.name = copies == 1 ? base.name
                       : base.name + " x" + std::to_string(copies) + " (fresh keys per copy)";
  t.block_tokens = base.block_tokens;
  t.category_names = base.category_names;
  t.assumptions = base.assumptions;
  t.reserve(base.size() * copies, base.num_block_accesses() * copies);
  Time span = (base.size() ? base.time.back() : 0) + kMicrosPerSecond;
  SessionId sessions = 0;
  for (SessionId s : base.session)
    if (s != kNoSession) sessions = std::max(sessions, s + 1);
  std::vector<BlockKey> keys;
  for (size_t c = 0; c < copies; ++c) {
    BlockKey root = chain_key(kRootKey, c);
    for (size_t r = 0; r < base.size(); ++r) {
      keys.clear();
      BlockKey k = root;
      for (BlockKey orig : base.prompt(r)) keys.push_back(k = chain_key(k, orig));
      SessionId s = base.session[r] == kNoSession
                        ? kNoSession
                        : static_cast<SessionId>(base.session[r] + c * sessions);
      t.add_request_keys(base.time[r] + static_cast<Time>(c) * span, keys, base.prompt_tokens[r],
                         base.output_tokens[r], s, base.turn[r], base.category[r], base.user[r]);
      if (base.has_continuation()) t.continuation.push_back(base.continuation[r]);
      if (base.has_priority()) t.priority.push_back(base.priority[r]);
    }
  }
  if (base.has_hints()) {
    std::vector<std::vector<RetentionHint>> per_request;
    for (size_t c = 0; c < copies; ++c)
      for (size_t r = 0; r < base.size(); ++r)
        per_request.emplace_back(base.hints_of(r).begin(), base.hints_of(r).end());
    t.set_hints(per_request);
  }
  return t;
}

TraceFormatRegistry& TraceFormatRegistry::instance() {
  static TraceFormatRegistry registry;
  return registry;
}

void TraceFormatRegistry::add(TraceFormat f) { formats_.push_back(std::move(f)); }

const TraceFormat& TraceFormatRegistry::get(const std::string& name) const {
  for (auto& f : formats_)
    if (f.name == name) return f;
  std::string known;
  for (auto& f : formats_) known += (known.empty() ? "" : ", ") + f.name;
  throw ConfigError("unknown trace format '" + name + "' (known: " + known + ")");
}

void require_trace_file(const std::string& path) { require_regular_file(path, "traces"); }

// The first record of a JSONL trace, parsed, if it is a JSON object.
static bool first_record(const std::string& line, simdjson::dom::parser& parser,
                         simdjson::dom::object& obj) {
  simdjson::dom::element doc;
  return !parser.parse(line).get(doc) && !doc.get_object().get(obj);
}

std::string detect_format(const std::string& path) {
  require_trace_file(path);
  auto ends_with = [&](const char* suffix) {
    std::string s(suffix);
    return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  if (ends_with(".kvtrace")) return "native";
  if (ends_with(".oracleGeneral") || ends_with(".oracle-general") || ends_with(".bin"))
    return "oracle-general";
  std::string line;
  if (input_needs_decoding(path)) {
    // gzip or zstd (the JSONL readers decompress them): the first line of what it holds.
    std::string data = read_input_head(path, size_t{1} << 20);
    line = data.substr(0, data.find('\n'));
  } else {
    std::ifstream in(path);
    if (!in) throw InputError(path, 0, "", "cannot open file");
    std::getline(in, line);
  }
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte-order mark
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  simdjson::dom::element ts;
  double number = 0;
  if (first_record(line, parser, obj)) {
    if (!obj.at_key("chat_id").error()) return "bailian";
    if (!obj.at_key("hash_ids").error()) {
      // LMBench and Mooncake share their field names; LMBench's timestamp is absolute
      // nanoseconds (about 1.7e18, a string or an integer), Mooncake's milliseconds from the
      // start of the trace (1e15 ms would be 31,000 years).
      if (!obj.at_key("timestamp").get(ts) &&
          (ts.is_string() || (!ts.get_double().get(number) && number >= 1e15)))
        return "lmbench";
      return "mooncake";
    }
  } else {
    // A malformed first record: guess from its text, so the reader can say what is wrong.
    if (line.find("\"chat_id\"") != std::string::npos) return "bailian";
    if (line.find("\"timestamp\": \"") != std::string::npos ||
        line.find("\"timestamp\":\"") != std::string::npos)
      return "lmbench";
    if (line.find("\"hash_ids\"") != std::string::npos) return "mooncake";
  }
  throw InputError(path, 1, "", "cannot tell the trace format; pass --format");
}

Trace read_trace(const std::string& path, const std::string& format, const ReadOptions& opts,
                 ReadReport* report) {
  require_trace_file(path);
  std::string fmt = format.empty() || format == "auto" ? detect_format(path) : format;
  ReadReport local;
  Trace t = TraceFormatRegistry::instance().get(fmt).read(path, opts, report ? *report : local);
  t.validate();
  return t;
}

}  // namespace kvpolicy
