// The continuation classifier's examples from conversations: turns and labels as the trace
// builder counts them, the split by conversation, and scores put back on a built trace.
#include "kvpolicy/trace/continuation_examples.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "kvpolicy/trace/text_trace.h"
#include "kvpolicy/trace/trace_io.h"
#include "trace_test_util.h"

namespace kvpolicy {
namespace {

Conversation chat(std::string id, std::vector<std::pair<Role, std::string>> messages) {
  Conversation c;
  c.id = std::move(id);
  for (auto& [r, t] : messages) c.messages.push_back({r, t});
  return c;
}

TEST(ContinuationExamples, TurnsLabelsAndPromptWindows) {
  const Role U = Role::kUser, A = Role::kAssistant, S = Role::kSystem;
  std::vector<Conversation> convs = {
      chat("c0", {{U, "q1"}, {A, "a1"}, {U, "q2"}, {A, "a2"}, {U, "q3"}}),  // last unanswered
      chat("c1", {{A, "context"}, {U, "only"}, {A, "a"}}),                  // a cut conversation
      // A system message between two user messages: one turn, as tokenize_conversation has it.
      chat("c2", {{U, "x"}, {S, "sys"}, {U, "y"}, {A, "a"}, {U, "z"}, {A, "b"}}),
  };
  Conversation loogle =
      chat("doc", {{U, "the document"}, {U, "Q1"}, {A, "A1"}, {U, "Q2"}, {A, "A2"}});
  loogle.independent_turns = true;
  convs.push_back(loogle);
  auto ex = continuation_examples(convs, 0.2, 2);
  ASSERT_EQ(ex.size(), 3u + 1 + 2 + 2);
  // c0: turns 1..3, the last is the only negative; two prompts at most, the current first.
  EXPECT_EQ(ex[0].turn, 1u);
  EXPECT_TRUE(ex[0].continues);
  EXPECT_EQ(ex[0].prompts, std::vector<std::string>({"q1"}));
  EXPECT_EQ(ex[2].turn, 3u);
  EXPECT_FALSE(ex[2].continues);
  EXPECT_EQ(ex[2].prompts, std::vector<std::string>({"q3", "q2"}));
  EXPECT_EQ(ex[3].conversation, 1u);
  EXPECT_FALSE(ex[3].continues);
  EXPECT_EQ(ex[3].prompts, std::vector<std::string>({"only"}));
  EXPECT_EQ(ex[4].prompts, std::vector<std::string>({"x\n\ny"}));
  EXPECT_EQ(ex[5].prompts, std::vector<std::string>({"z", "x\n\ny"}));
  EXPECT_EQ(ex[6].prompts, std::vector<std::string>({"Q1"}));
  EXPECT_TRUE(ex[6].continues);
  EXPECT_FALSE(ex[7].continues);
  // The same turn counts as the trace builder's.
  auto tok = make_approx_tokenizer();
  std::map<uint32_t, size_t> turns;
  for (auto& e : ex) ++turns[e.conversation];
  for (uint32_t i = 0; i < convs.size(); ++i)
    EXPECT_EQ(tokenize_conversation(convs[i], *tok).turns(), turns[i]) << i;
  EXPECT_THROW(continuation_examples(convs, 1.5), ConfigError);
}

TEST(ContinuationExamples, SplitIsByConversation) {
  std::vector<Conversation> convs;
  for (int i = 0; i < 5000; ++i) {
    Conversation c;
    c.id = i % 2 ? "chatbot_arena_" + std::to_string(i) : "";  // half without an id
    for (int k = 0; k <= i % 4; ++k) {
      c.messages.push_back({Role::kUser, "q"});
      c.messages.push_back({Role::kAssistant, "a"});
    }
    convs.push_back(c);
  }
  auto ex = continuation_examples(convs, 0.2);
  std::map<uint32_t, std::set<bool>> sides;
  size_t test_conversations = 0;
  for (auto& e : ex) sides[e.conversation].insert(e.test);
  for (auto& [c, s] : sides) {
    EXPECT_EQ(s.size(), 1u) << "conversation " << c << " is in both splits";
    test_conversations += *s.begin();
  }
  EXPECT_GT(test_conversations, 900u);  // 20 % of 5000, give or take 3 sigma
  EXPECT_LT(test_conversations, 1100u);
  // Deterministic, the same whatever else is in the file, and ShareGPT's parts go together.
  for (auto& e : ex)
    EXPECT_EQ(e.test, continuation_split_test(convs[e.conversation], e.conversation, 0.2));
  for (uint32_t i = 1; i < 50; i += 2)  // with an id, the index does not matter
    EXPECT_EQ(continuation_split_test(convs[i], 999, 0.2),
              continuation_split_test(convs[i], i, 0.2));
  size_t together = 0, test_parts = 0;
  for (int i = 0; i < 400; ++i) {
    Conversation a, b;
    a.id = "Ab" + std::to_string(i) + "x_0";
    b.id = "Ab" + std::to_string(i) + "x_17";
    together += continuation_split_test(a, 0, 0.2) == continuation_split_test(b, 1, 0.2);
    test_parts += continuation_split_test(a, 0, 0.2);
  }
  EXPECT_EQ(together, 400u);
  EXPECT_GT(test_parts, 40u);
  EXPECT_LT(test_parts, 120u);
  Conversation all;
  all.id = "x";
  EXPECT_TRUE(continuation_split_test(all, 0, 1.0));
  EXPECT_FALSE(continuation_split_test(all, 0, 0.0));
}

TEST(ContinuationExamples, ScoresLandOnTheirRequests) {
  const Role U = Role::kUser, A = Role::kAssistant;
  std::vector<Conversation> convs;
  for (int i = 0; i < 30; ++i) {
    std::vector<std::pair<Role, std::string>> m;
    for (int k = 0; k <= i % 5; ++k) {
      m.push_back({U, "question " + std::to_string(i) + " " + std::to_string(k)});
      m.push_back({A, "answer"});
    }
    convs.push_back(chat("c" + std::to_string(i), m));
  }
  auto ex = continuation_examples(convs);
  std::vector<float> scores;
  for (auto& e : ex) scores.push_back(float(e.conversation * 10 + e.turn) / 1000.0f);
  auto tok = make_approx_tokenizer();
  TextTraceParams p;
  p.session_rate = 5;  // conversations overlap, so requests interleave
  Trace t = build_text_trace(convs, *tok, p, 3);
  set_continuation(t, ex, scores);
  ASSERT_EQ(t.continuation.size(), t.size());
  for (size_t r = 0; r < t.size(); ++r)
    EXPECT_FLOAT_EQ(t.continuation[r], float(t.session[r] * 10 + t.turn[r]) / 1000.0f);
  t.validate();
  // Through the native file and back.
  std::string path = testing::temp_path("scored.kvtrace");
  write_native(t, path);
  EXPECT_EQ(read_trace(path, "native", {}).continuation, t.continuation);
  // Through the Alibaba JSONL schema and the bailian reader.
  std::vector<uint64_t> raw;
  Trace t2 = build_text_trace(convs, *tok, p, 3, &raw);
  set_continuation(t2, ex, scores);
  std::string jsonl = testing::temp_path("scored.jsonl");
  write_conversation_jsonl(t2, jsonl, raw);
  Trace back = read_trace(jsonl, "bailian", {});
  ASSERT_EQ(back.continuation.size(), t2.size());
  for (size_t r = 0; r < t2.size(); ++r)
    EXPECT_NEAR(back.continuation[r], t2.continuation[r], 1e-6);
  // Examples of other conversations: refused, not misassigned.
  std::vector<Conversation> fewer(convs.begin(), convs.begin() + 10);
  auto ex2 = continuation_examples(fewer);
  EXPECT_THROW(set_continuation(t, ex2, std::vector<float>(ex2.size(), 0.5f)), Error);
  EXPECT_THROW(set_continuation(t, ex, {}), Error);
}

}  // namespace
}  // namespace kvpolicy
