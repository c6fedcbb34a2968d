// The native binary cache and libCacheSim's oracleGeneral format: round trips, a hand-worked
// next_access_vtime example, and truncated or corrupt files.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "kvpolicy/core/input_file.h"
#include "kvpolicy/trace/trace.h"
#include "kvpolicy/trace/trace_io.h"
#include "kvpolicy/trace/trace_stream.h"
#include "trace_test_util.h"

namespace kvpolicy {
namespace {

using testing::input_error;
using testing::read_bytes;
using testing::temp_path;
using testing::write_file;

void expect_same(const Trace& a, const Trace& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.category_names, b.category_names);
  testing::expect_same_requests(a, b);
}

// A random prefix workload: prompts extend earlier prompts, so keys repeat.
Trace random_trace(uint64_t seed, size_t requests) {
  std::mt19937_64 rng(seed);
  Trace t;
  t.name = "random-" + std::to_string(seed);
  t.block_tokens = 16;
  t.category_names = {"text", "image", "a \"quoted\" type"};
  std::vector<std::vector<uint64_t>> prompts;
  Time now = 0;
  for (size_t r = 0; r < requests; ++r) {
    std::vector<uint64_t> ids;
    if (!prompts.empty() && rng() % 3) {
      ids = prompts[rng() % prompts.size()];
      ids.resize(rng() % (ids.size() + 1));
    }
    size_t extra = rng() % 5;
    for (size_t i = 0; i < extra; ++i) ids.push_back(rng() % 8);
    prompts.push_back(ids);
    now += static_cast<Time>(rng() % 2'500'000);
    t.add_request(now, ids, static_cast<uint32_t>(ids.size() * 16 - rng() % 3 * (!ids.empty())),
                  static_cast<uint32_t>(rng() % 100), static_cast<SessionId>(rng() % 7),
                  1 + static_cast<uint32_t>(rng() % 4), static_cast<CategoryId>(rng() % 3),
                  static_cast<uint32_t>(rng() % 5));
  }
  return t;
}

TEST(Native, RoundTripIsIdentical) {
  for (uint64_t seed : {1, 2, 3}) {
    Trace t = random_trace(seed, 300);
    std::string path = temp_path("rt.kvtrace");
    write_native(t, path);
    ReadReport rep;
    Trace back = read_trace(path, "auto", {}, &rep);  // .kvtrace -> native
    expect_same(t, back);
    EXPECT_EQ(rep.lines, 300u);
  }
  // An empty-prompt, empty-name, no-category trace too.
  Trace small;
  small.add_request(5, {}, 0, 1);
  std::string path = temp_path("small.kvtrace");
  write_native(small, path);
  Trace back = read_trace(path, "native", {});
  small.name = path;  // an unnamed trace takes its file's name
  expect_same(small, back);
}

// A native file with a valid checksum can still hold a session id no reader writes: 0xFFFFFFFE
// made trace stats allocate 32 GiB (issue 26). It is one clear error naming the field.
TEST(Native, SessionIdsBeyondTheRequestsAreAnError) {
  Trace t;
  t.add_request(0, std::vector<uint64_t>{1, 2}, 32, 4, 0);
  t.add_request(1, std::vector<uint64_t>{1, 3}, 32, 4, 0xFFFFFFFEu);
  std::string path = temp_path("sparse-session.kvtrace");
  write_native(t, path);
  try {
    read_trace(path, "native", {});
    FAIL() << "read a session id of 0xFFFFFFFE";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "session");
    EXPECT_NE(std::string(e.what()).find("4294967294"), std::string::npos) << e.what();
  }
}

TEST(Native, MaxRequestsAndBlockTokensOptions) {
  Trace t = random_trace(4, 50);
  std::string path = temp_path("opts.kvtrace");
  write_native(t, path);
  ReadOptions opts;
  opts.max_requests = 20;
  opts.block_tokens = 32;
  Trace back = read_trace(path, "native", opts);
  ASSERT_EQ(back.size(), 20u);
  EXPECT_EQ(back.block_tokens, 32u);
  EXPECT_EQ(back.num_block_accesses(), t.block_offset[20]);
  for (size_t r = 0; r < 20; ++r) {
    EXPECT_EQ(back.time[r], t.time[r]);
    EXPECT_TRUE(std::equal(back.prompt(r).begin(), back.prompt(r).end(), t.prompt(r).begin()));
  }
}

TEST(Native, TruncatedOrCorruptFilesGiveClearErrors) {
  Trace t = random_trace(5, 100);
  std::string path = temp_path("good.kvtrace");
  write_native(t, path);
  std::string bytes = read_bytes(path);
  // Cut anywhere: in the header, the name, the categories, every column, one byte short.
  for (size_t keep : {size_t{1}, size_t{20}, size_t{47}, size_t{50}, size_t{70}, bytes.size() / 3,
                      bytes.size() / 2, bytes.size() - 9, bytes.size() - 1}) {
    std::string cut = write_file("cut.kvtrace", bytes.substr(0, keep));
    InputError e = input_error([&] { read_trace(cut, "native", {}); });
    EXPECT_EQ(e.file(), cut);
    std::string what = e.what();
    EXPECT_TRUE(what.find("truncated") != std::string::npos ||
                what.find("not a kvpolicy native trace") != std::string::npos)
        << keep << ": " << what;
  }
  // Trailing bytes.
  std::string longer = write_file("long.kvtrace", bytes + "xyz");
  EXPECT_NE(
      std::string(input_error([&] { read_trace(longer, "native", {}); }).what()).find("trailing"),
      std::string::npos);
  // A flipped bit anywhere after the header's checksum field fails the checksum (or, in the
  // sizes, the length checks).
  std::mt19937_64 rng(9);
  for (int i = 0; i < 40; ++i) {
    std::string bad = bytes;
    size_t at = i == 0 ? 12 : 48 + rng() % (bytes.size() - 48);  // 12: block_tokens
    bad[at] = static_cast<char>(bad[at] ^ (1 << (rng() % 8)));
    std::string p = write_file("flip.kvtrace", bad);
    InputError e = input_error([&] { read_trace(p, "native", {}); });
    EXPECT_EQ(e.file(), p);
  }
  std::string magic = bytes;
  magic[0] = 'X';
  std::string pm = write_file("magic.kvtrace", magic);
  EXPECT_EQ(input_error([&] { read_trace(pm, "native", {}); }).field(), "magic");
  std::string version = bytes;
  version[8] = 9;
  std::string pv = write_file("version.kvtrace", version);
  EXPECT_EQ(input_error([&] { read_trace(pv, "native", {}); }).field(), "version");
  std::string empty = write_file("empty.kvtrace", "");
  EXPECT_NE(
      std::string(input_error([&] { read_trace(empty, "native", {}); }).what()).find("empty file"),
      std::string::npos);
  std::string none = temp_path("nodir/none.kvtrace");
  EXPECT_NE(
      std::string(input_error([&] { read_trace(none, "auto", {}); }).what()).find("cannot read"),
      std::string::npos);
}

// A native file with a valid checksum but a time past 2^62 us or a turn 0 is refused alike by
// the whole-trace reader and the stream: a stream that let one through fed WA's refit and the
// noisy oracle times whose sums overflow (issue 32).
TEST(Native, TheStreamChecksRequestsAsTheWholeReaderDoes) {
  Trace t;
  t.name = "x";
  t.add_request(0, std::vector<uint64_t>{1, 2}, 32, 4);
  t.add_request(1, std::vector<uint64_t>{1, 3}, 32, 4);
  std::string good = temp_path("good.kvtrace");
  write_native(t, good);
  const std::string bytes = read_bytes(good);
  const size_t n = 2, time_at = 48 + t.name.size(), turn_at = time_at + n * 12;
  // `bytes` with `value` at `at` and the checksum sealed again, as a file.
  auto crafted = [&](size_t at, auto value, const std::string& name) {
    std::string b = bytes;
    std::memcpy(b.data() + at, &value, sizeof value);
    std::string path = write_file(name, b);
    std::optional<uint64_t> sum = native_trace_checksum(path);
    EXPECT_TRUE(sum);
    std::memcpy(b.data() + kNativeChecksumOffset, &*sum, 8);
    return write_file(name, b);
  };
  struct Case {
    std::string path, field, what;
  };
  const Case cases[] = {
      {crafted(time_at + 8, Time{INT64_MAX - 5}, "late.kvtrace"), "time", "past 2^62"},
      {crafted(time_at, Time{-1}, "negative.kvtrace"), "time", "times go back"},
      {crafted(turn_at + 4, uint32_t{0}, "turn0.kvtrace"), "turn", "turn 0"},
  };
  for (const Case& c : cases) {
    InputError whole = input_error([&] { read_trace(c.path, "native", {}); });
    EXPECT_EQ(whole.field(), c.field) << whole.what();
    EXPECT_NE(std::string(whole.what()).find(c.what), std::string::npos) << whole.what();
    InputError streamed = input_error([&] {
      auto stream = open_trace_stream(c.path, "native", {});
      Trace chunk;
      while (stream->next(chunk, 1)) {
      }
    });
    EXPECT_EQ(std::string(streamed.what()), std::string(whole.what()));
  }
}

// A sparse file whose header claims more blocks than memory holds (the file's size matching
// them) made the whole-trace reader allocate it all: an out-of-memory "internal error".
TEST(Native, ASparseFileLargerThanMemoryIsRefused) {
  const uint64_t blocks = (physical_memory_bytes() + (uint64_t{1} << 30)) / 8;
  unsigned char h[48] = {'K', 'V', 'P', 'T', 'R', 'A', 'C', 'E'};
  const uint32_t version = 1, block_tokens = 16;
  const uint64_t requests = 1;
  std::memcpy(h + 8, &version, 4);
  std::memcpy(h + 12, &block_tokens, 4);
  std::memcpy(h + 16, &requests, 8);
  std::memcpy(h + 24, &blocks, 8);
  std::string path = write_file("sparse.kvtrace", std::string(reinterpret_cast<char*>(h), 48));
  std::filesystem::resize_file(path, 48 + 30 + 2 * 8 + blocks * 8);  // the columns exactly
  std::string what = input_error([&] { read_trace(path, "native", {}); }).what();
  EXPECT_NE(what.find("more than this machine's"), std::string::npos) << what;
  EXPECT_NE(what.find("simulate --stream"), std::string::npos) << what;
  std::filesystem::remove(path);
}

// Times from outside the readers (a trace built through the C++ API) are checked where they
// enter: a trace's validate, as the readers keep them.
TEST(Native, TracesHoldTimesBelow2To62AndTurnsFrom1) {
  Trace t;
  t.add_request(kMaxTime, std::vector<uint64_t>{1}, 16, 0);
  EXPECT_THROW(t.validate(), Error);
  EXPECT_THROW(write_native(t, temp_path("late.kvtrace")), Error);
  Trace turn0;
  turn0.add_request(0, std::vector<uint64_t>{1}, 16, 0, kNoSession, 0);
  EXPECT_THROW(turn0.validate(), Error);
}

// The optional continuation column: written as version 2 only when present, read back exactly,
// cut by max_requests, and a trace without it stays a version-1 file.
TEST(Native, ContinuationColumnRoundTrips) {
  Trace plain = random_trace(6, 120);
  std::string p1 = temp_path("plain.kvtrace");
  write_native(plain, p1);
  std::string plain_bytes = read_bytes(p1);
  uint32_t version;
  std::memcpy(&version, plain_bytes.data() + 8, 4);
  EXPECT_EQ(version, 1u);
  Trace back = read_trace(p1, "native", {});
  EXPECT_FALSE(back.has_continuation());
  expect_same(plain, back);

  Trace scored = plain;
  std::mt19937_64 rng(6);
  for (size_t r = 0; r < scored.size(); ++r)
    scored.continuation.push_back(r == 0 ? 0.0f : r == 1 ? 1.0f : float(rng() % 1000) / 999.0f);
  std::string p2 = temp_path("scored.kvtrace");
  write_native(scored, p2);
  std::string bytes = read_bytes(p2);
  std::memcpy(&version, bytes.data() + 8, 4);
  EXPECT_EQ(version, 2u);
  EXPECT_EQ(bytes.size(), plain_bytes.size() + 4 * scored.size());
  back = read_trace(p2, "native", {});
  ASSERT_TRUE(back.has_continuation());
  expect_same(scored, back);

  ReadOptions opts;
  opts.max_requests = 30;
  back = read_trace(p2, "native", opts);
  ASSERT_EQ(back.continuation.size(), 30u);
  EXPECT_TRUE(
      std::equal(back.continuation.begin(), back.continuation.end(), scored.continuation.begin()));
  back.validate();

  // Cut into the column, or one value flipped: the length check or the checksum refuses it.
  std::string cut = write_file("cut.kvtrace", bytes.substr(0, bytes.size() - 2));
  EXPECT_NE(
      std::string(input_error([&] { read_trace(cut, "native", {}); }).what()).find("truncated"),
      std::string::npos);
  std::string flipped = bytes;
  flipped[bytes.size() - 3] ^= 0x10;
  std::string pf = write_file("flip.kvtrace", flipped);
  EXPECT_EQ(input_error([&] { read_trace(pf, "native", {}); }).field(), "checksum");
  // A version-1 header on a file holding the column: trailing bytes, not a silent misread.
  std::string relabelled = bytes;
  relabelled[8] = 1;
  std::string pr = write_file("relabelled.kvtrace", relabelled);
  EXPECT_NE(std::string(input_error([&] { read_trace(pr, "native", {}); }).what()).find("trailing"),
            std::string::npos);
  // A value out of [0, 1] is refused by the writer (Trace::validate).
  scored.continuation[5] = 1.5f;
  EXPECT_THROW(write_native(scored, temp_path("bad.kvtrace")), Error);
}

struct OgRecord {
  uint32_t clock;
  uint64_t obj;
  uint32_t size;
  int64_t next;
};

std::vector<OgRecord> parse_og(const std::string& bytes) {
  EXPECT_EQ(bytes.size() % 24, 0u);
  std::vector<OgRecord> out(bytes.size() / 24);
  for (size_t i = 0; i < out.size(); ++i) {
    const char* p = bytes.data() + i * 24;
    std::memcpy(&out[i].clock, p, 4);
    std::memcpy(&out[i].obj, p + 4, 8);
    std::memcpy(&out[i].size, p + 12, 4);
    std::memcpy(&out[i].next, p + 16, 8);
  }
  return out;
}

TEST(OracleGeneral, HandExampleNextAccess) {
  // r0 = [a b] at 0 s, r1 = [a c] at 1.5 s, r2 = [a b d] at 3 s (times in microseconds, starting
  // at 2 s to check that they count from the first request).
  Trace t;
  t.add_request(2'000'000, std::vector<uint64_t>{1, 2}, 32, 1);
  t.add_request(3'500'000, std::vector<uint64_t>{1, 3}, 32, 1);
  t.add_request(5'000'000, std::vector<uint64_t>{1, 2, 4}, 48, 1);
  BlockKey A = chain_key(kRootKey, 1), AB = chain_key(A, 2), AC = chain_key(A, 3),
           ABD = chain_key(AB, 4);
  std::string path = temp_path("hand.oracleGeneral");
  write_oracle_general(t, path, 7);
  auto recs = parse_og(read_bytes(path));
  ASSERT_EQ(recs.size(), 7u);
  // Records 1..7 (1-based, as libCacheSim counts): A AB | A AC | A AB ABD.
  std::vector<uint64_t> objs{A, AB, A, AC, A, AB, ABD};
  std::vector<uint32_t> clocks{0, 0, 1, 1, 3, 3, 3};
  std::vector<int64_t> next{3, 6, 5, -1, -1, -1, -1};
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(recs[i].obj, objs[i]) << i;
    EXPECT_EQ(recs[i].clock, clocks[i]) << i;
    EXPECT_EQ(recs[i].size, 7u) << i;
    EXPECT_EQ(recs[i].next, next[i]) << i;
  }
  // Read back: one single-block request per record, the key chained once more from the root.
  ReadReport rep;
  Trace back = read_trace(path, "auto", {}, &rep);
  ASSERT_EQ(back.size(), 7u);
  EXPECT_FALSE(rep.sorted);
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(back.prompt_blocks(i), 1u);
    EXPECT_EQ(back.prompt(i)[0], chain_key(kRootKey, objs[i]));
    EXPECT_EQ(back.time[i], static_cast<Time>(clocks[i]) * kMicrosPerSecond);
    EXPECT_EQ(back.prompt_tokens[i], back.block_tokens);
  }
}

TEST(OracleGeneral, NextAccessMatchesBruteForceAndRoundTrips) {
  Trace t = random_trace(11, 200);
  std::string path = temp_path("rand.oracleGeneral");
  write_oracle_general(t, path);
  auto recs = parse_og(read_bytes(path));
  ASSERT_EQ(recs.size(), t.num_block_accesses());
  for (size_t i = 0; i < recs.size(); ++i) {
    int64_t want = -1;
    for (size_t j = i + 1; j < recs.size() && want < 0; ++j)
      if (t.blocks[j] == t.blocks[i]) want = static_cast<int64_t>(j) + 1;
    ASSERT_EQ(recs[i].next, want) << i;
    ASSERT_EQ(recs[i].obj, t.blocks[i]);
    ASSERT_EQ(recs[i].size, 1u);
  }
  Trace back = read_trace(path, "oracle-general", {});
  ASSERT_EQ(back.size(), t.num_block_accesses());
  EXPECT_EQ(count_unique_blocks(back), count_unique_blocks(t));
  size_t a = 0;
  for (size_t r = 0; r < t.size(); ++r)
    for (BlockKey k : t.prompt(r)) {
      EXPECT_EQ(back.prompt(a)[0], chain_key(kRootKey, k));
      EXPECT_EQ(back.time[a], (t.time[r] - t.time[0]) / kMicrosPerSecond * kMicrosPerSecond);
      ++a;
    }
}

std::string og_bytes(const std::vector<OgRecord>& recs) {
  std::string s(recs.size() * 24, '\0');
  for (size_t i = 0; i < recs.size(); ++i) {
    char* p = s.data() + i * 24;
    std::memcpy(p, &recs[i].clock, 4);
    std::memcpy(p + 4, &recs[i].obj, 8);
    std::memcpy(p + 12, &recs[i].size, 4);
    std::memcpy(p + 16, &recs[i].next, 8);
  }
  return s;
}

TEST(OracleGeneral, BadInput) {
  std::vector<OgRecord> recs{{100, 5, 1, -1}, {103, 6, 1, -1}, {101, 5, 1, -1}, {104, 7, 1, -1}};
  std::string path = write_file("unsorted.oracleGeneral", og_bytes(recs));
  ReadReport rep;
  Trace t = read_trace(path, "auto", {}, &rep);
  EXPECT_TRUE(rep.sorted);
  EXPECT_EQ(t.time, (std::vector<Time>{0, 1'000'000, 3'000'000, 4'000'000}));
  EXPECT_EQ(t.prompt(1)[0], chain_key(kRootKey, 5));
  ReadOptions strict;
  strict.sort_unsorted = false;
  InputError e = input_error([&] { read_trace(path, "oracle-general", strict); });
  EXPECT_EQ(e.line(), 3u);  // the record number
  EXPECT_EQ(e.field(), "clock_time");

  std::string bytes = og_bytes(recs);
  std::string cut = write_file("cut.oracleGeneral", bytes.substr(0, bytes.size() - 5));
  e = input_error([&] { read_trace(cut, "oracle-general", {}); });
  EXPECT_EQ(e.file(), cut);
  EXPECT_EQ(e.line(), 4u);
  EXPECT_NE(std::string(e.what()).find("truncated record"), std::string::npos) << e.what();
  ReadOptions skip;
  skip.skip_bad_lines = true;
  ReadReport srep;
  Trace partial = read_trace(cut, "oracle-general", skip, &srep);
  EXPECT_EQ(partial.size(), 3u);
  EXPECT_EQ(srep.skipped_lines, 1u);

  std::string empty = write_file("empty.oracleGeneral", "");
  EXPECT_NE(
      std::string(input_error([&] { read_trace(empty, "auto", {}); }).what()).find("empty file"),
      std::string::npos);
  std::string tiny = write_file("tiny.bin", "abc");
  EXPECT_NE(std::string(input_error([&] { read_trace(tiny, "auto", {}); }).what())
                .find("truncated record"),
            std::string::npos);
  std::string none = temp_path("nodir/x.oracleGeneral");
  EXPECT_NE(std::string(input_error([&] { read_trace(none, "oracle-general", {}); }).what())
                .find("cannot read"),
            std::string::npos);
}

// A conversion that fails half-way (here a time past oracleGeneral's 32-bit seconds) leaves the
// file that was there, not a shorter one that reads as a valid trace, and no temporary.
TEST(OracleGeneral, FailedWriteLeavesTheOldFile) {
  std::string path = write_file("old.oracleGeneral", "previous conversion");
  Trace t;
  t.add_request(0, std::vector<uint64_t>{1, 2}, 32, 1);
  t.add_request(Time{1} << 53, std::vector<uint64_t>{1, 3}, 32, 1);
  EXPECT_THROW(write_oracle_general(t, path), ConfigError);
  EXPECT_EQ(read_bytes(path), "previous conversion");
  auto dir = std::filesystem::path(path).parent_path();
  for (auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_FALSE(
        e.path().filename().string().starts_with(".OracleGeneral.FailedWriteLeavesTheOldFile"))
        << e.path();
}

TEST(BinaryFormats, MooncakeRoundTrips) {
  const char* dir = std::getenv("KVPOLICY_DATA");
  std::string path =
      dir ? std::string(dir) + "/mooncake-conversation/conversation_trace.jsonl" : std::string();
  if (path.empty() || !std::filesystem::exists(path))
    GTEST_SKIP() << "KVPOLICY_DATA unset or the Mooncake trace is absent";
  Trace t = read_trace(path, "mooncake", {});
  infer_sessions(t);
  std::string native = temp_path("mooncake.kvtrace");
  write_native(t, native);
  expect_same(t, read_trace(native, "auto", {}));
  std::string og = temp_path("mooncake.oracleGeneral");
  write_oracle_general(t, og);
  Trace flat = read_trace(og, "auto", {});
  EXPECT_EQ(flat.size(), 288'500u);
  EXPECT_EQ(count_unique_blocks(flat), 182'790u);
}

}  // namespace
}  // namespace kvpolicy
