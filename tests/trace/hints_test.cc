// Retention hints as inputs (docs/formats.md "hints", docs/policies.md "Retention hints"): the
// trace files' hints field, the --hint rules and the errors of both.
#include "kvpolicy/trace/hints.h"

#include <gtest/gtest.h>

#include <string>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/fingerprint.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/trace.h"
#include "kvpolicy/trace/trace_io.h"
#include "trace_test_util.h"

namespace kvpolicy {
namespace {

using testing::write_file;

std::string record(int id, double ts, int input, const std::string& ids, const std::string& hints) {
  return R"({"chat_id": )" + std::to_string(id) + R"(, "parent_chat_id": -1, "timestamp": )" +
         std::to_string(ts) + R"(, "input_length": )" + std::to_string(input) +
         R"(, "output_length": 1, "type": "text", "turn": 1, "hash_ids": [)" + ids + "]" +
         (hints.empty() ? "" : R"(, "hints": )" + hints) + "}\n";
}

// The error a bad record gives, as text ("file:line: field: ...").
std::string error_of(const std::string& name, const std::string& text) {
  try {
    read_trace(write_file(name, text), "bailian", {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(HintsField, TokenRangesBecomeBlocksAndSurviveSorting) {
  // 16-token blocks. Line 2 comes first in time and has no hints.
  std::string text =
      record(1, 2.0, 64, "1,2,3,4",
             R"([{"first_token": 0, "end_token": 32, "priority": 90, "duration_s": 600},)"
             R"( {"first_token": 40, "priority": 10}])") +
      record(2, 1.0, 16, "5", "");
  Trace t = read_trace(write_file("hints.jsonl", text), "bailian", {});
  ASSERT_TRUE(t.has_hints());
  EXPECT_TRUE(t.hints_of(0).empty());
  auto h = t.hints_of(1);
  ASSERT_EQ(h.size(), 2u);
  // [0, 32) holds the first tokens of blocks 0 and 1; [40, end) those of blocks 3 on.
  EXPECT_EQ(h[0], (RetentionHint{0, 2, 90, 600 * kMicrosPerSecond}));
  EXPECT_EQ(h[1], (RetentionHint{3, RetentionHint::kToEnd, 10, RetentionHint::kForever}));
  EXPECT_EQ(request_view(t, 1).hints.size(), 2u);
  EXPECT_THROW(write_native(t, write_file("hints.kvtrace", "")), ConfigError);
}

TEST(HintsField, BadHintsNameFileLineAndField) {
  std::string ok = record(1, 1.0, 16, "1", "");
  auto bad = [&](const std::string& hints) {
    return error_of("bad-hints.jsonl", ok + record(2, 2.0, 32, "1,2", hints));
  };
  std::string e = bad(R"([{"first_token": 0, "priority": 101}])");
  EXPECT_NE(e.find("bad-hints.jsonl"), std::string::npos) << e;
  EXPECT_NE(e.find(":2"), std::string::npos) << e;
  EXPECT_NE(e.find("hints[0].priority"), std::string::npos) << e;
  EXPECT_NE(bad(R"([{"priority": 50}])").find("hints[0].first_token"), std::string::npos);
  EXPECT_NE(bad(R"([{"first_token": 0, "priority": 50}, {"first_token": 8, "end_token": 8,)"
                R"( "priority": 1}])")
                .find("hints[1].end_token"),
            std::string::npos);
  EXPECT_NE(
      bad(R"([{"first_token": 0, "priority": 50, "duration_s": -1}])").find("hints[0].duration_s"),
      std::string::npos);
  EXPECT_NE(bad(R"([{"first_token": 0, "priority": 50, "ttl": 3}])").find("hints[0].ttl"),
            std::string::npos);
  EXPECT_NE(bad(R"({"first_token": 0})").find("hints"), std::string::npos);
  EXPECT_NE(bad(R"([3])").find("hints[0]"), std::string::npos);
}

TEST(HintsField, TheMooncakeReaderTakesItToo) {
  std::string text =
      R"({"timestamp": 0, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2], "hints": [{"first_token": 0, "end_token": 512, "priority": 80}]})"
      "\n";
  Trace t = read_trace(write_file("hints-mooncake.jsonl", text), "mooncake", {});
  ASSERT_TRUE(t.has_hints());
  EXPECT_EQ(t.hints_of(0)[0], (RetentionHint{0, 1, 80, RetentionHint::kForever}));
}

std::string rule_error(const std::string& text) {
  try {
    parse_hint_rule(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(HintRules, ParseTheStatedForms) {
  HintRule r = parse_hint_rule("system-prompt=90:600s");
  EXPECT_EQ(r.kind, HintRule::Kind::kSystemPrompt);
  EXPECT_EQ(r.priority, 90);
  EXPECT_EQ(r.duration, 600 * kMicrosPerSecond);
  r = parse_hint_rule("session-pin=120s");
  EXPECT_EQ(r.kind, HintRule::Kind::kSessionPin);
  EXPECT_EQ(r.priority, 100);
  EXPECT_EQ(r.duration, 120 * kMicrosPerSecond);
  EXPECT_EQ(parse_hint_rule("session-pin=60:2m").priority, 60);
  EXPECT_EQ(parse_hint_rule("session-pin=60:2m").duration, 120 * kMicrosPerSecond);
  EXPECT_EQ(parse_hint_rule("adversarial=100:inf").duration, RetentionHint::kForever);
  EXPECT_EQ(parse_hint_rule("random=90:1.5h:0.25").share, 0.25);
  EXPECT_EQ(parse_hint_rule("random=90:1.5h:0.25").duration, 5400 * kMicrosPerSecond);
  EXPECT_EQ(parse_hint_rule("oracle=90:250ms").duration, 250'000);
}

TEST(HintRules, ErrorsNameTheRuleAndWhatIsWrong) {
  for (auto [text, says] : std::vector<std::pair<std::string, std::string>>{
           {"system-prompt", "no '='"},
           {"keep=90:10s", "unknown rule 'keep'"},
           {"system-prompt=101:10s", "priority '101'"},
           {"system-prompt=90", "takes P:D"},
           {"system-prompt=90:10", "duration '10'"},
           {"system-prompt=90:10d", "duration '10d'"},
           {"session-pin=1:2:3", "takes D or P:D"},
           {"random=90:10s", "takes P:D:SHARE"},
           {"random=90:10s:1.5", "share '1.5'"},
           {"oracle=90:inf", "horizon"},
       }) {
    std::string e = rule_error(text);
    EXPECT_NE(e.find("--hint '" + text + "'"), std::string::npos) << e;
    EXPECT_NE(e.find(says), std::string::npos) << text << ": " << e;
  }
}

TEST(HintRules, SystemPromptFindsTheAgentsSharedPrefix) {
  AgentParams p;
  p.sessions = 60;
  p.prefixes = 3;
  p.prefix_tokens_mean = 1000;
  Trace t = generate_agent(p, 2);
  std::vector<uint32_t> shared = shared_prefix_blocks(t);
  // Every turn of a session has its first turn's shared prefix (the agent's prefix).
  std::vector<uint32_t> first(p.sessions, UINT32_MAX);
  for (size_t r = 0; r < t.size(); ++r) {
    uint32_t& f = first[t.session[r]];
    if (f == UINT32_MAX) f = shared[r];
    EXPECT_EQ(shared[r], f) << "request " << r;
    EXPECT_GT(shared[r], 0u);
  }
  std::vector<HintRule> rules = {parse_hint_rule("system-prompt=90:600s"),
                                 parse_hint_rule("session-pin=120s")};
  apply_hint_rules(t, rules);
  auto h = t.hints_of(5);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0], (RetentionHint{0, shared[5], 90, 600 * kMicrosPerSecond}));
  EXPECT_EQ(h[1], (RetentionHint{0, RetentionHint::kToEnd, 100, 120 * kMicrosPerSecond}));
}

TEST(HintRules, OracleAndAdversarialFollowTheNextUse) {
  Trace t;
  t.block_tokens = 16;
  uint64_t a[] = {1, 2}, b[] = {1, 3};
  t.add_request(0, a, 32, 1);
  t.add_request(10 * kMicrosPerSecond, b, 32, 1);
  std::vector<HintRule> rules = {parse_hint_rule("oracle=90:60s")};
  Trace o = t;
  apply_hint_rules(o, rules);
  // Request 0: block 0 is reused 10 s later (kept until just past then), block 1 never.
  ASSERT_EQ(o.hints_of(0).size(), 2u);
  EXPECT_EQ(o.hints_of(0)[0], (RetentionHint{0, 1, 90, 10 * kMicrosPerSecond + 1}));
  EXPECT_EQ(o.hints_of(0)[1], (RetentionHint{1, 2, 0, RetentionHint::kForever}));
  Trace adv = t;
  rules = {parse_hint_rule("adversarial=100:1h")};
  apply_hint_rules(adv, rules);
  ASSERT_EQ(adv.hints_of(0).size(), 1u);
  EXPECT_EQ(adv.hints_of(0)[0], (RetentionHint{1, 2, 100, 3600 * kMicrosPerSecond}));
  ASSERT_EQ(adv.hints_of(1).size(), 1u);  // both of the last request's blocks are never reused
  EXPECT_EQ(adv.hints_of(1)[0], (RetentionHint{0, 2, 100, 3600 * kMicrosPerSecond}));
}

// Rows of another hint configuration must not pass for these (--resume, merge): the fingerprint
// covers the hints, and a trace without them keeps its old one.
TEST(HintRules, TheFingerprintCoversTheHints) {
  Trace t = generate_agent(AgentParams{.sessions = 20}, 1);
  std::string plain = trace_fingerprint(t);
  Trace a = t, b = t;
  std::vector<HintRule> pin = {parse_hint_rule("session-pin=60s")};
  std::vector<HintRule> pin2 = {parse_hint_rule("session-pin=61s")};
  apply_hint_rules(a, pin);
  apply_hint_rules(b, pin2);
  EXPECT_NE(trace_fingerprint(a), plain);
  EXPECT_NE(trace_fingerprint(a), trace_fingerprint(b));
  Trace none = t;
  none.set_hints(std::vector<std::vector<RetentionHint>>(t.size()));  // a column of empty lists
  EXPECT_NE(trace_fingerprint(none), trace_fingerprint(a));
  EXPECT_EQ(trace_fingerprint(t), plain);
}

}  // namespace
}  // namespace kvpolicy
