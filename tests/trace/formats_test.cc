// The JSONL readers: exact columns on small hand-written files, and every kind of bad input.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <functional>

#include "kvpolicy/trace/trace.h"
#include "trace_test_util.h"

namespace kvpolicy {
namespace {

using testing::data_file;
using testing::input_error;
using testing::write_file;

// A JSON record as (key, raw JSON value) pairs, so tests can drop or corrupt one field.
using Record = std::vector<std::pair<std::string, std::string>>;

std::string to_json(const Record& rec) {
  std::string s = "{";
  for (auto& [k, v] : rec) s += (s.size() > 1 ? ", \"" : "\"") + k + "\": " + v;
  return s + "}";
}

std::string lines_of(const std::vector<Record>& recs) {
  std::string s;
  for (auto& r : recs) s += to_json(r) + "\n";
  return s;
}

// Chained keys of raw ids, computed by hand.
std::vector<BlockKey> chain(std::initializer_list<uint64_t> ids) {
  std::vector<BlockKey> keys;
  BlockKey k = kRootKey;
  for (uint64_t id : ids) keys.push_back(k = chain_key(k, id));
  return keys;
}

std::vector<BlockKey> prompt_of(const Trace& t, size_t r) {
  auto p = t.prompt(r);
  return {p.begin(), p.end()};
}

// One JSONL format: a valid record number i arriving at time step `time` (in the format's unit).
struct JsonlFormat {
  std::string name;
  std::function<Record(int i, int time)> record;
  Time micros_per_step;  // what one time step is in microseconds
};

std::vector<JsonlFormat> jsonl_formats() {
  return {
      {"mooncake",
       [](int i, int time) {
         return Record{{"timestamp", std::to_string(time)},
                       {"input_length", "1000"},
                       {"output_length", std::to_string(10 + i)},
                       {"hash_ids", "[0, " + std::to_string(100 + i) + "]"}};
       },
       1000},
      {"bailian",
       [](int i, int time) {
         return Record{{"chat_id", std::to_string(i)},
                       {"parent_chat_id", "-1"},
                       {"timestamp", std::to_string(time)},
                       {"input_length", "20"},
                       {"output_length", std::to_string(10 + i)},
                       {"type", "\"text\""},
                       {"turn", "1"},
                       {"hash_ids", "[0, " + std::to_string(100 + i) + "]"}};
       },
       1'000'000},
      {"lmbench",
       [](int i, int time) {
         return Record{{"timestamp", "\"" + std::to_string(time) + "000\""},
                       {"input_length", "300"},
                       {"output_length", std::to_string(10 + i)},
                       {"hash_ids", "[0, " + std::to_string(100 + i) + "]"}};
       },
       1},
  };
}

class JsonlBadInput : public ::testing::TestWithParam<JsonlFormat> {
 protected:
  std::vector<Record> good(int n) const {
    std::vector<Record> recs;
    for (int i = 0; i < n; ++i) recs.push_back(GetParam().record(i, i));
    return recs;
  }
  Trace read(const std::string& path, ReadOptions opts = {}, ReadReport* rep = nullptr) const {
    return read_trace(path, GetParam().name, opts, rep);
  }
  void expect_names(const InputError& e, const std::string& path, uint64_t line,
                    const std::string& field) const {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), line);
    EXPECT_EQ(e.field(), field);
    std::string what = e.what();
    EXPECT_NE(what.find(path + ":" + std::to_string(line)), std::string::npos) << what;
    if (!field.empty()) {
      EXPECT_NE(what.find("field '" + field + "'"), std::string::npos) << what;
    }
  }
};

TEST_P(JsonlBadInput, GoodFileParsesWithTimesInMicroseconds) {
  std::string path = write_file("good.jsonl", lines_of(good(3)));
  ReadReport rep;
  Trace t = read(path, {}, &rep);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_FALSE(rep.sorted);
  for (size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(t.time[r], static_cast<Time>(r) * GetParam().micros_per_step);
    EXPECT_EQ(t.output_tokens[r], 10 + r);
    EXPECT_EQ(t.prompt(r)[0], chain({0})[0]);  // shared first block, same key
    EXPECT_EQ(t.prompt(r)[1], chain({0, 100 + r})[1]);
  }
}

// A length too large for the trace's 32-bit columns names its own field (issue 26: Mooncake
// reported an output_length overflow as input_length).
TEST_P(JsonlBadInput, OversizedOutputLengthNamesOutputLength) {
  auto recs = good(3);
  for (auto& [key, value] : recs[1])
    if (key == "output_length") value = "4294967296";
  std::string path = write_file("big-output.jsonl", lines_of(recs));
  expect_names(input_error([&] { read(path); }), path, 2, "output_length");
}

TEST_P(JsonlBadInput, TruncatedLineNamesFileAndLine) {
  auto recs = good(3);
  std::string line2 = to_json(recs[1]);
  std::string text =
      to_json(recs[0]) + "\n" + line2.substr(0, line2.size() / 2) + "\n" + to_json(recs[2]) + "\n";
  std::string path = write_file("truncated.jsonl", text);
  InputError e = input_error([&] { read(path); });
  expect_names(e, path, 2, "");
  // A file cut off in the middle of its last line (no newline) fails the same way.
  std::string cut = to_json(recs[0]) + "\n" + line2.substr(0, line2.size() - 3);
  std::string path2 = write_file("cut.jsonl", cut);
  expect_names(input_error([&] { read(path2); }), path2, 2, "");
}

TEST_P(JsonlBadInput, EveryMissingFieldIsNamed) {
  for (size_t k = 0; k < GetParam().record(0, 0).size(); ++k) {
    auto recs = good(3);
    std::string field = recs[1][k].first;
    recs[1].erase(recs[1].begin() + k);
    std::string path = write_file("missing.jsonl", lines_of(recs));
    InputError e = input_error([&] { read(path); });
    expect_names(e, path, 2, field);
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
}

TEST_P(JsonlBadInput, EveryWrongTypeIsNamed) {
  for (size_t k = 0; k < GetParam().record(0, 0).size(); ++k) {
    auto recs = good(3);
    recs[2][k].second = "{\"x\": 1}";  // an object fits no field
    std::string path = write_file("wrongtype.jsonl", lines_of(recs));
    expect_names(input_error([&] { read(path); }), path, 3, recs[2][k].first);
  }
  // Numbers as strings, negative lengths and non-integer ids are wrong too.
  for (auto [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"input_length", "\"12\""},
                                                        {"output_length", "-3"},
                                                        {"hash_ids", "[0, \"x\"]"},
                                                        {"hash_ids", "[0, -1]"},
                                                        {"hash_ids", "[0, 1.5]"},
                                                        {"hash_ids", "7"}}) {
    auto recs = good(2);
    for (auto& kv : recs[1])
      if (kv.first == key) kv.second = value;
    std::string path = write_file("wrongvalue.jsonl", lines_of(recs));
    expect_names(input_error([&] { read(path); }), path, 2, key);
  }
}

TEST_P(JsonlBadInput, UnsortedTimestampsAreSortedOrRejected) {
  std::vector<Record> recs{GetParam().record(0, 0), GetParam().record(1, 5),
                           GetParam().record(2, 3), GetParam().record(3, 5)};
  std::string path = write_file("unsorted.jsonl", lines_of(recs));
  ReadReport rep;
  Trace t = read(path, {}, &rep);
  EXPECT_TRUE(rep.sorted);
  Time step = GetParam().micros_per_step;
  EXPECT_EQ(t.time, (std::vector<Time>{0, 3 * step, 5 * step, 5 * step}));
  // Stable: records 1 and 3 share a time and keep their file order.
  EXPECT_EQ(t.output_tokens, (std::vector<uint32_t>{10, 12, 11, 13}));
  EXPECT_EQ(prompt_of(t, 1), chain({0, 102}));

  ReadOptions strict;
  strict.sort_unsorted = false;
  InputError e = input_error([&] { read(path, strict); });
  expect_names(e, path, 3, "timestamp");
}

TEST_P(JsonlBadInput, EmptyFileAndUnreadablePath) {
  std::string path = write_file("empty.jsonl", "");
  InputError e = input_error([&] { read(path); });
  EXPECT_EQ(e.file(), path);
  EXPECT_NE(std::string(e.what()).find("empty file"), std::string::npos) << e.what();

  std::string blank = write_file("blank.jsonl", "\n  \n\n");
  EXPECT_NE(std::string(input_error([&] { read(blank); }).what()).find("no valid records"),
            std::string::npos);

  std::string missing = testing::temp_path("no-such-dir/trace.jsonl");
  InputError e2 = input_error([&] { read(missing); });
  EXPECT_EQ(e2.file(), missing);
  EXPECT_NE(std::string(e2.what()).find("cannot read"), std::string::npos) << e2.what();
}

TEST_P(JsonlBadInput, BlankLinesKeepLineNumbers) {
  auto recs = good(2);
  recs[1].pop_back();  // drop hash_ids
  std::string text = to_json(recs[0]) + "\n\n   \n" + to_json(recs[1]) + "\n";
  std::string path = write_file("blanks.jsonl", text);
  expect_names(input_error([&] { read(path); }), path, 4, "hash_ids");
}

TEST_P(JsonlBadInput, SkipBadLinesSkipsAndCounts) {
  auto recs = good(5);
  recs[1].erase(recs[1].begin());  // missing first field
  std::string text;
  for (int i = 0; i < 5; ++i) {
    std::string line = to_json(recs[i]);
    text += (i == 3 ? line.substr(0, 10) : line) + "\n";  // line 4 truncated
  }
  std::string path = write_file("skip.jsonl", text);
  input_error([&] { read(path); });
  ReadOptions opts;
  opts.skip_bad_lines = true;
  ReadReport rep;
  Trace t = read(path, opts, &rep);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(rep.skipped_lines, 2u);
  EXPECT_EQ(rep.lines, 5u);
  EXPECT_NE(rep.first_skipped.find(path + ":2"), std::string::npos) << rep.first_skipped;
  EXPECT_EQ(t.output_tokens, (std::vector<uint32_t>{10, 12, 14}));
  // A bad record leaves nothing behind: blocks and categories belong to good records only.
  EXPECT_EQ(t.num_block_accesses(), 6u);
  EXPECT_EQ(prompt_of(t, 1), chain({0, 102}));
}

// A key given twice is an error naming file, line and key, not a silent pick of one value.
TEST_P(JsonlBadInput, DuplicateKeyNamesFileLineAndKey) {
  for (size_t k = 0; k < GetParam().record(0, 0).size(); ++k) {
    auto recs = good(3);
    recs[1].push_back(recs[1][k]);  // same key, same value: still ambiguous
    std::string path = write_file("dupkey.jsonl", lines_of(recs));
    InputError e = input_error([&] { read(path); });
    expect_names(e, path, 2, recs[1][k].first);
    EXPECT_NE(std::string(e.what()).find("duplicate key"), std::string::npos) << e.what();
    ReadOptions opts;
    opts.skip_bad_lines = true;
    EXPECT_EQ(read(path, opts).size(), 2u);
  }
}

// A UTF-8 byte-order mark before the first record is skipped, by the reader and by "auto".
TEST_P(JsonlBadInput, ByteOrderMarkIsSkipped) {
  std::string plain = lines_of(good(3));
  std::string path = write_file("bom.jsonl", "\xEF\xBB\xBF" + plain);
  EXPECT_EQ(detect_format(path), GetParam().name);
  Trace with = read(path);
  Trace without = read(write_file("nobom.jsonl", plain));
  EXPECT_EQ(with.time, without.time);
  EXPECT_EQ(with.blocks, without.blocks);
  EXPECT_EQ(with.output_tokens, without.output_tokens);
}

// A directory is one clear error, whether the format is given or detected.
TEST_P(JsonlBadInput, DirectoryIsOneClearError) {
  std::string dir = testing::temp_path("a-directory.jsonl");
  std::filesystem::create_directories(dir);
  for (std::string format : {GetParam().name, std::string("auto")}) {
    InputError e = input_error([&] { read_trace(dir, format, {}); });
    EXPECT_EQ(e.file(), dir);
    EXPECT_NE(std::string(e.what()).find("'" + dir + "' is a directory"), std::string::npos)
        << e.what();
  }
}

// A pipe (`--trace /dev/stdin` from a shell pipe) is one clear error naming what to do, not
// "cannot read file" (issue 26).
TEST_P(JsonlBadInput, PipeIsOneClearError) {
  std::string fifo = testing::temp_path("a-pipe.jsonl");
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (std::string format : {GetParam().name, std::string("auto")}) {
    InputError e = input_error([&] { read_trace(fifo, format, {}); });
    EXPECT_EQ(e.file(), fifo);
    EXPECT_NE(std::string(e.what()).find("not a regular file (a pipe or a device)"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(fifo);
}

INSTANTIATE_TEST_SUITE_P(Formats, JsonlBadInput, ::testing::ValuesIn(jsonl_formats()),
                         [](const auto& info) { return info.param.name; });

// A timestamp beyond int64 microseconds is an error naming it, never a wrap to a negative
// time that then reads as sorted (issue 26: Mooncake >= ~9.3e15 ms, Bailian >= ~9.3e12 s).
TEST(JsonlTimestamps, TooLargeForMicrosecondsIsAnError) {
  for (auto [format, timestamp] : {std::pair{"mooncake", "9.3e15"}, {"bailian", "9.3e12"}}) {
    JsonlFormat f;
    for (auto& g : jsonl_formats())
      if (g.name == format) f = g;
    std::vector<Record> recs = {f.record(0, 0), f.record(1, 1)};
    for (auto& [key, value] : recs[1])
      if (key == "timestamp") value = timestamp;
    std::string path = write_file(std::string(format) + "-huge-time.jsonl", lines_of(recs));
    try {
      read_trace(path, format, {});
      ADD_FAILURE() << format << ": no error for timestamp " << timestamp;
    } catch (const InputError& e) {
      EXPECT_EQ(e.line(), 2u) << e.what();
      EXPECT_EQ(e.field(), "timestamp") << e.what();
    }
  }
}

TEST(Bailian, SessionsTurnsCategoriesAndKeys) {
  // Chat 99 is not in the file: its children still share a session. Line 7 comes first in time.
  std::string text =
      R"({"chat_id": 10, "parent_chat_id": -1, "timestamp": 5.5, "input_length": 40, "output_length": 7, "type": "text", "turn": 1, "hash_ids": [1, 2, 3]}
{"chat_id": 11, "parent_chat_id": -1, "timestamp": 6.0, "input_length": 20, "output_length": 3, "type": "search", "turn": 1, "hash_ids": [9, 8]}
{"chat_id": 12, "parent_chat_id": 10, "timestamp": 7.25, "input_length": 60, "output_length": 2, "type": "text", "turn": 2, "hash_ids": [1, 2, 3, 4]}
{"chat_id": 13, "parent_chat_id": 12, "timestamp": 8.0, "input_length": 70, "output_length": 1, "type": "image", "turn": 3, "hash_ids": [1, 2, 3, 4, 5]}
{"chat_id": 14, "parent_chat_id": 99, "timestamp": 9.0, "input_length": 16, "output_length": 1, "type": "text", "turn": 4, "hash_ids": [6]}
{"chat_id": 15, "parent_chat_id": 99, "timestamp": 9.5, "input_length": 17, "output_length": 1, "type": "text", "turn": 4, "hash_ids": [7, 1]}
{"chat_id": 17, "parent_chat_id": -1, "timestamp": 5.0, "input_length": 5, "output_length": 9, "type": "file", "turn": 1, "hash_ids": [1]}
)";
  std::string path = write_file("bailian.jsonl", text);
  ReadReport rep;
  Trace t = read_trace(path, "auto", {}, &rep);  // detected by chat_id
  ASSERT_EQ(t.size(), 7u);
  EXPECT_TRUE(rep.sorted);
  EXPECT_EQ(t.block_tokens, 16u);
  EXPECT_EQ(t.time,
            (std::vector<Time>{0, 500'000, 1'000'000, 2'250'000, 3'000'000, 4'000'000, 4'500'000}));
  EXPECT_EQ(t.session, (std::vector<SessionId>{0, 1, 2, 1, 1, 3, 3}));
  EXPECT_EQ(t.turn, (std::vector<uint32_t>{1, 1, 1, 2, 3, 4, 4}));
  EXPECT_EQ(t.category_names, (std::vector<std::string>{"text", "search", "image", "file"}));
  EXPECT_EQ(t.category, (std::vector<CategoryId>{3, 0, 1, 0, 2, 0, 0}));
  EXPECT_EQ(t.prompt_tokens, (std::vector<uint32_t>{5, 40, 20, 60, 70, 16, 17}));
  EXPECT_EQ(t.output_tokens, (std::vector<uint32_t>{9, 7, 3, 2, 1, 1, 1}));
  EXPECT_EQ(prompt_of(t, 0), chain({1}));
  EXPECT_EQ(prompt_of(t, 1), chain({1, 2, 3}));
  EXPECT_EQ(prompt_of(t, 3), chain({1, 2, 3, 4}));
  EXPECT_EQ(prompt_of(t, 4), chain({1, 2, 3, 4, 5}));
  EXPECT_EQ(prompt_of(t, 6), chain({7, 1}));
  EXPECT_NE(t.prompt(6)[1], t.prompt(0)[0]);  // id 1 after id 7 is another prefix
  ReadOptions b8;
  b8.block_tokens = 8;
  EXPECT_EQ(read_trace(path, "bailian", b8).block_tokens, 8u);
}

TEST(Bailian, BadParentsAndTurns) {
  auto line = [](int chat, const std::string& parent, const std::string& turn) {
    return "{\"chat_id\": " + std::to_string(chat) + ", \"parent_chat_id\": " + parent +
           ", \"timestamp\": 1, \"input_length\": 16, \"output_length\": 1, \"type\": \"text\", "
           "\"turn\": " +
           turn + ", \"hash_ids\": [1]}\n";
  };
  std::string cycle =
      write_file("cycle.jsonl", line(1, "-1", "1") + line(2, "3", "2") + line(3, "2", "2"));
  InputError e = input_error([&] { read_trace(cycle, "bailian", {}); });
  EXPECT_EQ(e.field(), "parent_chat_id");
  EXPECT_TRUE(e.line() == 2 || e.line() == 3) << e.what();
  std::string neg = write_file("neg.jsonl", line(1, "-1", "1") + line(2, "-5", "1"));
  e = input_error([&] { read_trace(neg, "bailian", {}); });
  EXPECT_EQ(e.line(), 2u);
  EXPECT_EQ(e.field(), "parent_chat_id");
  std::string self = write_file("self.jsonl", line(4, "4", "1"));
  EXPECT_EQ(input_error([&] { read_trace(self, "bailian", {}); }).field(), "parent_chat_id");
  std::string turn0 = write_file("turn0.jsonl", line(1, "-1", "0"));
  e = input_error([&] { read_trace(turn0, "bailian", {}); });
  EXPECT_EQ(e.line(), 1u);
  EXPECT_EQ(e.field(), "turn");
}

// A chat_id repeated on two records is an error naming both lines (sessions and parents would be
// ambiguous); --skip-bad-lines drops the later record.
TEST(Bailian, DuplicateChatIdNamesBothLines) {
  auto line = [](int chat, int parent) {
    return "{\"chat_id\": " + std::to_string(chat) +
           ", \"parent_chat_id\": " + std::to_string(parent) +
           ", \"timestamp\": 1, \"input_length\": 16, \"output_length\": 1, \"type\": \"text\", "
           "\"turn\": 1, \"hash_ids\": [1]}\n";
  };
  std::string path =
      write_file("dupchat.jsonl", line(1, -1) + line(2, -1) + line(3, 1) + line(2, 1));
  InputError e = input_error([&] { read_trace(path, "bailian", {}); });
  EXPECT_EQ(e.line(), 4u);
  EXPECT_EQ(e.field(), "chat_id");
  EXPECT_NE(std::string(e.what()).find("on line 2"), std::string::npos) << e.what();
  ReadOptions opts;
  opts.skip_bad_lines = true;
  EXPECT_EQ(read_trace(path, "bailian", opts).size(), 3u);
}

// Chat ids span the whole int64 range (2^63 - 1 was rejected); beyond it is an error.
TEST(Bailian, ChatIdsUpToInt64Max) {
  auto line = [](const std::string& chat, const std::string& parent, int time) {
    return "{\"chat_id\": " + chat + ", \"parent_chat_id\": " + parent +
           ", \"timestamp\": " + std::to_string(time) +
           ", \"input_length\": 16, \"output_length\": 1, \"type\": \"text\", \"turn\": 1, "
           "\"hash_ids\": [1]}\n";
  };
  std::string max = "9223372036854775807", below = "9223372036854775806";
  std::string path =
      write_file("int64max.jsonl", line(below, "-1", 1) + line(max, below, 2) + line("5", "-1", 3));
  Trace t = read_trace(path, "bailian", {});
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.session[0], t.session[1]);  // parent 2^63 - 2 read exactly, not rounded
  EXPECT_NE(t.session[0], t.session[2]);
  for (std::string bad : {"9223372036854775808", "18446744073709551615", "1e19"}) {
    std::string p = write_file("toolarge.jsonl", line(bad, "-1", 1));
    InputError e = input_error([&] { read_trace(p, "bailian", {}); });
    EXPECT_EQ(e.field(), "chat_id") << bad;
  }
}

// LMBench records carry Mooncake's field names; an absolute-nanosecond timestamp marks them as
// LMBench whether it is a string or an integer (integers were read as Mooncake milliseconds).
TEST(LmBench, IntegerTimestampsAreDetected) {
  std::string path = write_file(
      "lmbench-int.jsonl",
      R"({"timestamp": 1753780583232023294, "input_length": 377, "output_length": 2, "hash_ids": [7]}
{"timestamp": 1753780607550317897, "input_length": 2101, "output_length": 84, "hash_ids": [7, 5]}
)");
  EXPECT_EQ(detect_format(path), "lmbench");
  Trace t = read_trace(path, "auto", {});
  EXPECT_EQ(t.time, (std::vector<Time>{0, 24'318'295}));
  // Mooncake's millisecond timestamps, integers from 0, stay Mooncake.
  std::string mooncake =
      write_file("mooncake-int.jsonl",
                 R"({"timestamp": 0, "input_length": 600, "output_length": 2, "hash_ids": [7, 8]}
{"timestamp": 1500, "input_length": 10, "output_length": 2, "hash_ids": [7]}
)");
  EXPECT_EQ(detect_format(mooncake), "mooncake");
  EXPECT_EQ(read_trace(mooncake, "auto", {}).time, (std::vector<Time>{0, 1'500'000}));
}

TEST(LmBench, NanosecondStringsSortedAndRawHashesChained) {
  // The real traces list requests newest first, with string timestamps; integers also occur.
  std::string text =
      R"({"timestamp": "1753780607550317897", "input_length": 2101, "output_length": 84, "hash_ids": [2843241808, 137021281]}
{"timestamp": "1753780607488766527", "input_length": 3650, "output_length": 74, "hash_ids": [2843241808, 5]}
{"timestamp": 1753780583232023294, "input_length": 377, "output_length": 2, "hash_ids": [7]}
)";
  std::string path = write_file("lmbench.jsonl", text);
  ReadReport rep;
  Trace t = read_trace(path, "auto", {}, &rep);  // detected by the string timestamp
  ASSERT_EQ(t.size(), 3u);
  EXPECT_TRUE(rep.sorted);
  // 377 tokens in 1 hash id, 3650 and 2101 in 2: blocks of 1825 to 2100 tokens; 2048.
  EXPECT_EQ(t.block_tokens, 2048u);
  // 24,256,743,233 ns and 24,318,294,603 ns after the first request, rounded to microseconds.
  EXPECT_EQ(t.time, (std::vector<Time>{0, 24'256'743, 24'318'295}));
  EXPECT_EQ(t.prompt_tokens, (std::vector<uint32_t>{377, 3650, 2101}));
  EXPECT_EQ(t.output_tokens, (std::vector<uint32_t>{2, 74, 84}));
  EXPECT_EQ(prompt_of(t, 0), chain({7}));
  EXPECT_EQ(prompt_of(t, 1), chain({2843241808, 5}));
  EXPECT_EQ(prompt_of(t, 2), chain({2843241808, 137021281}));
  EXPECT_EQ(t.prompt(1)[0], t.prompt(2)[0]);
  EXPECT_NE(t.prompt(1)[1], t.prompt(2)[1]);
  for (size_t r = 0; r < 3; ++r) EXPECT_EQ(t.session[r], kNoSession);

  ReadOptions b16;
  b16.block_tokens = 16;
  EXPECT_EQ(read_trace(path, "lmbench", b16).block_tokens, 16u);
  ReadOptions strict;
  strict.sort_unsorted = false;
  InputError e = input_error([&] { read_trace(path, "lmbench", strict); });
  EXPECT_EQ(e.line(), 2u);
  EXPECT_EQ(e.field(), "timestamp");
}

// The block size is inferred from input_length and the hash ids (it was fixed at 256, so a
// trace of 16-token blocks counted 16 times the tokens per block, and tlru, wa and gdsf chose
// otherwise).
TEST(LmBench, BlockSizeIsInferredFromLengthsAndHashCounts) {
  auto read_with = [](const std::vector<std::pair<int, int>>& records, uint32_t flag = 0) {
    std::string text;
    for (size_t i = 0; i < records.size(); ++i) {
      text += "{\"timestamp\": \"17537806075503" + std::to_string(10000 + i) +
              "\", \"input_length\": " + std::to_string(records[i].first) +
              ", \"output_length\": 1, \"hash_ids\": [";
      for (int h = 0; h < records[i].second; ++h) text += (h ? ", " : "") + std::to_string(h + 1);
      text += "]}\n";
    }
    ReadOptions o;
    o.block_tokens = flag;
    return read_trace(write_file("lmbench-bs.jsonl", text), "lmbench", o).block_tokens;
  };
  // 16-token blocks with a partial last one: 40 tokens in 3, 32 in 2, 17 in 2.
  EXPECT_EQ(read_with({{40, 3}, {32, 2}, {17, 2}}), 16u);
  EXPECT_EQ(read_with({{512, 2}, {300, 2}, {600, 3}}), 256u);
  // No power of two fits 3 hash ids for 30 tokens and 1 for 10: the smallest size that does.
  EXPECT_EQ(read_with({{30, 3}, {10, 1}}), 10u);
  // No size fits every record (LMBench's samples): the mean tokens per hash id.
  EXPECT_EQ(read_with({{36, 1}, {18, 2}, {27, 1}}), 20u);  // 81 tokens in 4 hash ids
  EXPECT_EQ(read_with({{40, 3}}, 64), 64u);                // --block-tokens decides
}

TEST(LmBench, BadTimestamps) {
  for (std::string ts : {"\"12a\"", "\"\"", "\"-5\"", "1.5", "-7", "\"1e9\""}) {
    std::string path = write_file(
        "badts.jsonl", "{\"timestamp\": " + ts +
                           ", \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}");
    InputError e = input_error([&] { read_trace(path, "lmbench", {}); });
    EXPECT_EQ(e.line(), 1u) << ts;
    EXPECT_EQ(e.field(), "timestamp") << ts;
  }
}

TEST(Mooncake, RealTraceCounts) {
  std::string path = data_file("mooncake-conversation/conversation_trace.jsonl");
  if (path.empty()) GTEST_SKIP() << "KVPOLICY_DATA unset or the Mooncake trace is absent";
  ReadReport rep;
  Trace t = read_trace(path, "auto", {}, &rep);
  EXPECT_EQ(t.size(), 12'031u);
  EXPECT_EQ(t.num_block_accesses(), 288'500u);
  EXPECT_EQ(count_unique_blocks(t), 182'790u);
  EXPECT_EQ(t.block_tokens, 512u);
  EXPECT_EQ(rep.skipped_lines, 0u);
}

}  // namespace
}  // namespace kvpolicy
