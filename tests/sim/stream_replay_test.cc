// Streamed replay against the in-memory one: the stream readers give the trace's requests, the
// external oracle equals compute_oracle, and replays give identical results (every field but the
// timings), on generated traces and, with KVPOLICY_DATA, on Mooncake.
#include "kvpolicy/sim/stream_replay.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "kvpolicy/core/error.h"
#include "kvpolicy/sim/ttft_tally.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/trace_io.h"
#include "support/random_workload.h"
#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name()))
      .string();
}

// Every request of a stream, read in chunks of `chunk` requests, as one trace.
Trace drain(TraceStream& s, size_t chunk) {
  Trace all, part;
  while (s.next(part, chunk)) {
    all.name = part.name;
    all.block_tokens = part.block_tokens;
    all.category_names = part.category_names;
    for (size_t r = 0; r < part.size(); ++r) {
      all.add_request_keys(part.time[r], part.prompt(r), part.prompt_tokens[r],
                           part.output_tokens[r], part.session[r], part.turn[r], part.category[r],
                           part.user[r]);
      if (part.has_continuation()) all.continuation.push_back(part.continuation[r]);
    }
  }
  return all;
}

// A result with its timings zeroed: everything else must match exactly.
std::string without_timings(ReplayResult r) {
  r.replay_seconds = r.replay_cpu_seconds = r.ns_per_access = 0;
  return r.to_json();
}

TEST(TtftTally, EqualsSortingEveryRequest) {
  CostModel cost = CostModel().with_block_tokens(16);
  Rng rng(7);
  TtftTally tally;
  std::vector<double> ttft;
  for (int i = 0; i < 5000; ++i) {
    uint32_t prompt = 16 * (1 + rng.next() % 40), hit = rng.next() % 41,
             dram = hit ? rng.next() % (hit + 1) : 0;
    tally.add(prompt, hit, dram);
    ttft.push_back(replay_ttft_ms(cost, prompt, hit, dram, 16));
  }
  TailMetrics want = tail_metrics(ttft, 5, 20), got = tally.metrics(cost, 16, 5, 20);
  EXPECT_EQ(got.requests, want.requests);
  EXPECT_EQ(got.p50_ms, want.p50_ms);
  EXPECT_EQ(got.p90_ms, want.p90_ms);
  EXPECT_EQ(got.p95_ms, want.p95_ms);
  EXPECT_EQ(got.p99_ms, want.p99_ms);
  EXPECT_EQ(got.mean_ms, want.mean_ms);
  EXPECT_EQ(got.tel_ms, want.tel_ms);
  EXPECT_EQ(got.slo_violation_rate, want.slo_violation_rate);
}

TEST(TraceStream, NativeGivesTheTraceInAnyChunking) {
  Trace t = testing::random_workload({.seed = 3, .requests = 500});
  std::string path = temp_path("stream") + ".kvtrace";
  write_native(t, path);
  for (size_t chunk : {1, 7, 1000}) {
    auto s = open_trace_stream(path, "auto", {});
    testing::expect_same_requests(drain(*s, chunk), read_trace(path, "native", {}));
  }
  ReadOptions first;
  first.max_requests = 123;
  testing::expect_same_requests(drain(*open_trace_stream(path, "native", first), 50),
                                read_trace(path, "native", first));
  std::filesystem::remove(path);
}

TEST(TraceStream, OracleGeneralAndMooncakeGiveTheWholeTraceReadersRequests) {
  Trace t = testing::random_workload({.seed = 4, .requests = 400, .continuation = false});
  std::string og = temp_path("stream") + ".oracleGeneral";
  write_oracle_general(t, og);
  testing::expect_same_requests(drain(*open_trace_stream(og, "auto", {}), 33),
                                read_trace(og, "oracle-general", {}));
  std::filesystem::remove(og);

  std::string mc = temp_path("stream") + ".jsonl";
  {
    std::ofstream out(mc);
    out << "\xEF\xBB\xBF";
    for (int r = 0; r < 50; ++r) {
      out << "{\"timestamp\": " << r * 10 << ", \"input_length\": " << 512 * (1 + r % 3)
          << ", \"output_length\": 7, \"hash_ids\": [";
      for (int j = 0; j <= r % 3; ++j) out << (j ? ", " : "") << (r % 5) * 10 + j;
      out << "]}\n";
      if (r % 17 == 0) out << "   \n";
    }
  }
  testing::expect_same_requests(drain(*open_trace_stream(mc, "mooncake", {}), 6),
                                read_trace(mc, "mooncake", {}));
  std::filesystem::remove(mc);
}

TEST(TraceStream, BadInputNamesFileLineAndField) {
  std::string mc = temp_path("bad") + ".jsonl";
  {
    std::ofstream out(mc);
    out << R"({"timestamp": 0, "input_length": 512, "output_length": 1, "hash_ids": [1]})"
        << "\n";
    out << R"({"timestamp": 5, "input_length": 512, "output_length": 1, "hash_ids": [1]})"
        << "\n";
    out << R"({"timestamp": 9, "input_length": "x", "output_length": 1, "hash_ids": [1]})"
        << "\n";
  }
  auto s = open_trace_stream(mc, "mooncake", {});
  Trace chunk;
  try {
    while (s->next(chunk, 1)) {
    }
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), mc);
    EXPECT_EQ(e.line(), 3u);
    EXPECT_EQ(e.field(), "input_length");
  }
  {
    std::ofstream out(mc);
    out << R"({"timestamp": 9, "input_length": 512, "output_length": 1, "hash_ids": [1]})"
        << "\n";
    out << R"({"timestamp": 5, "input_length": 512, "output_length": 1, "hash_ids": [1]})"
        << "\n";
  }
  s = open_trace_stream(mc, "mooncake", {});
  try {
    while (s->next(chunk, 10)) {
    }
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2u);
    EXPECT_EQ(e.field(), "timestamp");  // a stream cannot sort
  }
  std::filesystem::remove(mc);
  EXPECT_THROW(open_trace_stream(mc, "mooncake", {}), InputError);  // missing file
}

TEST(NativeTraceWriter, WritesWhatWriteNativeWrites) {
  ZipfParams p;
  p.requests = 20000;  // more than one buffer of each column
  p.prefixes = 300;
  Trace t = generate_zipf(p, 5);
  t.name = "zipf test";
  std::string a = temp_path("whole") + ".kvtrace", b = temp_path("streamed") + ".kvtrace";
  write_native(t, a);
  NativeTraceWriter w(b, t.name, p.block_tokens, p.requests,
                      p.requests * (p.prefix_blocks + p.suffix_blocks));
  generate_zipf_requests(p, 5, [&](Time now, std::span<const BlockKey> keys, uint32_t tokens) {
    w.add_request_keys(now, keys, tokens, 1);
  });
  w.finish();
  auto bytes = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(bytes(a), bytes(b));
  testing::expect_same_requests(read_trace(b, "native", {}), t);  // its checksum is right
  NativeTraceWriter short_one(b, "x", 16, 2, 2);
  std::vector<BlockKey> k = {1};
  short_one.add_request_keys(0, k, 16, 1);
  EXPECT_THROW(short_one.finish(), Error);
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

void expect_same_oracle(const Trace& t) {
  std::string path = temp_path("oracle") + ".kvtrace";
  write_native(t, path);
  auto s = open_trace_stream(path, "native", {});
  ExternalOracle ext(*s);
  Oracle o = compute_oracle(t);
  OracleView want = o.view(t), got = ext.view();
  auto eq = [](auto x, auto y) { return std::equal(x.begin(), x.end(), y.begin(), y.end()); };
  EXPECT_TRUE(eq(want.next_request, got.next_request));
  EXPECT_TRUE(eq(want.next_in_session, got.next_in_session));
  EXPECT_TRUE(eq(want.request_time, got.request_time));
  EXPECT_TRUE(eq(want.prompt_tokens, got.prompt_tokens));
  EXPECT_EQ(want.longest_prompt_blocks, got.longest_prompt_blocks);
  EXPECT_EQ(ext.facts().unique_blocks, count_unique_blocks(t));
  EXPECT_EQ(ext.facts().block_accesses, t.num_block_accesses());
  // Letting pages go changes memory, not what is read.
  ExternalOracle::Cursor c;
  ext.release(c, t.size(), t.num_block_accesses());
  EXPECT_TRUE(eq(want.next_request, ext.view().next_request));
  std::filesystem::remove(path);
}

TEST(ExternalOracle, EqualsComputeOracle) {
  for (uint64_t seed = 1; seed <= 3; ++seed)
    expect_same_oracle(testing::random_workload({.seed = seed, .requests = 3000}));
  Trace t;  // keys as given, so one prompt holds a key twice
  std::vector<BlockKey> a = {7, 8, 7}, b = {8, 9}, c = {7};
  t.add_request_keys(0, a, 48, 1, 0);
  t.add_request_keys(1, b, 32, 1, 1);
  t.add_request_keys(2, c, 16, 1, 0);
  expect_same_oracle(t);
}

// Streamed and in-memory replays of `path`, every policy at every capacity.
void expect_same_results(const std::string& path, const std::string& format,
                         const std::vector<std::string>& policies,
                         const std::vector<size_t>& capacities, const ReadOptions& ropts = {}) {
  Trace t = read_trace(path, format, ropts);
  Oracle o = compute_oracle(t);
  StreamOpener open = [&] { return open_trace_stream(path, format, ropts); };
  ExternalOracle ext(*open());
  for (auto& name : policies)
    for (size_t cap : capacities) {
      PolicySpec spec{name, ""};
      ReplayOptions opts;
      std::vector<double> ttft_mem, ttft_stream;
      opts.ttft_ms = &ttft_mem;
      ReplayResult mem = replay(t, &o, spec, cap, opts);
      opts.ttft_ms = &ttft_stream;
      ReplayResult streamed = replay_stream(open, &ext, spec, cap, opts);
      EXPECT_EQ(without_timings(mem), without_timings(streamed)) << name << " at " << cap;
      EXPECT_EQ(ttft_mem, ttft_stream);
      EXPECT_GT(mem.block_hits, 0u) << "a replay that hits nothing compares little";
    }
}

TEST(StreamReplay, SameResultsAsInMemoryOnGeneratedTraces) {
  Trace t = testing::random_workload({.seed = 9, .requests = 3000});
  std::string path = temp_path("replay") + ".kvtrace";
  write_native(t, path);
  expect_same_results(path, "native",
                      {"lru", "fifo", "s3fifo", "sieve", "lfu", "belady", "tail_belady"},
                      {20, 100, 400});
  std::filesystem::remove(path);

  ZipfParams p;
  p.requests = 5000;
  p.prefixes = 500;
  Trace z = generate_zipf(p, 2);
  std::string og = temp_path("replay") + ".oracleGeneral";
  write_oracle_general(z, og);
  expect_same_results(og, "oracle-general", {"lru", "s3fifo", "belady"}, {1000, 8000});
  std::filesystem::remove(og);
}

TEST(StreamReplay, SweepOverStreamsEqualsRunSweep) {
  Trace t = testing::random_workload({.seed = 11, .requests = 2000});
  std::string path = temp_path("sweep") + ".kvtrace";
  write_native(t, path);
  StreamOpener open = [&] { return open_trace_stream(path, "native", {}); };
  ExternalOracle ext(*open());
  std::vector<PolicySpec> specs = {{"lru", ""}, {"belady", ""}};
  auto configs = grid_configs(specs, {CapacitySpec::share(0.1), CapacitySpec::whole_blocks(50)},
                              count_unique_blocks(t), {});
  auto mem = run_sweep(t, configs, 2);
  auto streamed = run_cells(*stream_cells(open, ext.facts(), &ext, configs), 2);
  ASSERT_EQ(mem.size(), streamed.size());
  for (size_t i = 0; i < mem.size(); ++i)
    EXPECT_EQ(without_timings(mem[i]), without_timings(streamed[i]));
  std::filesystem::remove(path);
}

TEST(StreamReplay, SameResultsOnMooncake) {
  const char* data = std::getenv("KVPOLICY_DATA");
  if (!data) GTEST_SKIP() << "KVPOLICY_DATA not set";
  std::string path = std::string(data) + "/mooncake-conversation/conversation_trace.jsonl";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  size_t unique = count_unique_blocks(read_trace(path, "mooncake", {}));
  expect_same_results(path, "mooncake", {"lru", "s3fifo", "belady"}, {unique / 20, unique / 10});
}

}  // namespace
}  // namespace kvpolicy
