#include "kvpolicy/trace/import.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/input_file.h"
#include "kvpolicy/trace/text_trace.h"
#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

using testing::input_error;
using testing::write_file;

Trace import(const std::string& path, const std::string& map, ImportReport* report = nullptr,
             const std::string& unit = "s", const Tokenizer* tok = nullptr, bool skip = false,
             uint32_t block_tokens = 16) {
  ImportOptions o;
  o.map = parse_import_mapping(map);
  o.time_unit = unit;
  o.tokenizer = tok;
  o.skip_bad_lines = skip;
  o.block_tokens = block_tokens;
  ImportReport local;
  return import_trace(path, o, report ? *report : local);
}

std::string iota_list(uint32_t from, uint32_t count, const char* sep = " ") {
  std::string s;
  for (uint32_t i = 0; i < count; ++i) s += (i ? sep : "") + std::to_string(from + i);
  return s;
}

std::vector<BlockKey> keys(const Trace& t, size_t r) {
  auto p = t.prompt(r);
  return {p.begin(), p.end()};
}

TEST(Import, CsvAndJsonlGiveTheSameTrace) {
  // Same rows, tokens as a JSON array in a quoted CSV cell, as bare ints, and as JSON arrays.
  std::string csv = write_file("log.csv",
                               "ts,conv,ids,out,kind,who\n"
                               "10.5,a,\"[1, 2, 3]\",7,chat,u1\n"
                               "11,b," +
                                   iota_list(1, 20) + ",8,code,u2\n" + "12.25,a,\"" +
                                   iota_list(1, 20, ",") + "\",9,chat,u1\n");
  std::string jsonl = write_file(
      "log.jsonl",
      "{\"ts\": 10.5, \"conv\": \"a\", \"ids\": [1, 2, 3], \"out\": 7, \"kind\": "
      "\"chat\", \"who\": \"u1\"}\n"
      "{\"ts\": 11, \"conv\": \"b\", \"ids\": [" +
          iota_list(1, 20, ",") +
          "], \"out\": 8, \"kind\": \"code\", \"who\": \"u2\"}\n"
          "{\"ts\": \"12.25\", \"conv\": \"a\", \"ids\": [" +
          iota_list(1, 20, ",") + "], \"out\": 9, \"kind\": \"chat\", \"who\": \"u1\"}\n");
  const std::string map = "time=ts,session=conv,tokens=ids,output=out,category=kind,user=who";
  ImportReport rc, rj;
  Trace c = import(csv, map, &rc), j = import(jsonl, map, &rj);
  EXPECT_EQ(rc.format, "csv");
  EXPECT_EQ(rj.format, "jsonl");
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c.time, (std::vector<Time>{0, 500'000, 1'750'000}));
  EXPECT_EQ(c.session, (std::vector<SessionId>{0, 1, 0}));
  EXPECT_EQ(c.turn, (std::vector<uint32_t>{1, 1, 2}));
  EXPECT_EQ(c.prompt_tokens, (std::vector<uint32_t>{3, 20, 20}));
  EXPECT_EQ(c.output_tokens, (std::vector<uint32_t>{7, 8, 9}));
  EXPECT_EQ(c.category, (std::vector<CategoryId>{0, 1, 0}));
  EXPECT_EQ(c.category_names, (std::vector<std::string>{"chat", "code"}));
  EXPECT_EQ(c.user, (std::vector<uint32_t>{0, 1, 0}));
  EXPECT_EQ(c.block_offset, (std::vector<uint64_t>{0, 1, 3, 5}));
  EXPECT_EQ(c.time, j.time);
  EXPECT_EQ(c.session, j.session);
  EXPECT_EQ(c.turn, j.turn);
  EXPECT_EQ(c.prompt_tokens, j.prompt_tokens);
  EXPECT_EQ(c.output_tokens, j.output_tokens);
  EXPECT_EQ(c.category, j.category);
  EXPECT_EQ(c.user, j.user);
  EXPECT_EQ(c.block_offset, j.block_offset);
  EXPECT_EQ(c.blocks, j.blocks);
}

TEST(Import, QuotedCsvFieldsHoldCommasQuotesAndNewlines) {
  auto tok = make_approx_tokenizer();
  std::string text = "Hello, \"world\"\nsecond line, with commas";
  // The quoted cell spans lines 2 and 3, so the bad row after it starts on line 4.
  std::string path = write_file("quoted.csv",
                                "ts,prompt\r\n"
                                "1,\"Hello, \"\"world\"\"\nsecond line, with commas\"\r\n"
                                "x,\"later\"\r\n");
  auto e = input_error([&] { import(path, "time=ts,text=prompt", nullptr, "s", tok.get()); });
  EXPECT_EQ(std::string(e.what()), path +
                                       ":4: column 'ts': expected a number of seconds or an "
                                       "ISO 8601 date-time");

  ImportReport rep;
  Trace t = import(path, "time=ts,text=prompt", &rep, "s", tok.get(), true);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(rep.skipped_rows, 1u);
  std::vector<uint32_t> tokens;
  tok->encode(text, tokens);
  EXPECT_EQ(t.prompt_tokens[0], tokens.size());
  std::vector<uint64_t> ids;
  text_block_ids(tokens.data(), tokens.size(), 16, ids);
  Trace expect;
  expect.add_request(0, ids, 0, 0);
  EXPECT_EQ(keys(t, 0), keys(expect, 0));
}

// The keys `trace build` gives a conversation's prompts are the keys of importing the same
// prompts as tokens, and importing text gives the keys of its tokens.
TEST(Import, TokensAndTextChainLikeTraceBuild) {
  auto tok = make_approx_tokenizer();
  Conversation conv;
  conv.messages = {{Role::kUser, "What is a prefix cache, and why do engines keep one?"},
                   {Role::kAssistant,
                    "It keeps the KV blocks of prompts seen before so that a "
                    "request sharing a prefix skips recomputing them."},
                   {Role::kUser, "And how large should it be for a chat service?"}};
  TextTraceParams params;
  params.block_tokens = 4;  // several blocks, and a partial last one
  Trace built = build_text_trace({conv}, *tok, params, 1);
  ASSERT_EQ(built.size(), 2u);
  ConversationTokens ct = tokenize_conversation(conv, *tok);
  std::string csv = "ts,ids\n";
  for (size_t k = 0; k < 2; ++k) {
    csv += std::to_string(k) + ",";
    for (uint32_t i = 0; i < ct.prompt_end[k]; ++i)
      csv += (i ? " " : "") + std::to_string(ct.tokens[i]);
    csv += "\n";
  }
  Trace imported =
      import(write_file("built.csv", csv), "time=ts,tokens=ids", nullptr, "s", nullptr, false, 4);
  ASSERT_EQ(imported.size(), 2u);
  EXPECT_NE(ct.prompt_end[0] % 4, 0u) << "the test wants a partial last block";
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(keys(imported, r), keys(built, r));
    EXPECT_EQ(imported.prompt_tokens[r], built.prompt_tokens[r]);
  }

  std::string text =
      "A prompt of some length, long enough to fill a few sixteen-token blocks "
      "with words, numbers like 12345 and punctuation!";
  std::vector<uint32_t> ids;
  tok->encode(text, ids);
  std::string both = write_file(
      "both.jsonl", "{\"t\": 0, \"p\": \"" + text + "\", \"ids\": [" + iota_list(0, 0) + "]}\n");
  std::string ids_text;
  for (size_t i = 0; i < ids.size(); ++i) ids_text += (i ? "," : "") + std::to_string(ids[i]);
  std::string pair = write_file(
      "pair.jsonl", "{\"t\": 0, \"p\": \"" + text + "\", \"ids\": [" + ids_text + "]}\n");
  Trace from_text = import(pair, "time=t,text=p", nullptr, "s", tok.get());
  Trace from_tokens = import(pair, "time=t,tokens=ids");
  EXPECT_GT(from_text.prompt_blocks(0), 1u);
  EXPECT_EQ(keys(from_text, 0), keys(from_tokens, 0));
  // An empty prompt is a bad row, not a request without blocks.
  auto e = input_error([&] { import(both, "time=t,tokens=ids"); });
  EXPECT_EQ(std::string(e.what()), both + ":1: field 'ids': empty prompt");
}

TEST(Import, HashesAreTheKeysAsGiven) {
  std::string path = write_file("hashes.jsonl",
                                "{\"t\": 0, \"h\": [11, 22, -1], \"n\": 40}\n"
                                "{\"t\": 1, \"h\": [11, 23], \"n\": 32}\n"
                                "{\"t\": 2, \"h\": [11, 22, 33], \"n\": 40}\n");
  Trace t = import(path, "time=t,hashes=h,prompt_tokens=n");
  EXPECT_EQ(keys(t, 0), (std::vector<BlockKey>{11, 22, ~uint64_t{0}}));
  EXPECT_EQ(keys(t, 1), (std::vector<BlockKey>{11, 23}));
  EXPECT_EQ(t.prompt_tokens, (std::vector<uint32_t>{40, 32, 40}));
  // Without prompt_tokens every block counts as full.
  EXPECT_EQ(import(path, "time=t,hashes=h").prompt_tokens, (std::vector<uint32_t>{48, 32, 48}));
  // Full blocks only (vLLM) or a partial last block too: 2 or 3 hashes for 40 tokens, not 4.
  std::string bad = write_file("bad.csv", "t,h,n\n0,1 2 3 4,40\n");
  auto e = input_error([&] { import(bad, "time=t,hashes=h,prompt_tokens=n"); });
  EXPECT_EQ(std::string(e.what()),
            bad +
                ":2: column 'h': 4 block hashes for 40 prompt tokens (expected 2 or 3 blocks "
                "of 16 tokens)");
}

TEST(Import, RowsSharingAPrefixShareItsBlocksWhateverTheSession) {
  // 40 tokens = blocks [0,16) [16,32) [32,40); the second row shares the first 32 tokens.
  std::string path =
      write_file("prefix.csv", "t,s,ids\n0,x," + iota_list(0, 40) + "\n1,y," + iota_list(0, 32) +
                                   " 999\n2,z," + iota_list(1, 16) + "\n");
  Trace t = import(path, "time=t,session=s,tokens=ids");
  auto a = keys(t, 0), b = keys(t, 1), c = keys(t, 2);
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(a[0], b[0]);
  EXPECT_EQ(a[1], b[1]);
  EXPECT_NE(a[2], b[2]);
  EXPECT_NE(c[0], a[0]);  // a different first block: nothing shared
  EXPECT_EQ(t.session, (std::vector<SessionId>{0, 1, 2}));
}

TEST(Import, TimeUnitsAndIsoDates) {
  auto times = [&](const std::string& cells, const std::string& unit) {
    std::string csv = "t,ids\n";
    size_t start = 0;
    for (size_t end; (end = cells.find(';', start)) != std::string::npos; start = end + 1)
      csv += cells.substr(start, end - start) + ",1 2\n";
    csv += cells.substr(start) + ",1 2\n";
    return import(write_file("times.csv", csv), "time=t,tokens=ids", nullptr, unit).time;
  };
  using V = std::vector<Time>;
  EXPECT_EQ(times("100;100.5;101", "s"), (V{0, 500'000, 1'000'000}));
  EXPECT_EQ(times("5;7.5", "ms"), (V{0, 2'500}));
  EXPECT_EQ(times("5;7", "us"), (V{0, 2}));
  // Nanosecond epochs are past 2^53: read exactly as integers, rounded to microseconds.
  EXPECT_EQ(times("1753780607550317897;1753780607551821400", "ns"), (V{0, 1'503}));
  EXPECT_EQ(times("2025-01-01T12:00:00Z;2025-01-01T12:00:01.25Z;2025-01-01 13:00:02+01:00", "iso"),
            (V{0, 1'250'000, 2'000'000}));
  // ISO strings are recognized whatever the numeric unit.
  EXPECT_EQ(times("2025-01-01T00:00:00.000001Z;2025-01-01T00:00:00.5Z", "ms"), (V{0, 499'999}));

  Time us;
  ASSERT_TRUE(parse_iso8601_micros("1970-01-01T00:00:00Z", us));
  EXPECT_EQ(us, 0);
  ASSERT_TRUE(parse_iso8601_micros("2024-02-29T23:59:59.9999996-0130", us));
  EXPECT_EQ(us, (19782LL * 86400 + 86399 + 90 * 60) * kMicrosPerSecond + 1'000'000);
  EXPECT_FALSE(parse_iso8601_micros("2023-02-29T00:00:00Z", us));  // not a leap year
  EXPECT_FALSE(parse_iso8601_micros("2025-01-01", us));            // a date, no time
  EXPECT_FALSE(parse_iso8601_micros("2025-01-01T25:00:00Z", us));
  EXPECT_FALSE(parse_iso8601_micros("2025-01-01T12:00:00Zjunk", us));

  std::string path = write_file("big.csv", "t,ids\n0,1\n10000000000000,1\n");
  auto e = input_error([&] { import(path, "time=t,tokens=ids"); });
  EXPECT_EQ(std::string(e.what()),
            path + ":3: column 't': too large: times stay below 2^62 microseconds");
  auto iso = input_error([&] { import(path, "time=t,tokens=ids", nullptr, "iso"); });
  EXPECT_NE(std::string(iso.what()).find(":2: column 't': expected an ISO 8601"),
            std::string::npos);
}

TEST(Import, ErrorsNameFileLineAndColumn) {
  std::string csv = write_file("errors.csv", "ts,ids,out\n1,5 6,2\n2,7 x,3\n");
  EXPECT_EQ(std::string(input_error([&] { import(csv, "time=ts,tokens=ids"); }).what()),
            csv + ":3: column 'ids': item 2: expected a non-negative integer");
  EXPECT_EQ(
      std::string(input_error([&] { import(csv, "time=ts,tokens=ids,output=len"); }).what()),
      csv + ":1: column 'len' (mapped to output) is not in the header; its columns: ts, ids, out");
  std::string short_row = write_file("short.csv", "ts,ids,out\n1,5 6\n");
  EXPECT_EQ(std::string(input_error([&] { import(short_row, "time=ts,tokens=ids"); }).what()),
            short_row + ":2: 2 fields where the header has 3");
  std::string unclosed = write_file("unclosed.csv", "ts,ids\n1,2\n2,\"3 4\n");
  EXPECT_EQ(std::string(input_error([&] { import(unclosed, "time=ts,tokens=ids"); }).what()),
            unclosed + ":3: a quoted field is not closed before the end of the file");
  std::string jsonl = write_file("errors.jsonl", "{\"ts\": 1, \"ids\": [1]}\n{\"ids\": [2]}\n");
  EXPECT_EQ(std::string(input_error([&] { import(jsonl, "time=ts,tokens=ids"); }).what()),
            jsonl + ":2: field 'ts': missing");
  std::string turn = write_file("turn.jsonl", "{\"ts\": 1, \"ids\": [1], \"k\": 0}\n");
  EXPECT_EQ(std::string(input_error([&] { import(turn, "time=ts,tokens=ids,turn=k"); }).what()),
            turn + ":1: field 'k': expected a turn number from 1");

  try {
    parse_import_mapping("time=ts,prompt=text");
    ADD_FAILURE() << "an unknown target was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(
        std::string(e.what()).find("unknown target 'prompt' (valid targets: time, id, session, "
                                   "tokens, text, messages, hashes, prompt_tokens, output, "
                                   "output_text, turn, category, user)"),
        std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_import_mapping("session=s,tokens=t"), ConfigError);      // no time
  EXPECT_THROW(parse_import_mapping("time=t,tokens=a,text=b"), ConfigError);  // two prompts
  EXPECT_THROW(parse_import_mapping("time=t"), ConfigError);                  // no prompt
  EXPECT_THROW(parse_import_mapping("time=t,time=u,tokens=a"), ConfigError);  // twice
  EXPECT_THROW(parse_import_mapping("time=t,tokens=a,prompt_tokens=n"), ConfigError);
}

TEST(Import, SkipBadLinesCountsAndKeepsTheFirstError) {
  std::string path = write_file("skip.csv", "ts,ids\n1,1 2\nnope,3\n3,\n4,4 5\n-1,6\n");
  ImportReport rep;
  Trace t = import(path, "time=ts,tokens=ids", &rep, "s", nullptr, true);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(rep.rows, 2u);
  EXPECT_EQ(rep.skipped_rows, 3u);
  EXPECT_EQ(rep.lines, 6u);
  EXPECT_EQ(rep.first_skipped,
            path + ":3: column 'ts': expected a number of seconds or an ISO 8601 date-time");
  std::string all_bad = write_file("all_bad.csv", "ts,ids\nx,1\n");
  EXPECT_EQ(std::string(input_error([&] {
                          import(all_bad, "time=ts,tokens=ids", nullptr, "s", nullptr, true);
                        }).what()),
            all_bad + ": no valid rows");
}

TEST(Import, UnsortedRowsAreSortedStably) {
  // Row order: s2 at 3, s1 at 1, s2 at 2, s1 at 1 (tie: file order kept).
  std::string path =
      write_file("unsorted.csv", "ts,conv,ids\n3,s2,30 0\n1,s1,10 0\n2,s2,20 0\n1,s1,11 0\n");
  ImportReport rep;
  Trace t = import(path, "time=ts,session=conv,tokens=ids", &rep);
  EXPECT_TRUE(rep.sorted);
  EXPECT_EQ(t.time, (std::vector<Time>{0, 0, 1'000'000, 2'000'000}));
  EXPECT_EQ(t.session, (std::vector<SessionId>{0, 0, 1, 1}));  // in order of first request
  EXPECT_EQ(t.turn, (std::vector<uint32_t>{1, 2, 1, 2}));      // counted after sorting
  Trace expect;
  for (uint64_t token : {10, 11, 20, 30}) {
    std::vector<uint32_t> two{static_cast<uint32_t>(token), 0};
    std::vector<uint64_t> ids;
    text_block_ids(two.data(), 2, 16, ids);
    expect.add_request(0, ids, 2, 0);
  }
  EXPECT_EQ(t.blocks, expect.blocks);
  ImportReport sorted_rep;
  import(write_file("sorted.csv", "ts,ids\n1,1 0\n1,2 0\n2,3 0\n"), "time=ts,tokens=ids",
         &sorted_rep);
  EXPECT_FALSE(sorted_rep.sorted);
}

TEST(Import, OutputLengthsFromCountsOrText) {
  auto tok = make_approx_tokenizer();
  std::string path =
      write_file("out.jsonl",
                 "{\"t\": 0, \"ids\": [1, 0], \"n\": 12, \"a\": \"Sure, here it is.\"}\n"
                 "{\"t\": 1, \"ids\": [2, 0], \"n\": null, \"a\": null}\n");
  EXPECT_EQ(import(path, "time=t,tokens=ids,output=n").output_tokens,
            (std::vector<uint32_t>{12, 0}));
  std::vector<uint32_t> answer;
  tok->encode("Sure, here it is.", answer);
  ASSERT_FALSE(answer.empty());
  EXPECT_EQ(import(path, "time=t,tokens=ids,output_text=a", nullptr, "s", tok.get()).output_tokens,
            (std::vector<uint32_t>{static_cast<uint32_t>(answer.size()), 0}));
  EXPECT_EQ(import(path, "time=t,tokens=ids").output_tokens, (std::vector<uint32_t>{0, 0}));
  // Text needs a tokenizer.
  ImportOptions o;
  o.map = parse_import_mapping("time=t,tokens=ids,output_text=a");
  ImportReport rep;
  EXPECT_THROW(import_trace(path, o, rep), ConfigError);
}

}  // namespace
}  // namespace kvpolicy

namespace kvpolicy {
namespace {

using testing::input_error;
using testing::write_file;

// A log of token counts (Azure's LLM inference trace: TIMESTAMP, ContextTokens,
// GeneratedTokens) has no prompt content: mapped as tokens, text or hashes, each count would
// become a one-token prompt and every hit rate fiction, so the import is refused and says why.
void expect_lengths_refused(const std::string& path, const std::string& map,
                            const Tokenizer* tok = nullptr) {
  std::string what = input_error([&] { import(path, map, nullptr, "s", tok); }).what();
  EXPECT_NE(what.find("field 'ContextTokens': every row's prompt is one number"), std::string::npos)
      << what;
  EXPECT_NE(what.find("token counts cannot say which requests do"), std::string::npos) << what;
  EXPECT_NE(what.find("text=COLUMN"), std::string::npos) << what;
}

const char* kAzureHead =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2023-11-16 18:15:46.6805900,374,44\n"
    "2023-11-16 18:15:50.9951690,396,109\n"
    "2023-11-16 18:15:51.2000000,374,12\n";

TEST(Import, ALogOfLengthsOnlyIsRefused) {
  std::string path = write_file("azure.csv", kAzureHead);
  expect_lengths_refused(path, "time=TIMESTAMP,tokens=ContextTokens,output=GeneratedTokens");
  expect_lengths_refused(path, "time=TIMESTAMP,hashes=ContextTokens");
  auto tok = make_approx_tokenizer();
  expect_lengths_refused(path, "time=TIMESTAMP,text=ContextTokens", tok.get());
  // The mapping such a log allows (a length, no content) is refused with the same reason.
  try {
    parse_import_mapping("time=TIMESTAMP,prompt_tokens=ContextTokens,output=GeneratedTokens");
    ADD_FAILURE() << "a mapping without a prompt was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("token counts cannot say which requests do"),
              std::string::npos)
        << e.what();
  }
  // In JSONL a number where the prompt's list belongs says so on its line.
  std::string jsonl = write_file("lengths.jsonl", "{\"t\": 0, \"n\": 374}\n");
  std::string what = input_error([&] { import(jsonl, "time=t,tokens=n"); }).what();
  EXPECT_NE(what.find(jsonl + ":1: field 'n': one number, not a list"), std::string::npos) << what;
  // One-token rows among longer prompts are prompts, not lengths.
  Trace mixed = import(write_file("mixed.csv", "t,ids\n0,5\n1,5 6 7\n"), "time=t,tokens=ids");
  EXPECT_EQ(mixed.prompt_tokens, (std::vector<uint32_t>{1, 3}));
}

TEST(Import, TheAzureTraceIsRefused) {
  std::string path = testing::data_file("azure-2023/AzureLLMInferenceTrace_conv.csv");
  if (path.empty()) GTEST_SKIP() << "KVPOLICY_DATA unset or the Azure trace is absent";
  expect_lengths_refused(path, "time=TIMESTAMP,tokens=ContextTokens,output=GeneratedTokens");
}

// Repeated hashes of block contents (not chained) would count hits no prefix cache makes: an
// infinite cache of "1 1 1 1" hits 75 % of blocks that a replay never reaches.
TEST(Import, HashesThatAreNotChainedAreRefused) {
  std::string repeated = write_file("repeated.csv", "t,h\n0,1 1 1 1\n1,5 6\n");
  EXPECT_EQ(std::string(input_error([&] { import(repeated, "time=t,hashes=h"); }).what()),
            repeated +
                ":2: column 'h': hash 1 is repeated in one prompt: these are not chained block "
                "hashes (each block's hash must cover the blocks before it, as vLLM's and "
                "SGLang's do); chain them, or map the prompts' tokens or text instead");
  std::string moved = write_file("moved.csv", "t,h\n0,1 2\n1,3 2\n");
  std::string what = input_error([&] { import(moved, "time=t,hashes=h"); }).what();
  EXPECT_NE(what.find(moved + ":3: column 'h': hash 2 is block 2 here but block 2 of request 1"),
            std::string::npos)
      << what;
  std::string shifted = write_file("shifted.csv", "t,h\n0,1 2\n1,2 4\n");
  what = input_error([&] { import(shifted, "time=t,hashes=h"); }).what();
  EXPECT_NE(what.find(":3: column 'h': hash 2 is block 1 here but block 2 of request 1"),
            std::string::npos)
      << what;
  // A skipped row leaves no trace of its hashes.
  ImportReport rep;
  Trace t = import(write_file("skipped.csv", "t,h\n0,1 1\n1,1 2\n"), "time=t,hashes=h", &rep, "s",
                   nullptr, true);
  EXPECT_EQ(rep.skipped_rows, 1u);
  EXPECT_EQ(keys(t, 0), (std::vector<BlockKey>{1, 2}));
}

// A FIFO hung the import (the open waits for a writer), /dev/zero filled memory: both are
// refused before anything opens them, as is a sparse file larger than memory.
TEST(Import, FifosDevicesAndHugeFilesAreRefused) {
  std::string fifo = testing::temp_path("log.csv");
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    std::string what = input_error([&] { import(path, "time=t,tokens=ids"); }).what();
    EXPECT_NE(what.find("not a regular file (a pipe or a device); logs are read from files"),
              std::string::npos)
        << what;
  }
  std::filesystem::remove(fifo);
  std::string sparse = testing::temp_path("sparse.csv");
  { std::ofstream(sparse) << "t,ids\n"; }
  std::filesystem::resize_file(sparse, physical_memory_bytes() + (uint64_t{1} << 30));
  std::string what = input_error([&] { import(sparse, "time=t,tokens=ids"); }).what();
  EXPECT_NE(what.find("more than this machine's"), std::string::npos) << what;
  std::filesystem::remove(sparse);
}

TEST(Import, JsonlDuplicateKeysAreAnError) {
  std::string path = write_file(
      "dup.jsonl", "{\"t\": 0, \"ids\": [1, 2]}\n{\"t\": 1, \"ids\": [1, 2], \"t\": 9}\n");
  EXPECT_EQ(std::string(input_error([&] { import(path, "time=t,tokens=ids"); }).what()),
            path + ":2: field 't': duplicate key");
}

}  // namespace
}  // namespace kvpolicy
