// `trace import` of engines' and gateways' logs as they are written: gzip, zstd and standard
// input, JSONL field paths, OpenAI chat messages, request/response lines joined by id, block
// hashes as strings, presets (docs/formats.md).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>

#include "chat_template.h"
#include "import_hashes.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/import.h"
#include "kvpolicy/trace/input_bytes.h"
#include "kvpolicy/trace/text_trace.h"
#include "kvpolicy/trace/trace_io.h"
#include "trace/import_logs_util.h"
#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

using testing::input_error;
using testing::write_file;

using testing::import;
using testing::keys;
using testing::Opts;

std::string gzip_member(const std::string& s) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, s.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  z.avail_in = static_cast<uInt>(s.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string zstd_frame(const std::string& s) {
  std::string out(ZSTD_compressBound(s.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), s.data(), s.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

// Runs f with standard input read from `path`.
template <typename F>
void with_stdin(const std::string& path, F&& f) {
  int saved = dup(0), fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  dup2(fd, 0);
  close(fd);
  clearerr(stdin);
  f();
  dup2(saved, 0);
  close(saved);
  clearerr(stdin);
}

const std::string kCsv =
    "ts,ids,out\n1,1 2 3 4 5 6,3\n2,1 2 3 4 9,4\n3,7 8,5\n4,1 2 3 4 5 6 10 11 12,6\n";

TEST(ImportLogs, GzipZstdAndStdinGiveThePlainFilesTrace) {
  Opts o{"time=ts,tokens=ids,output=out"};
  std::string plain = write_file("log.csv", kCsv);
  ImportReport rp, rg, rz, rs;
  Trace want = import(plain, o, &rp);
  EXPECT_EQ(rp.compression, "none");
  size_t half = kCsv.size() / 2;
  // Several gzip members (cat a.gz b.gz) and several zstd frames; names that say nothing.
  std::string gz =
      write_file("log.bin", gzip_member(kCsv.substr(0, half)) + gzip_member(kCsv.substr(half)));
  std::string zst =
      write_file("log.data", zstd_frame(kCsv.substr(0, half)) + zstd_frame(kCsv.substr(half)));
  Trace g = import(gz, o, &rg), z = import(zst, o, &rz);
  EXPECT_EQ(rg.compression, "gzip");
  EXPECT_EQ(rz.compression, "zstd");
  EXPECT_EQ(rg.format, "csv");
  Trace s;
  with_stdin(gz, [&] { s = import("-", o, &rs); });
  for (const Trace* t : {&g, &z, &s}) {
    ASSERT_EQ(t->size(), want.size());
    for (size_t r = 0; r < want.size(); ++r) EXPECT_EQ(keys(*t, r), keys(want, r));
    EXPECT_EQ(t->output_tokens, want.output_tokens);
    EXPECT_EQ(t->time, want.time);
  }
  EXPECT_EQ(s.name, "<stdin>");
}

TEST(ImportLogs, TruncatedOrCorruptStreamsAreErrorsNamingTheFile) {
  Opts o{"time=ts,tokens=ids"};
  std::string gz = gzip_member(kCsv), zst = zstd_frame(kCsv);
  std::string cut_gz = write_file("cut.csv.gz", gz.substr(0, gz.size() / 2));
  EXPECT_EQ(std::string(input_error([&] { import(cut_gz, o); }).what()),
            cut_gz + ": truncated gzip data: the input ends inside a gzip member");
  std::string cut_zst = write_file("cut.csv.zst", zst.substr(0, zst.size() - 3));
  EXPECT_EQ(std::string(input_error([&] { import(cut_zst, o); }).what()),
            cut_zst + ": truncated zstd data: the input ends inside a zstd frame");
  std::string bad = gz;
  for (size_t i = 12; i < 20 && i < bad.size(); ++i) bad[i] = char(0xff);
  std::string bad_gz = write_file("bad.csv.gz", bad);
  std::string what = input_error([&] { import(bad_gz, o); }).what();
  EXPECT_EQ(what.rfind(bad_gz + ": corrupt gzip data", 0), 0u) << what;
  std::string junk = write_file("junk.csv.gz", gz + "garbage");
  what = input_error([&] { import(junk, o); }).what();
  EXPECT_EQ(what.rfind(junk + ": corrupt gzip data", 0), 0u) << what;
}

TEST(ImportLogs, GenericJsonlTracesReadCompressed) {
  std::string lines;
  for (int i = 0; i < 5; ++i)
    lines += "{\"timestamp\": " + std::to_string(i * 100) +
             ", \"input_length\": 1024, \"output_length\": 3, \"hash_ids\": [1, " +
             std::to_string(2 + i % 2) + "]}\n";
  std::string plain = write_file("mooncake.jsonl", lines);
  std::string gz = write_file("mooncake.jsonl.gz", gzip_member(lines));
  ReadOptions ro;
  Trace a = read_trace(plain, "auto", ro), b = read_trace(gz, "auto", ro);
  ASSERT_EQ(a.size(), 5u);
  ASSERT_EQ(b.size(), a.size());
  for (size_t r = 0; r < a.size(); ++r) EXPECT_EQ(keys(a, r), keys(b, r));
}

TEST(ImportLogs, FieldPathsReadNestedFieldsAndTheLiteralKeyWins) {
  std::string log = write_file(
      "paths.jsonl",
      "{\"t\": 1, \"messages\": [{\"role\": \"user\", \"content\": \"one two three four five\"}],"
      " \"usage\": {\"completion_tokens\": 7}, \"metadata\": {\"user_id\": \"u9\"},"
      " \"choices\": [{\"message\": {\"content\": \"an answer\"}}], \"usage.completion_tokens\": "
      "3}\n"
      "{\"t\": 2, \"messages\": [{\"role\": \"user\", \"content\": \"x\"}, {\"role\": \"user\","
      " \"content\": \"one two three four five\"}], \"usage\": {\"completion_tokens\": 8},"
      " \"metadata\": {\"user_id\": \"u8\"}, \"choices\": [{\"message\": {\"content\": "
      "\"b\"}}]}\n");
  // messages[-1].content: the last message's text, so both rows have the same prompt.
  Trace t = import(log,
                   {"time=t,text=messages[-1].content,output=usage.completion_tokens,"
                    "user=metadata.user_id"},
                   nullptr);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(keys(t, 0), keys(t, 1));
  EXPECT_EQ(t.output_tokens[0], 3u);  // the literal key "usage.completion_tokens" wins
  EXPECT_EQ(t.output_tokens[1], 8u);
  EXPECT_EQ(t.user[0], 0u);
  EXPECT_EQ(t.user[1], 1u);
  Trace c = import(log, {"time=t,text=messages[0].content,output_text=choices[0].message.content"});
  EXPECT_GT(c.output_tokens[0], c.output_tokens[1]);

  std::string what = input_error([&] {
                       import(log, {"time=t,text=messages[0].content,output=usage.prompt_tokens"});
                     }).what();
  EXPECT_EQ(what, log + ":1: field 'usage.prompt_tokens': 'usage' has no 'prompt_tokens'");
  what = input_error([&] { import(log, {"time=t,text=messages[2].content"}); }).what();
  EXPECT_EQ(what, log + ":1: field 'messages[2].content': 'messages' has 1 item(s), no [2]");
  what = input_error([&] { import(log, {"time=t,text=usage[0]"}); }).what();
  EXPECT_EQ(what, log + ":1: field 'usage[0]': 'usage' is not an array");
  what = input_error([&] { import(log, {"time=t,text=meta.user_id"}); }).what();
  EXPECT_EQ(what,
            log +
                ":1: field 'meta.user_id': missing: no key 'meta.user_id' and no 'meta' in the "
                "record");
}

// A conversation logged with its history: each turn's messages hold the earlier turns, which the
// import uses as they are (never prepending them again).
std::string chat_log() {
  std::string sys = "{\"role\": \"system\", \"content\": \"You are terse and exact.\"}";
  std::string u1 = "{\"role\": \"user\", \"content\": \"What is a KV cache for?\"}";
  std::string a1 = "{\"role\": \"assistant\", \"content\": \"Reusing attention keys.\"}";
  std::string u2 =
      "{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"And a prefix?\"}]}";
  std::string a2 = "{\"role\": \"assistant\", \"content\": \"Shared leading tokens.\"}";
  std::string u3 = "{\"role\": \"user\", \"content\": \"Why blocks of sixteen tokens?\"}";
  auto line = [](int t, const std::string& msgs, int out) {
    return "{\"id\": \"r" + std::to_string(t) + "\", \"created\": " + std::to_string(t) +
           ", \"conversation_id\": \"c1\", \"messages\": [" + msgs +
           "], \"usage\": {\"completion_tokens\": " + std::to_string(out) + "}}\n";
  };
  return line(1, sys + "," + u1, 5) + line(2, sys + "," + u1 + "," + a1 + "," + u2, 6) +
         line(3, sys + "," + u1 + "," + a1 + "," + u2 + "," + a2 + "," + u3, 7);
}

TEST(ImportLogs, ChatTurnsExtendTheTurnBeforeAndRepeatNoBlock) {
  std::string log = write_file("chat.jsonl", chat_log());
  for (const std::string chat : {"chatml", "llama3", "plain", "<s>{role}|{content}</s>\\n"}) {
    Opts o{"", "openai-chat", chat, 4};
    o.map = "session=conversation_id";
    Trace t = import(log, o);
    ASSERT_EQ(t.size(), 3u) << chat;
    EXPECT_EQ(t.turn[2], 3u);
    for (size_t r = 1; r < 3; ++r) {
      auto before = keys(t, r - 1), now = keys(t, r);
      // Every full block of the turn before is shared (its partial last block is not). ChatML's
      // generation prompt ends in a newline, so the next turn's tokens split there exactly; the
      // others end in a space or a mark that the tokenizer may join with the answer's first word.
      size_t full = (t.prompt_tokens[r - 1] - (chat == "chatml" ? 0 : 1)) / 4;
      ASSERT_GT(now.size(), before.size()) << chat;
      for (size_t i = 0; i < full; ++i) EXPECT_EQ(now[i], before[i]) << chat << " turn " << r + 1;
      std::sort(now.begin(), now.end());
      EXPECT_EQ(std::adjacent_find(now.begin(), now.end()), now.end()) << chat;
    }
  }
}

TEST(ImportLogs, ChatTemplatesRenderAsDocumented) {
  std::vector<ChatMessage> m = {{"system", " Be brief. "}, {"user", "Hi"}};
  EXPECT_EQ(render_chat(parse_chat_template("chatml"), m),
            "<|im_start|>system\n Be brief. <|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(render_chat(parse_chat_template("llama3"), m),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(render_chat(parse_chat_template("plain"), m),
            "system:  Be brief. \n\nuser: Hi\n\nassistant: ");
  EXPECT_EQ(render_chat(parse_chat_template("[{role}] {content}\\n"), m),
            "[system]  Be brief. \n[user] Hi\n[assistant] ");
  EXPECT_THROW(parse_chat_template("{role} only"), ConfigError);
  EXPECT_THROW(parse_chat_template("{content}{content}"), ConfigError);

  // In CSV, a cell holding the messages' JSON reads the same.
  std::string csv = write_file(
      "chat.csv", "t,m\n0,\"[{\"\"role\"\": \"\"user\"\", \"\"content\"\": \"\"Hi\"\"}]\"\n");
  std::string json =
      write_file("chat.jsonl", "{\"t\": 0, \"m\": [{\"role\": \"user\", \"content\": \"Hi\"}]}\n");
  EXPECT_EQ(keys(import(csv, {"time=t,messages=m"}), 0),
            keys(import(json, {"time=t,messages=m"}), 0));

  // The import tokenizes exactly that text: the same keys as the rendered text given as text.
  std::string chat = write_file(
      "one.jsonl",
      "{\"t\": 0, \"m\": [{\"role\": \"system\", \"content\": \" Be brief. \"}, {\"role\": "
      "\"user\", \"content\": [{\"type\": \"text\", \"text\": \"Hi\"}, {\"type\": \"image_url\", "
      "\"image_url\": {\"url\": \"http://x/1.png\"}}]}]}\n");
  std::string text = write_file(
      "one-text.jsonl",
      "{\"t\": 0, \"p\": \"<|im_start|>system\\n Be brief. <|im_end|>\\n<|im_start|>user\\nHi\\n"
      "<|image_url " +
          [] {
            // The placeholder's hash: FNV-1a of the part's minified JSON.
            std::string part =
                "{\"type\":\"image_url\",\"image_url\":{\"url\":\"http://x/1.png\"}}";
            uint64_t h = 14695981039346656037ull;
            for (unsigned char c : part) h = (h ^ c) * 1099511628211ull;
            char buf[17];
            snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
            return std::string(buf);
          }() +
          "|><|im_end|>\\n<|im_start|>assistant\\n\"}\n");
  Trace a = import(chat, {"time=t,messages=m"}), b = import(text, {"time=t,text=p"});
  EXPECT_EQ(keys(a, 0), keys(b, 0));
  EXPECT_EQ(a.prompt_tokens, b.prompt_tokens);
}

TEST(ImportLogs, RequestAndResponseLinesJoinById) {
  std::string log =
      write_file("join.jsonl",
                 "{\"id\": \"a\", \"ts\": 10, \"prompt\": [1, 2, 3, 4, 5]}\n"
                 "{\"id\": \"b\", \"ts\": 11, \"prompt\": [1, 2, 3, 4, 9]}\n"
                 "{\"id\": \"b\", \"ts\": 19, \"usage\": {\"completion_tokens\": 4}}\n"
                 "{\"id\": \"z\", \"ts\": 20, \"usage\": {\"completion_tokens\": 1}}\n"
                 "{\"id\": \"a\", \"ts\": 21, \"usage\": {\"completion_tokens\": 3}}\n");
  Opts o{"id=id,time=ts,tokens=prompt,output=usage.completion_tokens"};
  std::string what = input_error([&] { import(log, o); }).what();
  EXPECT_EQ(what, log +
                      ":4: field 'prompt': request id 'z': no line of it has the prompt (a "
                      "response without its request)");
  o.skip = true;
  ImportReport rep;
  Trace t = import(log, o, &rep);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(rep.responses_without_request, 1u);
  EXPECT_EQ(rep.skipped_rows, 1u);
  EXPECT_EQ(rep.joined_lines, 2u);
  EXPECT_EQ(t.output_tokens, (std::vector<uint32_t>{3, 4}));
  EXPECT_EQ(t.time, (std::vector<Time>{0, 1'000'000}));  // the prompt lines' times

  std::string twice = write_file("twice.jsonl",
                                 "{\"id\": \"a\", \"ts\": 1, \"prompt\": [1]}\n"
                                 "{\"id\": \"a\", \"ts\": 2, \"prompt\": [1, 2]}\n");
  what = input_error([&] { import(twice, {"id=id,time=ts,tokens=prompt"}); }).what();
  EXPECT_EQ(what, twice +
                      ":2: field 'prompt': request id 'a' has a prompt on line 1 already: "
                      "one prompt per request id");
  // Without id, one line is one request, and a line without the prompt is an error.
  what = input_error([&] { import(log, {"time=ts,tokens=prompt"}); }).what();
  EXPECT_EQ(what, log + ":3: field 'prompt': missing");
  EXPECT_THROW(import(write_file("x.csv", "id,ts,p\na,1,1 2\n"), {"id=id,time=ts,tokens=p"}),
               ConfigError);
}

TEST(ImportLogs, HashStringsBecomeKeysAndCollisionsAreErrors) {
  HashStringKeys k;
  uint64_t x = 0;
  std::string digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
  EXPECT_EQ(k.key(digest, x), "");
  EXPECT_EQ(x, 0x9f86d081884c7d65ull);  // SGLang's hash_str_to_int64, unsigned
  EXPECT_EQ(k.key("0x1f", x), "");
  EXPECT_EQ(x, 31u);
  EXPECT_EQ(k.key("-2", x), "");
  EXPECT_EQ(x, uint64_t(-2));
  EXPECT_EQ(k.key("12345", x), "");
  EXPECT_EQ(x, 12345u);
  EXPECT_EQ(k.key("beef", x), "");
  EXPECT_EQ(x, 0xbeefu);
  EXPECT_EQ(k.key("chunk:7", x), "");
  EXPECT_EQ(k.key("chunk:7", x), "");  // the same string again is the same block
  std::string other = digest.substr(0, 16) + std::string(48, '0');
  EXPECT_NE(k.key(other, x).find("collision"), std::string::npos);

  // vLLM-style digests in a JSONL log: keys as given; SGLang's signed integers give the same.
  auto hex = [](int i) {
    char buf[65];
    snprintf(buf, sizeof buf, "%016x%048x", 0xa000 + i, i);
    return std::string(buf);
  };
  std::string log = write_file("hashes.jsonl", "{\"t\": 1, \"h\": [\"" + hex(1) + "\", \"" +
                                                   hex(2) + "\"]}\n" + "{\"t\": 2, \"h\": [\"" +
                                                   hex(1) + "\", \"" + hex(3) + "\"]}\n");
  Trace t = import(log, {"time=t,hashes=h"});
  EXPECT_EQ(keys(t, 0)[0], keys(t, 1)[0]);
  EXPECT_NE(keys(t, 0)[1], keys(t, 1)[1]);
  std::string ints = write_file("ints.csv", "t,h\n1,\"[40961, 40962]\"\n2,40961 40963\n");
  Trace u = import(ints, {"time=t,hashes=h"});
  EXPECT_EQ(keys(u, 0), keys(t, 0));
  EXPECT_EQ(keys(u, 1), keys(t, 1));
  // Two digests sharing their first 64 bits: refused, never merged.
  std::string clash = write_file("clash.jsonl", "{\"t\": 1, \"h\": [\"" + hex(1) + "\"]}\n" +
                                                    "{\"t\": 2, \"h\": [\"" + hex(1).substr(0, 16) +
                                                    std::string(48, 'f') + "\"]}\n");
  std::string what = input_error([&] { import(clash, {"time=t,hashes=h"}); }).what();
  EXPECT_NE(what.find(clash + ":2: field 'h': item 1: block hashes"), std::string::npos) << what;
  // The chain check still applies to string hashes.
  std::string unchained =
      write_file("unchained.jsonl", "{\"t\": 1, \"h\": [\"" + hex(1) + "\", \"" + hex(2) +
                                        "\"]}\n" + "{\"t\": 2, \"h\": [\"" + hex(2) + "\"]}\n");
  what = input_error([&] { import(unchained, {"time=t,hashes=h"}); }).what();
  EXPECT_NE(what.find("not chained block hashes"), std::string::npos) << what;
}

TEST(ImportLogs, PresetsGiveAMappingThatMapOverrides) {
  std::string completion = write_file(
      "completion.jsonl",
      "{\"id\": \"c1\", \"created\": 100, \"prompt\": \"one two three four five six\", "
      "\"prompt_token_ids\": [5, 6, 7, 8, 9], \"usage\": {\"completion_tokens\": 2}}\n"
      "{\"id\": \"c2\", \"created\": 101, \"prompt\": [5, 6, 7, 8, 10], "
      "\"prompt_token_ids\": [5, 6, 7, 8, 10], \"usage\": {\"completion_tokens\": 3}}\n");
  Trace t = import(completion, {"", "openai-completion"});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.prompt_tokens[1], 5u);  // a prompt of token ids is the ids
  Opts ids{"tokens=prompt_token_ids", "openai-completion"};
  Trace u = import(completion, ids);  // the preset's text= gives way to tokens=
  EXPECT_EQ(keys(u, 0)[0], keys(u, 1)[0]);
  EXPECT_EQ(keys(u, 1), keys(t, 1));
  ImportMapping m =
      parse_import_mapping("output=usage.total,session=conversation_id", "openai-chat");
  EXPECT_EQ(m.id, "id");
  EXPECT_EQ(m.time, "created");
  EXPECT_EQ(m.messages, "messages");
  EXPECT_EQ(m.output, "usage.total");
  EXPECT_EQ(m.session, "conversation_id");
  EXPECT_THROW(parse_import_mapping("", "nope"), ConfigError);
  EXPECT_THROW(parse_import_mapping("output=a,output=b", "openai-chat"), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
