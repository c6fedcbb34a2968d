// The assumption model of `trace import --assume` (assumed_prompts.h): lengths kept, sessions by
// its stated rule, sharing only what it states, seeded; and the trace's assumptions stored.
#include "kvpolicy/trace/assumed_prompts.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>

#include "kvpolicy/core/error.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/import.h"
#include "kvpolicy/trace/trace_io.h"
#include "kvpolicy/trace/trace_stream.h"
#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

using testing::input_error;
using testing::temp_path;
using testing::write_file;

// A log of lengths only: `n` requests at about `rate` a second, prompts of 50..4000 tokens.
Trace lengths_log(size_t n, uint64_t seed = 3, double rate = 5) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  std::uniform_int_distribution<uint32_t> prompt(50, 4000), output(1, 400);
  Trace t;
  t.name = "lengths";
  double now = 0;
  for (size_t r = 0; r < n; ++r) {
    t.add_request(static_cast<Time>(now * kMicrosPerSecond), {}, prompt(rng), output(rng));
    now += gap(rng);
  }
  return t;
}

Trace assumed(const std::string& model, size_t n = 3000, AssumedPromptReport* report = nullptr) {
  Trace t = lengths_log(n);
  AssumedPromptReport rep = assume_prompts(t, parse_assumed_prompt_model(model));
  if (report) *report = rep;
  t.validate();
  return t;
}

double ideal_hit_rate(const Trace& t) { return trace_facts(t).infinite_hit_rate; }

TEST(AssumedPrompts, EveryLengthAndTimeIsTheLogs) {
  Trace log = lengths_log(2000);
  for (const char* model : {"", "system=0,turns=1", "system=2048,turns=8,reply=none"}) {
    Trace t = log;
    assume_prompts(t, parse_assumed_prompt_model(model));
    EXPECT_EQ(t.time, log.time) << model;
    EXPECT_EQ(t.prompt_tokens, log.prompt_tokens) << model;
    EXPECT_EQ(t.output_tokens, log.output_tokens) << model;
    for (size_t r = 0; r < t.size(); ++r)  // a partial last block of its own
      ASSERT_EQ(t.prompt_blocks(r), (t.prompt_tokens[r] + 15) / 16) << model << " request " << r;
  }
}

TEST(AssumedPrompts, SessionsFollowTheStatedRule) {
  for (const char* model : {"turns=4", "turns=4,reply=none", "turns=10,idle=5"}) {
    AssumedPromptModel m = parse_assumed_prompt_model(model);
    AssumedPromptReport rep;
    Trace t = assumed(model, 3000, &rep);
    std::map<SessionId, size_t> last;  // each session's previous request
    std::map<SessionId, uint32_t> turns;
    uint64_t continued = 0;
    for (size_t r = 0; r < t.size(); ++r) {
      SessionId s = t.session[r];
      ASSERT_NE(s, kNoSession);
      auto it = last.find(s);
      if (it == last.end()) {
        EXPECT_EQ(t.turn[r], 1u);
      } else {
        size_t p = it->second;
        ++continued;
        EXPECT_EQ(t.turn[r], t.turn[p] + 1);
        // The prompt holds the previous prompt and (reply=output) its reply, so it is at least
        // as long; it came within `idle`; and it starts with every full block of the previous.
        uint64_t context = t.prompt_tokens[p] + (m.reply == "output" ? t.output_tokens[p] : 0);
        EXPECT_GE(t.prompt_tokens[r], context) << model << " request " << r;
        EXPECT_LE(t.time[r] - t.time[p], Time(m.idle * kMicrosPerSecond)) << model;
        size_t full = t.prompt_tokens[p] / 16;
        for (size_t b = 0; b < full; ++b) ASSERT_EQ(t.prompt(r)[b], t.prompt(p)[b]) << model;
      }
      last[s] = r;
      turns[s] = t.turn[r];
    }
    EXPECT_EQ(continued, rep.continuations);
    EXPECT_EQ(turns.size(), rep.sessions);
    EXPECT_GT(rep.continuations, 0u) << model;
  }
  // turns=1: every request alone.
  AssumedPromptReport rep;
  assumed("turns=1", 500, &rep);
  EXPECT_EQ(rep.continuations, 0u);
  EXPECT_EQ(rep.sessions, 500u);
}

TEST(AssumedPrompts, SharingIsOnlyWhatTheModelStates) {
  // No system prompt and no sessions: every prompt is content of its own, nothing hits.
  EXPECT_EQ(ideal_hit_rate(assumed("system=0,turns=1")), 0);
  // One system prompt of 512 tokens (32 blocks), no sessions, every prompt longer than it:
  // exactly its blocks repeat, in every request after the first.
  Trace t;
  for (uint32_t r = 0; r < 200; ++r) t.add_request(Time(r) * 1000, {}, 600 + 37 * r, 10);
  assume_prompts(t, parse_assumed_prompt_model("system=512,system_prompts=1,turns=1"));
  std::map<BlockKey, int> seen;
  for (size_t r = 0; r < t.size(); ++r)
    for (size_t b = 0; b < t.prompt_blocks(r); ++b)
      ASSERT_EQ(seen[t.prompt(r)[b]]++ > 0, r > 0 && b < 32) << "request " << r << " block " << b;
}

TEST(AssumedPrompts, TheIdealHitRateMovesWithSystemAndTurns) {
  double none = ideal_hit_rate(assumed("system=0,turns=1"));
  double s512 = ideal_hit_rate(assumed("system=512,turns=1"));
  double s2048 = ideal_hit_rate(assumed("system=2048,turns=1"));
  EXPECT_LT(none, s512);
  EXPECT_LT(s512, s2048);
  double t1 = ideal_hit_rate(assumed("system=512,turns=1"));
  double t3 = ideal_hit_rate(assumed("system=512,turns=3"));
  double t10 = ideal_hit_rate(assumed("system=512,turns=10"));
  EXPECT_LT(t1, t3);
  EXPECT_LT(t3, t10);
  // More distinct system prompts share less.
  EXPECT_GT(ideal_hit_rate(assumed("system=512,system_prompts=1,turns=1")),
            ideal_hit_rate(assumed("system=512,system_prompts=64,turns=1")));
}

TEST(AssumedPrompts, TheSeedDecidesAndOnlyIt) {
  Trace a = assumed("seed=7"), b = assumed("seed=7"), c = assumed("seed=8");
  testing::expect_same_requests(a, b);
  EXPECT_NE(a.blocks, c.blocks);
  EXPECT_EQ(a.prompt_tokens, c.prompt_tokens);
}

TEST(AssumedPrompts, TheModelIsParsedStatedAndStored) {
  AssumedPromptModel d = parse_assumed_prompt_model("");
  EXPECT_EQ(d.canonical(), "system=512,system_prompts=4,turns=3,reply=output,idle=600,seed=1");
  EXPECT_EQ(parse_assumed_prompt_model(d.canonical()).canonical(), d.canonical());
  EXPECT_EQ(parse_assumed_prompt_model("turns=2.5,system=0").canonical(),
            "system=0,system_prompts=4,turns=2.5,reply=output,idle=600,seed=1");
  EXPECT_EQ(d.statement(),
            "lengths from the log; 4 shared system prompts of 512 tokens; sessions geometric "
            "with mean 3 planned turns, a turn within 600 s resending the previous prompt and "
            "reply; the rest unique (seed 1)");
  EXPECT_THROW(parse_assumed_prompt_model("turns=0.5"), ConfigError);
  EXPECT_THROW(parse_assumed_prompt_model("system=-1"), ConfigError);
  EXPECT_THROW(parse_assumed_prompt_model("reply=maybe"), ConfigError);
  EXPECT_THROW(parse_assumed_prompt_model("sessions=3"), ConfigError);

  Trace t = assumed("");
  EXPECT_EQ(t.assumptions.model, d.canonical());
  EXPECT_EQ(t.assumptions.statement, d.statement());
  EXPECT_EQ(assumption_line(t.assumptions), "assumed prompts: " + d.statement() +
                                                " (kvpolicy trace import --assume \"" +
                                                d.canonical() + "\")");
  EXPECT_EQ(assumption_line({}), "");
}

uint32_t native_version(const std::string& path) {
  std::string bytes = testing::read_bytes(path);
  uint32_t v = 0;
  std::memcpy(&v, bytes.data() + 8, 4);
  return v;
}

TEST(AssumedPrompts, NativeTracesKeepTheAssumptions) {
  Trace t = assumed("system=256,turns=4", 400);
  std::string path = temp_path("assumed.kvtrace");
  write_native(t, path);
  EXPECT_EQ(native_version(path), 3u);
  Trace back = read_trace(path, "native", {});
  EXPECT_EQ(back.assumptions, t.assumptions);
  testing::expect_same_requests(t, back);
  // Streamed, every chunk carries them.
  auto stream = open_trace_stream(path, "native", {});
  Trace chunk;
  ASSERT_TRUE(stream->next(chunk, 100));
  EXPECT_EQ(chunk.assumptions, t.assumptions);
  // With the continuation column too (its flag), and both survive.
  t.continuation.assign(t.size(), 0.5f);
  write_native(t, path);
  back = read_trace(path, "native", {});
  EXPECT_EQ(back.assumptions, t.assumptions);
  EXPECT_EQ(back.continuation, t.continuation);
  // A cut in the statement is a clear error, not a misread.
  std::string bytes = testing::read_bytes(path);
  size_t at = bytes.find("lengths from the log");
  ASSERT_NE(at, std::string::npos);
  std::string flipped = bytes;
  flipped[at] ^= 0x20;
  std::string bad = write_file("flipped.kvtrace", flipped);
  EXPECT_EQ(input_error([&] { read_trace(bad, "native", {}); }).field(), "checksum");
  // A trace without assumptions is written as before (version 1) and reads back without any.
  Trace plain = lengths_log(10);
  for (size_t r = 0; r < plain.size(); ++r) plain.turn[r] = 1;
  std::string p1 = temp_path("plain.kvtrace");
  write_native(plain, p1);
  EXPECT_EQ(native_version(p1), 1u);
  EXPECT_TRUE(read_trace(p1, "native", {}).assumptions.empty());
}

TEST(AssumedPrompts, ReplayRowsCarryTheModel) {
  Trace t = assumed("", 300);
  ReplayResult r = replay(t, nullptr, PolicySpec{"lru", ""}, 64, {});
  EXPECT_EQ(r.assumptions, t.assumptions.model);
  EXPECT_NE(r.to_json().find("\"assumptions\":\"" + t.assumptions.model + "\""), std::string::npos);
  Trace plain = lengths_log(10);
  assume_prompts(plain, parse_assumed_prompt_model(""));
  plain.assumptions = {};
  EXPECT_EQ(replay(plain, nullptr, PolicySpec{"lru", ""}, 64, {}).to_json().find("assumptions"),
            std::string::npos);
}

}  // namespace
}  // namespace kvpolicy
