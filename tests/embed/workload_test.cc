#include "kvpolicy/embed/workload.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../trace/trace_test_util.h"
#include "kvpolicy/core/error.h"

namespace kvpolicy::embed {
namespace {

using kvpolicy::testing::input_error;
using kvpolicy::testing::read_bytes;
using kvpolicy::testing::temp_path;
using kvpolicy::testing::write_file;

// The dlrm-locality folder, or "" when KVPOLICY_DATA is unset or lacks it.
std::string locality_dir() {
  const char* data = std::getenv("KVPOLICY_DATA");
  if (!data || !*data) return "";
  std::filesystem::path dir = std::filesystem::path(data) / "dlrm-locality";
  return std::filesystem::exists(dir / "locality_stats_2021_t856.txt") ? dir.string() : "";
}

#define REQUIRE_LOCALITY_DATA(dir)                                                       \
  std::string dir = locality_dir();                                                      \
  if (dir.empty())                                                                       \
  GTEST_SKIP() << "set KVPOLICY_DATA to the traces folder (with dlrm-locality/) to run " \
                  "this test"

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

// One block as Meta's files print it, shares given (17 each).
std::string block_text(const std::string& source, const std::string& indices,
                       const std::string& unique, const std::string& col,
                       const std::vector<std::string>& keys,
                       const std::vector<std::string>& lookups) {
  std::string s = source + "\nLocality stats after processing 1 batches of size 4\n";
  s += "Avg # of indices: " + indices + "\nAvg # of unique cols: " + unique +
       "\nAvg col size: " + col + "\nHistogram of col sizes:\n";
  for (size_t b = 0; b < kReuseBins; ++b) s += reuse_bin_label(b) + ": " + keys[b] + "\n";
  s += "[0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]\n";
  s += "['0.000', '0.5', '1.000']\n";
  s += "Ratio of index distribution at different column sizes:\n";
  for (size_t b = 0; b < kReuseBins; ++b) s += reuse_bin_label(b) + ": " + lookups[b] + "\n";
  s += "[0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]\n";
  s += "['0.000', '0.2', '1.000']\n\n";
  return s;
}

std::vector<std::string> shares(std::vector<std::string> head) {
  head.resize(kReuseBins, "0.000");
  return head;
}

// 4 keys used 1, 1, 2 and 4 times: 8 lookups, avg reuse 2.
std::string small_block(const std::string& source) {
  return block_text(source, "8", "4", "2.0", shares({"0.500", "0.250", "0.250"}),
                    shares({"0.250", "0.250", "0.500"}));
}

TEST(LocalityStats, BinsAndLabelsFollowTheFiles) {
  EXPECT_EQ(reuse_bin(1), 0u);
  EXPECT_EQ(reuse_bin(2), 1u);
  EXPECT_EQ(reuse_bin(3), 2u);
  EXPECT_EQ(reuse_bin(4), 2u);
  EXPECT_EQ(reuse_bin(5), 3u);
  EXPECT_EQ(reuse_bin(32768), 15u);
  EXPECT_EQ(reuse_bin(32769), 16u);
  EXPECT_EQ(reuse_bin(1u << 30), 16u);
  EXPECT_EQ(reuse_bin_label(0), "(0, 1]");
  EXPECT_EQ(reuse_bin_label(2), "(2, 4]");
  EXPECT_EQ(reuse_bin_label(15), "(16384, 32768]");
  EXPECT_EQ(reuse_bin_label(16), "(32768+");
}

TEST(LocalityStats, ReadsTheShippedFiles) {
  REQUIRE_LOCALITY_DATA(dir);
  auto y2021 = read_locality_stats(dir + "/locality_stats_2021_t856.txt");
  auto y2022 = read_locality_stats(dir + "/locality_stats_2022_t788.txt");
  // 2021 has a block for the unnumbered fbgemm_t856_bs65536.pt before _0 to _15.
  ASSERT_EQ(y2021.size(), 17u);
  ASSERT_EQ(y2022.size(), 16u);
  EXPECT_EQ(y2021[0].source, "fbgemm_t856_bs65536.pt");
  EXPECT_EQ(y2021[4].source, "fbgemm_t856_bs65536_3.pt");
  EXPECT_EQ(y2022[15].source, "fbgemm_t788_bs131072_15.pt");
  EXPECT_NEAR(y2021[0].avg_reuse, 887017990.0 / 128435723.0, 1e-9);
  EXPECT_NEAR(y2021[0].avg_reuse, 6.9, 0.05);
  EXPECT_NEAR(y2022[0].avg_reuse, 12.7, 0.05);
  EXPECT_DOUBLE_EQ(y2021[0].key_share[0], 0.473);
  EXPECT_DOUBLE_EQ(y2021[0].lookup_share[16], 0.019);
  EXPECT_DOUBLE_EQ(y2022[0].lookup_share[16], 0.076);
  for (const auto* file : {&y2021, &y2022})
    for (const ReuseHistogram& h : *file) {
      ASSERT_EQ(h.key_share.size(), kReuseBins) << h.source;
      ASSERT_EQ(h.lookup_share.size(), kReuseBins) << h.source;
      EXPECT_NEAR(sum(h.key_share), 1, 0.01) << h.source;
      EXPECT_NEAR(sum(h.lookup_share), 1, 0.01) << h.source;
    }
}

TEST(LocalityStats, ReadsAWrittenFile) {
  std::string path = write_file("stats.txt", small_block("a.pt") + small_block("b.pt") + "\n\n");
  auto blocks = read_locality_stats(path);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].source, "a.pt");
  EXPECT_EQ(blocks[1].source, "b.pt");
  EXPECT_DOUBLE_EQ(blocks[1].avg_reuse, 2.0);
  EXPECT_DOUBLE_EQ(blocks[1].key_share[1], 0.25);
  EXPECT_DOUBLE_EQ(blocks[1].lookup_share[2], 0.5);
  EXPECT_DOUBLE_EQ(blocks[1].key_share[16], 0.0);
}

// A FIFO blocked the reader until someone wrote to it, and /dev/zero is one line that never
// ends: both are refused before they are opened.
TEST(LocalityStats, FifosAndDevicesAreRefused) {
  std::string fifo = temp_path("stats.fifo");
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    EXPECT_NE(std::string(input_error([&] { read_locality_stats(path); }).what())
                  .find("not a regular file"),
              std::string::npos);
    EXPECT_NE(std::string(input_error([&] { read_embedding_csv(path); }).what())
                  .find("not a regular file"),
              std::string::npos);
  }
  std::filesystem::remove(fifo);
}

TEST(LocalityStats, TruncatedBlockNamesLineAndField) {
  std::string text = small_block("a.pt");
  // Keep the source, the four header lines, the title and three bins: cut after line 9.
  size_t cut = 0;
  for (int i = 0; i < 9; ++i) cut = text.find('\n', cut) + 1;
  std::string path = write_file("cut.txt", text.substr(0, cut));
  InputError e = input_error([&] { read_locality_stats(path); });
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.line(), 10u);
  EXPECT_EQ(e.field(), "Histogram of col sizes (4, 8]");
  EXPECT_NE(std::string(e.what()).find("ends inside"), std::string::npos) << e.what();
}

TEST(LocalityStats, BadLinesNameLineAndField) {
  std::string good = small_block("a.pt");
  struct Case {
    std::string from, to;
    uint64_t line;
    std::string field;
  };
  std::vector<Case> cases = {
      {"Avg # of indices: 8", "Avg # of indices: many", 3, "Avg # of indices"},
      {"Avg col size: 2.0", "Avg col size: 3.0", 5, "Avg col size"},
      {"(1, 2]: 0.250\n(2, 4]: 0.250", "(1, 2]: 0.250\n(2, 4]: x", 9,
       "Histogram of col sizes (2, 4]"},
      {"(0, 1]: 0.500", "(0, 1]: 1.500", 7, "Histogram of col sizes (0, 1]"},
      {"(0, 1]: 0.500", "(0, 2]: 0.500", 7, "Histogram of col sizes (0, 1]"},
      {"(0, 1]: 0.500", "(0, 1]: 0.400", 6, "Histogram of col sizes"},
      {"Histogram of col sizes:", "Histogram:", 6, "Histogram of col sizes"},
      {"(2, 4]: 0.250\n(4, 8]", "(2, 4]: 0.250\n\n(4, 8]", 10, "Histogram of col sizes (4, 8]"},
  };
  for (const Case& c : cases) {
    std::string text = good;
    size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    std::string path = write_file("bad.txt", text);
    InputError e = input_error([&] { read_locality_stats(path); });
    EXPECT_EQ(e.line(), c.line) << c.to << ": " << e.what();
    EXPECT_EQ(e.field(), c.field) << c.to << ": " << e.what();
  }
  InputError empty = input_error([] { read_locality_stats(write_file("empty.txt", "")); });
  EXPECT_NE(std::string(empty.what()).find("no blocks"), std::string::npos) << empty.what();
  InputError stray =
      input_error([] { read_locality_stats(write_file("s.txt", "Avg col size: 1")); });
  EXPECT_EQ(stray.line(), 1u);
  EXPECT_EQ(stray.field(), "source");
}

EmbeddingTrace trace_of(const std::vector<std::vector<EmbKey>>& samples, Time step = 10) {
  EmbeddingTrace t;
  t.name = "hand";
  Time now = 0;
  for (const auto& s : samples) {
    t.add_sample(now, s);
    now += step;
  }
  return t;
}

TEST(WorkloadHistogram, MeasuresReuseOverTheWholeTrace) {
  // Key 1 once, key 2 twice, key 3 five times (bin (4, 8]), spread over samples.
  EmbeddingTrace t = trace_of({{3, 2, 3}, {1, 3}, {3, 2, 3}});
  ReuseHistogram h = reuse_histogram(t);
  EXPECT_EQ(h.source, "hand");
  EXPECT_DOUBLE_EQ(h.avg_reuse, 8.0 / 3);
  ASSERT_EQ(h.key_share.size(), kReuseBins);
  EXPECT_DOUBLE_EQ(h.key_share[0], 1.0 / 3);
  EXPECT_DOUBLE_EQ(h.key_share[1], 1.0 / 3);
  EXPECT_DOUBLE_EQ(h.key_share[2], 0.0);
  EXPECT_DOUBLE_EQ(h.key_share[3], 1.0 / 3);
  EXPECT_DOUBLE_EQ(h.lookup_share[0], 1.0 / 8);
  EXPECT_DOUBLE_EQ(h.lookup_share[1], 2.0 / 8);
  EXPECT_DOUBLE_EQ(h.lookup_share[3], 5.0 / 8);
}

// Key shares only, as a user might write them: bins (0, 1] to (8, 16].
ReuseHistogram hand_target() {
  ReuseHistogram h;
  h.source = "hand";
  h.key_share = {0.5, 0.2, 0.15, 0.1, 0.05};
  return h;
}

// The full statistics of a population of 100 keys: 50 used once, 20 twice, 15 three times, 10
// six times and 5 twelve times (255 lookups).
ReuseHistogram population_target() {
  EmbeddingTrace t;
  t.name = "population";
  EmbKey next = 0;
  for (auto [keys, uses] : {std::pair{50, 1}, {20, 2}, {15, 3}, {10, 6}, {5, 12}})
    for (int k = 0; k < keys; ++k, ++next)
      for (int u = 0; u < uses; ++u) t.add_sample(0, std::vector<EmbKey>{next});
  return reuse_histogram(t);
}

void expect_matches(const ReuseHistogram& target, const ReuseHistogram& got) {
  ASSERT_EQ(got.key_share.size(), kReuseBins);
  for (size_t b = 0; b < kReuseBins; ++b) {
    double want = b < target.key_share.size() ? target.key_share[b] : 0;
    EXPECT_NEAR(got.key_share[b], want, 0.02) << reuse_bin_label(b);
  }
  EXPECT_NEAR(got.avg_reuse, target.avg_reuse, 0.1 * target.avg_reuse);
}

TEST(Dlrm, MatchesAHandMadeTarget) {
  DlrmOptions o;
  o.target = hand_target();
  EmbeddingTrace t = generate_dlrm(o);
  EXPECT_NO_THROW(t.validate());
  EXPECT_EQ(t.samples(), o.samples);
  EXPECT_EQ(t.name, "dlrm:hand");
  ReuseHistogram got = reuse_histogram(t);
  // Systematic rounding keeps every bin within one key of its share, far tighter than 0.02.
  double keys = static_cast<double>(count_unique_keys(t));
  for (size_t b = 0; b < kReuseBins; ++b) {
    double want = b < o.target.key_share.size() ? o.target.key_share[b] : 0;
    EXPECT_NEAR(got.key_share[b] * keys, want * keys, 1.01) << reuse_bin_label(b);
  }
}

TEST(Dlrm, MatchesAPopulationsHistogram) {
  DlrmOptions o;
  o.target = population_target();
  ASSERT_DOUBLE_EQ(o.target.avg_reuse, 2.55);
  ReuseHistogram got = reuse_histogram(generate_dlrm(o));
  expect_matches(o.target, got);
  // Lookup shares are not fitted in the cold bins: they follow from the within-bin shape.
  for (size_t b = 0; b < 5; ++b)
    EXPECT_NEAR(got.lookup_share[b], o.target.lookup_share[b], 0.03) << reuse_bin_label(b);
}

TEST(Dlrm, MatchesTheFirstBlocksOfBothFiles) {
  REQUIRE_LOCALITY_DATA(dir);
  for (std::string file : {"locality_stats_2021_t856.txt", "locality_stats_2022_t788.txt"}) {
    SCOPED_TRACE(file);
    ReuseHistogram target = read_locality_stats(dir + "/" + file).at(0);
    DlrmOptions o;
    o.target = target;
    ReuseHistogram got = reuse_histogram(generate_dlrm(o));
    expect_matches(target, got);
    std::cout << target.source << ": bin, key share target / generated, lookup share target / "
              << "generated\n";
    for (size_t b = 0; b < kReuseBins; ++b)
      std::cout << "  " << reuse_bin_label(b) << "  " << target.key_share[b] << " / "
                << got.key_share[b] << "  " << target.lookup_share[b] << " / "
                << got.lookup_share[b] << "\n";
    std::cout << "  avg reuse " << target.avg_reuse << " / " << got.avg_reuse << "\n";
    // Key shares hold to the files' three decimals (the hot bins' from their lookup shares).
    for (size_t b = 0; b < kReuseBins; ++b)
      EXPECT_NEAR(got.key_share[b], target.key_share[b], 0.0005 + 1e-4) << reuse_bin_label(b);
    // The bins above 512 print as 0.000 or 0.001 of the keys but take a quarter to a third of
    // the lookups; the trace has them too.
    double hot_target = 0, hot_got = 0;
    for (size_t b = 10; b < kReuseBins; ++b) {
      hot_target += target.lookup_share[b];
      hot_got += got.lookup_share[b];
    }
    EXPECT_GT(hot_target, 0.25);
    EXPECT_NEAR(hot_got, hot_target, 0.08);
  }
}

TEST(Dlrm, LaysOutSamplesBatchesAndTables) {
  DlrmOptions o;
  o.target = hand_target();
  o.samples = 5000;
  o.batch = 100;
  o.samples_per_second = 2000;  // a batch every 50 ms
  o.tables = 5;
  EmbeddingTrace t = generate_dlrm(o);
  ASSERT_EQ(t.samples(), 5000u);
  EXPECT_NEAR(static_cast<double>(t.lookups()) / 5000, o.pooling, 0.05 * o.pooling);
  std::vector<uint64_t> per_table(o.tables, 0);
  for (EmbKey k : t.keys) {
    ASSERT_LT(table_of(k), o.tables);
    ++per_table[table_of(k)];
  }
  for (uint64_t n : per_table) EXPECT_GT(n, t.lookups() / 10);
  for (size_t s = 0; s < t.samples(); ++s) {
    ASSERT_FALSE(t.sample(s).empty()) << s;
    ASSERT_EQ(t.sample_time[s], static_cast<Time>(s / 100) * 50000) << s;
  }
}

TEST(Dlrm, SameOptionsSameTraceOtherSeedOtherTrace) {
  DlrmOptions o;
  o.target = hand_target();
  o.samples = 2000;
  o.drift = 0.3;
  EmbeddingTrace a = generate_dlrm(o), b = generate_dlrm(o);
  EXPECT_EQ(a.keys, b.keys);
  EXPECT_EQ(a.sample_offset, b.sample_offset);
  EXPECT_EQ(a.sample_time, b.sample_time);
  o.seed = 2;
  EmbeddingTrace c = generate_dlrm(o);
  EXPECT_NE(a.keys, c.keys);
  EXPECT_NE(a.sample_offset, c.sample_offset);
}

// The share of the distinct keys of the first tenth of the samples also used in the last tenth.
double early_keys_kept(const EmbeddingTrace& t) {
  size_t tenth = t.samples() / 10;
  std::unordered_set<EmbKey> first, last;
  for (size_t s = 0; s < tenth; ++s)
    for (EmbKey k : t.sample(s)) first.insert(k);
  for (size_t s = t.samples() - tenth; s < t.samples(); ++s)
    for (EmbKey k : t.sample(s)) last.insert(k);
  size_t kept = 0;
  for (EmbKey k : first) kept += last.count(k);
  return static_cast<double>(kept) / static_cast<double>(first.size());
}

TEST(Dlrm, DriftReplacesTheHotSet) {
  DlrmOptions o;
  o.target = hand_target();
  o.target.key_share = {0.2, 0.2, 0.2, 0.2, 0.2};  // reused keys, so most appear in both tenths
  o.samples = 10000;
  double still = early_keys_kept(generate_dlrm(o));
  o.drift = 0.5;
  double half = early_keys_kept(generate_dlrm(o));
  o.drift = 1;
  double all = early_keys_kept(generate_dlrm(o));
  // Transient keys used in the first tenth never reach the last (their windows span half the
  // trace), so kept falls with drift and is nothing when every key is transient.
  EXPECT_LT(half, still - 0.1) << still << " " << half;
  EXPECT_EQ(all, 0.0);
  // The histogram does not depend on drift.
  ReuseHistogram h0 = reuse_histogram(generate_dlrm(o));
  o.drift = 0;
  ReuseHistogram h1 = reuse_histogram(generate_dlrm(o));
  EXPECT_EQ(h0.key_share, h1.key_share);
}

TEST(Dlrm, RejectsBadOptions) {
  DlrmOptions o;
  o.target = hand_target();
  auto rejects = [](DlrmOptions bad) { EXPECT_THROW(generate_dlrm(bad), ConfigError); };
  DlrmOptions x = o;
  x.drift = 1.5;
  rejects(x);
  x = o;
  x.pooling = 0.5;
  rejects(x);
  x = o;
  x.tables = 0;
  rejects(x);
  x = o;
  x.batch = 0;
  rejects(x);
  x = o;
  x.samples_per_second = 0;
  rejects(x);
  x = o;
  x.target.key_share.clear();
  rejects(x);
  x = o;
  x.target.key_share = {0, 0};
  rejects(x);
}

TEST(WorkloadZipf, MostPopularKeyIsMostLookedUp) {
  EmbeddingTrace t = generate_zipf(1000, 1.0, 4000, 20, 4, 7);
  EXPECT_NO_THROW(t.validate());
  EXPECT_EQ(t.samples(), 4000u);
  EXPECT_EQ(t.lookups(), 80000u);
  std::unordered_map<EmbKey, uint64_t> count;
  for (EmbKey k : t.keys) ++count[k];
  EmbKey top = 0;
  uint64_t most = 0;
  for (auto [k, n] : count)
    if (n > most) top = k, most = n;
  EXPECT_EQ(top, make_key(0, 0));  // rank 0
  // Rank 1 (table 1, index 0) gets about half of rank 0's lookups at alpha = 1.
  double ratio = static_cast<double>(count[make_key(1, 0)]) / count[make_key(0, 0)];
  EXPECT_NEAR(ratio, 0.5, 0.05);
  EmbeddingTrace again = generate_zipf(1000, 1.0, 4000, 20, 4, 7);
  EXPECT_EQ(again.keys, t.keys);
  EXPECT_NE(generate_zipf(1000, 1.0, 4000, 20, 4, 8).keys, t.keys);
  EXPECT_THROW(generate_zipf(0, 1.0, 10, 20, 4, 7), ConfigError);
}

TEST(EmbeddingCsv, RoundTrip) {
  std::string path = temp_path("round.csv");
  DlrmOptions o;
  o.target = hand_target();
  o.samples = 3000;
  o.tables = 3;
  EmbeddingTrace t = generate_dlrm(o);
  t.name = std::filesystem::path(path).stem().string();
  t.keys[0] = make_key((1u << 24) - 1, (uint64_t{1} << 40) - 1);  // the largest key
  write_embedding_csv(t, path);
  EmbeddingCsvReport report;
  EmbeddingTrace back = read_embedding_csv(path, false, &report);
  EXPECT_EQ(report.rows, t.lookups());
  EXPECT_EQ(back.name, t.name);
  EXPECT_EQ(back.keys, t.keys);
  EXPECT_EQ(back.sample_offset, t.sample_offset);
  EXPECT_EQ(back.sample_time, t.sample_time);
  EXPECT_EQ(read_bytes(path).substr(0, 32), "timestamp_us,table,index,sample\n");
}

TEST(EmbeddingCsv, ReadsSampleIdsAsGiven) {
  std::string path = write_file("ids.csv",
                                "timestamp_us,table,index,sample\r\n"
                                "5,0,7,42\r\n5,1,7,42\r\n5,0,8,3\r\n\r\n9,2,1,100\r\n");
  EmbeddingTrace t = read_embedding_csv(path);
  ASSERT_EQ(t.samples(), 3u);
  EXPECT_EQ(t.sample_offset, (std::vector<uint64_t>{0, 2, 3, 4}));
  EXPECT_EQ(t.sample_time, (std::vector<Time>{5, 5, 9}));
  EXPECT_EQ(t.keys[1], make_key(1, 7));
}

TEST(EmbeddingCsv, BadRowsNameLineAndColumn) {
  struct Case {
    std::string row;
    std::string column;
  };
  // Each row follows "10,0,1,0" on line 2, so it is line 3.
  std::vector<Case> cases = {
      {"-1,0,1,1", "timestamp_us"},
      {"1.5,0,1,1", "timestamp_us"},
      {"abc,0,1,1", "timestamp_us"},
      {"99999999999999999999,0,1,1", "timestamp_us"},
      {"10,-2,1,1", "table"},
      {"10,16777216,1,1", "table"},
      {"10,0,1099511627776,1", "index"},
      {"10,0,1e3,1", "index"},
      {"10,0,,1", "index"},
      {"10,0,1", "sample"},
      {"10,0,1,1,5", "column 5"},
      {"11,0,2,0", "timestamp_us"},  // sample 0's rows disagree on the time stamp
      {"9,0,2,1", "timestamp_us"},   // time goes back
  };
  for (const Case& c : cases) {
    std::string path =
        write_file("bad.csv", "timestamp_us,table,index,sample\n10,0,1,0\n" + c.row + "\n");
    InputError e = input_error([&] { read_embedding_csv(path); });
    EXPECT_EQ(e.file(), path) << c.row;
    EXPECT_EQ(e.line(), 3u) << c.row << ": " << e.what();
    EXPECT_EQ(e.field(), c.column) << c.row << ": " << e.what();
  }
  // A sample id coming back after another sample.
  std::string path =
      write_file("again.csv", "timestamp_us,table,index,sample\n10,0,1,0\n10,0,2,1\n10,0,3,0\n");
  InputError again = input_error([&] { read_embedding_csv(path); });
  EXPECT_EQ(again.line(), 4u);
  EXPECT_EQ(again.field(), "sample");
}

TEST(EmbeddingCsv, SkipsAndCountsBadRows) {
  std::string path = write_file("skip.csv",
                                "timestamp_us,table,index,sample\n10,0,1,0\n11,0,2,0\n"
                                "x,0,1,1\n12,0,3,1\n5,0,4,2\n12,0,5,1\n");
  EXPECT_THROW(read_embedding_csv(path), InputError);
  EmbeddingCsvReport report;
  EmbeddingTrace t = read_embedding_csv(path, true, &report);
  EXPECT_EQ(report.skipped_rows, 3u);
  EXPECT_EQ(report.rows, 3u);
  EXPECT_NE(report.first_skipped.find(":3:"), std::string::npos) << report.first_skipped;
  EXPECT_EQ(t.keys, (std::vector<EmbKey>{make_key(0, 1), make_key(0, 3), make_key(0, 5)}));
  EXPECT_EQ(t.sample_time, (std::vector<Time>{10, 12}));
}

TEST(EmbeddingCsv, EmptyFilesAndBadHeaders) {
  InputError empty = input_error([] { read_embedding_csv(write_file("e.csv", "")); });
  EXPECT_NE(std::string(empty.what()).find("empty file"), std::string::npos) << empty.what();
  InputError header_only = input_error(
      [] { read_embedding_csv(write_file("h.csv", "timestamp_us,table,index,sample\n")); });
  EXPECT_NE(std::string(header_only.what()).find("no rows"), std::string::npos);
  InputError header = input_error(
      [] { read_embedding_csv(write_file("b.csv", "time,table,index,sample\n1,0,0,0\n")); });
  EXPECT_EQ(header.line(), 1u);
  EXPECT_EQ(header.field(), "header");
  InputError none_valid = input_error([] {
    read_embedding_csv(write_file("n.csv", "timestamp_us,table,index,sample\n-1,0,0,0\n"), true);
  });
  EXPECT_NE(std::string(none_valid.what()).find("no valid rows"), std::string::npos);
  EXPECT_THROW(read_embedding_csv(temp_path("missing.csv")), InputError);
}

TEST(EmbeddingCsv, WriterRefusesWhatTheFormatCannotCarry) {
  std::string path = temp_path("refused.csv");
  EmbeddingTrace empty_sample = trace_of({{1, 2}, {}});
  EXPECT_THROW(write_embedding_csv(empty_sample, path), Error);
  EXPECT_FALSE(std::filesystem::exists(path));
  EmbeddingTrace ok = trace_of({{1, 2}});
  std::string nowhere = temp_path("no-such-dir") + "/t.csv";
  try {
    write_embedding_csv(ok, nowhere);
    ADD_FAILURE() << "writing into a missing directory did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(nowhere), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvpolicy::embed
