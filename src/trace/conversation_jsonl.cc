// A text trace written as Alibaba (qwen-bailian) JSONL, each turn linked to its session's
// previous one, so that the bailian reader reads the sessions back.
#include <fmt/format.h>

#include <iterator>
#include <unordered_map>

#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/trace/text_trace.h"

namespace kvpolicy {

void write_conversation_jsonl(const Trace& trace, const std::string& path,
                              const std::vector<uint64_t>& raw_ids, const std::string& type) {
  if (raw_ids.size() != trace.blocks.size())
    throw Error("write_conversation_jsonl: raw ids do not match the trace's blocks");
  // All or nothing: a killed build must not leave a shorter file that reads as a whole trace.
  AtomicOutput out(path);
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
        R"("output_length":{},"type":{},"turn":{},"session":{},"continues":{},"hash_ids":[)",
        r, prev[r], double(trace.time[r]) / kMicrosPerSecond, trace.prompt_tokens[r],
        trace.output_tokens[r], json_string(type), trace.turn[r],
        trace.session[r] == kNoSession ? int64_t{-1} : int64_t{trace.session[r]},
        continues[r] ? "true" : "false");
    for (uint64_t a = trace.block_offset[r]; a < trace.block_offset[r + 1]; ++a)
      fmt::format_to(std::back_inserter(line), "{}{}", a == trace.block_offset[r] ? "" : ",",
                     raw_ids[a]);
    line += "]";
    if (trace.has_continuation())
      fmt::format_to(std::back_inserter(line), R"(,"continuation":{:.6f})", trace.continuation[r]);
    if (trace.has_priority())
      fmt::format_to(std::back_inserter(line), R"(,"priority":{})", trace.priority[r]);
    if (trace.has_hints() && !trace.hints_of(r).empty()) {
      // Token ranges that start and end on block boundaries read back as the same blocks.
      line += R"(,"hints":[)";
      bool first = true;
      for (const RetentionHint& h : trace.hints_of(r)) {
        fmt::format_to(std::back_inserter(line), R"({}{{"first_token":{},"end_token":)",
                       first ? "" : ",", uint64_t{h.first_block} * trace.block_tokens);
        if (h.end_block == RetentionHint::kToEnd) {
          line += "null";
        } else {
          fmt::format_to(std::back_inserter(line), "{}",
                         uint64_t{h.end_block} * trace.block_tokens);
        }
        fmt::format_to(std::back_inserter(line), R"(,"priority":{},"duration_s":)", h.priority);
        if (h.duration == RetentionHint::kForever) {
          line += "null}";
        } else {
          fmt::format_to(std::back_inserter(line), "{:.6f}}}",
                         double(h.duration) / kMicrosPerSecond);
        }
        first = false;
      }
      line += "]";
    }
    line += "}\n";
    out.write(line);
  }
  out.commit();
}

}  // namespace kvpolicy
