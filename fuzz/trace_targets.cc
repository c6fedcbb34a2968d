// Fuzz targets for every trace reader: the four JSONL and binary formats, the native cache (raw,
// and sealed so that what follows its checksum is fuzzed too), the text sources and `trace
// import`. An accepted trace must be valid and survive a round trip through the native format.
#include <cstring>
#include <fstream>
#include <sstream>

#include "fuzz_targets.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/import.h"
#include "kvpolicy/trace/text_trace.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::fuzz {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void expect_same(const Trace& a, const Trace& b) {
  bool same = a.block_tokens == b.block_tokens && a.time == b.time && a.session == b.session &&
              a.turn == b.turn && a.category == b.category && a.user == b.user &&
              a.prompt_tokens == b.prompt_tokens && a.output_tokens == b.output_tokens &&
              a.block_offset == b.block_offset && a.blocks == b.blocks &&
              a.category_names == b.category_names && a.continuation == b.continuation;
  if (!same) broken("an accepted trace reads back differently from its native cache");
}

// What every accepted trace must satisfy; any exception here is a finding, not a rejection.
void check_accepted(const Trace& t) {
  try {
    t.validate();
    compute_oracle(t);
    std::string copy = scratch_file("", ".kvtrace");
    write_native(t, copy);
    expect_same(t, read_trace(copy, "native", {}));
  } catch (const std::exception& e) {
    broken(std::string("an accepted trace fails a later step: ") + e.what());
  }
}

template <typename Read>
Verdict judge(Read&& read) {
  Trace t;
  try {
    t = read();
  } catch (const Error&) {
    return Verdict::kRejected;
  }
  check_accepted(t);
  return Verdict::kAccepted;
}

// Strict, then with --skip-bad-lines (which must never fail on a bad line, only count it).
Verdict read_format(std::string_view input, const std::string& format) {
  const std::string& path = scratch_file(input);
  Verdict strict = judge([&] { return read_trace(path, format, {}); });
  ReadOptions skip;
  skip.skip_bad_lines = true;
  judge([&] { return read_trace(path, format, skip); });
  return strict;
}

Trace small_trace() {
  ConversationParams p;
  p.sessions = 4;
  p.system_tokens_mean = 40;
  p.prompt_tokens_mean = 30;
  p.answer_tokens_mean = 30;
  return generate_conversation(p, 7);
}

std::vector<Seed> written(void (*write)(const Trace&, const std::string&)) {
  std::string path = scratch_file("", ".seed");
  write(small_trace(), path);
  std::string bytes = slurp(path);
  write(Trace{}, path);  // empty columns: a checksum once passed memcpy their null data()
  return {{"generated", bytes, Verdict::kAccepted},
          {"truncated", bytes.substr(0, bytes.size() - 3), Verdict::kRejected},
          {"empty", slurp(path), std::nullopt}};
}

Verdict read_native_sealed(std::string_view input) {
  std::string bytes(input);
  if (auto sum = native_trace_checksum(scratch_file(bytes)))
    std::memcpy(bytes.data() + kNativeChecksumOffset, &*sum, sizeof *sum);
  return read_format(bytes, "native");
}

std::string lines(std::initializer_list<std::string_view> ls) {
  std::string out;
  for (auto l : ls) (out += l) += '\n';
  return out;
}

std::vector<Seed> mooncake_seeds() {
  return {
      {"three",
       lines(
           {R"({"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [0, 1]})",
            R"({"timestamp": 10, "input_length": 1500, "output_length": 7, "hash_ids": [0, 1, 2]})",
            R"({"timestamp": 5, "input_length": 10, "output_length": 0, "hash_ids": [9]})"}),
       Verdict::kAccepted},
      {"time-overflow",
       lines({R"({"timestamp": 9.3e15, "input_length": 10, "output_length": 1, "hash_ids": [1]})"}),
       Verdict::kRejected},
      {"duplicate-key",
       lines(
           {R"({"timestamp": 1, "timestamp": 2, "input_length": 10, "output_length": 1, "hash_ids": [1]})"}),
       Verdict::kRejected},
      {"output-overflow",
       lines(
           {R"({"timestamp": 1, "input_length": 10, "output_length": 99999999999, "hash_ids": [1]})"}),
       Verdict::kRejected},
      {"bom",
       "\xEF\xBB\xBF" +
           lines({R"({"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [1]})"}),
       std::nullopt},
  };
}

std::string bailian_line(std::string_view chat, std::string_view parent, std::string_view time,
                         int turn) {
  return "{\"chat_id\": " + std::string(chat) + ", \"parent_chat_id\": " + std::string(parent) +
         ", \"timestamp\": " + std::string(time) +
         ", \"input_length\": 20, \"output_length\": 4, \"type\": \"text\", \"turn\": " +
         std::to_string(turn) + ", \"hash_ids\": [0, 1]}\n";
}

std::vector<Seed> bailian_seeds() {
  return {{"session", bailian_line("1", "-1", "0.5", 1) + bailian_line("2", "1", "3", 2),
           Verdict::kAccepted},
          {"int64-chat-id", bailian_line("9223372036854775807", "-1", "0", 1), Verdict::kAccepted},
          {"duplicate-chat-id", bailian_line("1", "-1", "0", 1) + bailian_line("1", "-1", "1", 1),
           Verdict::kRejected},
          {"time-overflow", bailian_line("1", "-1", "9.3e12", 1), Verdict::kRejected}};
}

std::vector<Seed> lmbench_seeds() {
  return {
      {"two",
       lines(
           {R"({"timestamp": "1000", "input_length": 300, "output_length": 3, "hash_ids": [0, 1]})",
            R"({"timestamp": "2000", "input_length": 300, "output_length": 4, "hash_ids": [0, 2]})"}),
       Verdict::kAccepted},
      {"integer-time",
       lines(
           {R"({"timestamp": 1000, "input_length": 300, "output_length": 3, "hash_ids": [0, 1]})"}),
       std::nullopt}};
}

std::vector<Seed> text_seeds(const std::string& source) {
  if (source == "chatbot-arena")
    return {
        {"chat",
         lines(
             {R"({"id": "a1", "messages": [{"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello! How can I help?"}, {"role": "user", "content": "A story, 2 lines."}, {"role": "assistant", "content": "Once a cat sat."}]})",
              R"({"id": "a2", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]})"}),
         Verdict::kAccepted},
        {"bad-role", lines({R"({"id": "d", "messages": [{"role": "wizard", "content": "x"}]})"}),
         Verdict::kRejected}};
  if (source == "sharegpt")
    return {
        {"chat",
         lines(
             {R"({"id": "x_1", "conversations": [{"from": "human", "value": "ok?"}, {"from": "gpt", "value": "done"}, {"from": "human", "value": "and?"}, {"from": "gpt", "value": "fin"}]})"}),
         Verdict::kAccepted}};
  std::string deep(40000, '[');
  return {
      {"qa",
       lines(
           {R"({"input": "A long document. It has sentences.", "title": "Doc", "qa_pairs": "[{'Q': \"What's in it?\", 'A': 'Sentences.', 'S': ['x']}, {'Q': 'Is it \\'long\\'?', 'A': {'<mask-0>': 'yes'}}]", "output": "None"})",
            R"({"input": "Another document.", "title": "Paper", "qa_pairs": "none", "output": "A summary."})"}),
       Verdict::kAccepted},
      {"deep-nesting", R"({"input": "d", "qa_pairs": ")" + deep + "\"}\n", Verdict::kRejected}};
}

Verdict read_text(std::string_view input, const std::string& source) {
  static const auto tokenizer = make_approx_tokenizer();
  const std::string& path = scratch_file(input);
  Verdict verdict = Verdict::kAccepted;
  for (bool skip : {false, true}) {
    TextReadReport report;
    std::vector<Conversation> conversations;
    try {
      conversations = read_conversations(path, source, skip, report);
    } catch (const Error&) {
      if (!skip) verdict = Verdict::kRejected;
      continue;
    }
    TextTraceParams params;
    params.block_tokens = 4;
    try {
      check_accepted(build_text_trace(conversations, *tokenizer, params, 1));
    } catch (const Error& e) {
      broken(std::string("accepted conversations do not build a trace: ") + e.what());
    }
  }
  return verdict;
}

// The first line says how to import the rest: "FORMAT UNIT MAPPING [PRESET [CHAT_TEMPLATE]]"
// (a MAPPING of "-" maps nothing beyond the preset).
Verdict read_import(std::string_view input) {
  static const auto tokenizer = make_approx_tokenizer();
  size_t eol = input.find('\n');
  if (eol == std::string_view::npos) return Verdict::kRejected;
  std::istringstream head{std::string(input.substr(0, eol))};
  ImportOptions opts;
  std::string map, preset, chat;
  head >> opts.format >> opts.time_unit >> map >> preset >> chat;
  if (map == "-") map.clear();
  if (!chat.empty()) opts.chat_template = chat;
  if (opts.format != "csv" && opts.format != "jsonl" && opts.format != "vllm-log" &&
      opts.format != "otlp-json")
    return Verdict::kRejected;
  opts.tokenizer = tokenizer.get();
  opts.block_tokens = 4;
  const std::string& path = scratch_file(input.substr(eol + 1), ".log");
  Verdict strict = Verdict::kRejected;
  for (bool skip : {false, true}) {
    opts.skip_bad_lines = skip;
    Verdict v = judge([&] {
      opts.map = parse_import_mapping(map, preset);
      ImportReport report;
      return import_trace(path, opts, report);
    });
    if (!skip) strict = v;
  }
  return strict;
}

std::vector<Seed> import_seeds() {
  return {
      {"csv-tokens",
       "csv s time=t,session=s,tokens=ids,output=o\nt,s,ids,o\n0,a,1 2 3 4 5,3\n1.5,a,1 2 3 4 5 6 "
       "7,2\n",
       std::nullopt},
      {"jsonl-text",
       "jsonl ms time=t,text=p\n{\"t\": 5, \"p\": \"hello there\"}\n{\"t\": 9, \"p\": \"hello "
       "there, again\"}\n",
       std::nullopt},
      {"iso-time",
       "csv iso time=t,hashes=h\nt,h\n2025-01-01T00:00:00Z,7 8\n2025-01-01T00:00:01.5+01:00,7 9\n",
       std::nullopt},
      // Gateway logs: field paths, chat messages, lines joined by id, hashes as strings.
      {"chat-join",
       "jsonl s output=u.n openai-chat plain\n"
       "{\"id\": \"a\", \"created\": 1, \"messages\": [{\"role\": \"system\", \"content\": "
       "\"be brief\"}, {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": "
       "\"hi there\"}, {\"type\": \"image_url\", \"image_url\": {\"url\": \"u\"}}]}]}\n"
       "{\"id\": \"a\", \"u\": {\"n\": 3}}\n{\"id\": \"b\", \"created\": 2, \"messages\": "
       "[{\"role\": \"user\", \"content\": \"hi\"}], \"u\": {\"n\": 1}}\n",
       Verdict::kAccepted},
      {"hash-strings",
       "jsonl s time=t,hashes=h.k[0]\n{\"t\": 1, \"h\": {\"k\": [[\"9f86d081884c7d659a2feaa0c55ad01"
       "5a3bf4f1b2b0b822cd15d6c15b0f00a08\", \"0x1f\", \"-3\", \"chunk\"]]}}\n",
       Verdict::kAccepted},
      {"vllm-log",
       "vllm-log s - vllm-log\nINFO 03-04 10:00:01 [l.py:1] Received request c1: prompt: 'hi\\n', "
       "params: P(n=1), prompt_token_ids: [1, 2, 3, 4, 5], lora_request: None.\n"
       "DEBUG 03-04 10:00:02 [l.py:2] Request c2 details: prompt: \"it's\", prompt_token_ids: "
       "None, prompt_embeds shape: None.\n",
       Verdict::kAccepted},
      {"otlp",
       "otlp-json s - otel-genai\n{\"resourceSpans\": [{\"scopeSpans\": [{\"spans\": "
       "[{\"spanId\": \"s\", \"startTimeUnixNano\": \"1700000000000000000\", \"attributes\": "
       "[{\"key\": \"gen_ai.usage.output_tokens\", \"value\": {\"intValue\": \"4\"}}, {\"key\": "
       "\"gen_ai.input.messages\", \"value\": {\"stringValue\": \"[{\\\"role\\\": "
       "\\\"user\\\", \\\"parts\\\": [{\\\"type\\\": \\\"text\\\", \\\"content\\\": "
       "\\\"hi\\\"}]}]\"}}]}]}]}]}\n",
       Verdict::kAccepted},
      {"gzip",
       [] {
         static const char gz[] =
             "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\x2b\xd1\xc9\x4c\x29\xe6\x32\xd0\x31\x54\x30"
             "\x52\x30\x56\x30\x51\x30\xe5\x32\x84\xb3\xcd\xb8\x00\x3e\x1f\xa8\x88\x1e\x00\x00\x00";
         return std::string("csv s time=t,tokens=ids\n") + std::string(gz, sizeof gz - 1);
       }(),
       Verdict::kAccepted}};
}

}  // namespace

void add_trace_targets(std::vector<FuzzTarget>& targets) {
  for (std::string format : {"mooncake", "bailian", "lmbench"}) {
    auto seeds = format == "mooncake"  ? mooncake_seeds
                 : format == "bailian" ? bailian_seeds
                                       : lmbench_seeds;
    targets.push_back({format, "the " + format + " JSONL reader",
                       [format](std::string_view in) { return read_format(in, format); }, seeds});
  }
  targets.push_back(
      {"oracle-general", "libCacheSim's oracleGeneral reader",
       [](std::string_view in) { return read_format(in, "oracle-general"); },
       [] {
         return written([](const Trace& t, const std::string& p) { write_oracle_general(t, p); });
       }});
  targets.push_back({"native", "the native reader: header, sizes, checksum",
                     [](std::string_view in) { return read_format(in, "native"); },
                     [] { return written(write_native); }});
  targets.push_back({"native-sealed", "the native reader past its checksum: contents",
                     read_native_sealed, [] { return written(write_native); }});
  for (std::string source : {"chatbot-arena", "sharegpt", "loogle"})
    targets.push_back({source, "the " + source + " text source, tokenized into a trace",
                       [source](std::string_view in) { return read_text(in, source); },
                       [source] { return text_seeds(source); }});
  targets.push_back(
      {"import", "`trace import`: mapping, CSV and JSONL logs, times", read_import, import_seeds});
}

}  // namespace kvpolicy::fuzz
