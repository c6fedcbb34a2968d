#include "kvpolicy/trace/text_trace.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <unordered_map>

#include "kvpolicy/trace/trace.h"
#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

using testing::input_error;
using testing::temp_path;
using testing::write_file;

std::vector<std::string> pieces(std::string_view s) {
  std::vector<std::string> out;
  for (auto p : pretokenize(s)) out.emplace_back(p);
  return out;
}

TEST(Pretokenize, FollowsTheCl100kPattern) {
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces("I'm here, they'll"), (V{"I", "'m", " here", ",", " they", "'ll"}));
  EXPECT_EQ(pieces("WE'RE"), (V{"WE", "'RE"}));
  EXPECT_EQ(pieces("12345 dollars!!"), (V{"123", "45", " dollars", "!!"}));
  // A run of spaces before a word leaves its last space to the word; newlines end a run.
  EXPECT_EQ(pieces("a   b"), (V{"a", "  ", " b"}));
  EXPECT_EQ(pieces("x\n\n  y"), (V{"x", "\n\n", " ", " y"}));
  EXPECT_EQ(pieces("x  \n  "), (V{"x", "  \n", "  "}));
  EXPECT_EQ(pieces("f(x):\n"), (V{"f", "(x", "):\n"}));
  EXPECT_EQ(pieces(" ** 2"), (V{" **", " ", "2"}));
  EXPECT_EQ(pieces("\tabs"), (V{"\tabs"}));
  // Every byte is in exactly one piece.
  std::string text = "Ünïcödé — “q” 東京 😀\r\n end";
  std::string joined;
  for (auto& p : pieces(text)) joined += p;
  EXPECT_EQ(joined, text);
}

std::unique_ptr<Tokenizer> cl100k_or_skip() {
  std::string path = find_bpe_vocabulary();
  if (path.empty()) return nullptr;
  return load_bpe_tokenizer(path);
}

// Reference ids from js-tiktoken 1.0.21 (an independent implementation), encoding cl100k_base.
TEST(Tokenizer, Cl100kMatchesTheReferenceImplementation) {
  auto tok = cl100k_or_skip();
  if (!tok) GTEST_SKIP() << "the cl100k_base vocabulary is not installed (tools/install-deps.sh)";
  struct Case {
    const char* text;
    std::vector<uint32_t> ids;
  };
  std::vector<Case> cases = {
      {"hello world", {15339, 1917}},
      {"I'm here, they'll go; WE'RE done. It's 12345 dollars!!",
       {40, 2846, 1618, 11, 814, 3358, 733, 26, 20255, 95253, 2884, 13, 1102, 596, 220, 4513, 1774,
        11441, 3001}},
      {"  leading spaces\n\n\ttabs and   multiple   spaces  \n  ",
       {220, 6522, 12908, 271, 3324, 3518, 323, 256, 5361, 256, 12908, 2355, 256}},
      {"def f(x):\n    return x**2  # comment\n",
       {755, 282, 2120, 997, 262, 471, 865, 334, 17, 220, 674, 4068, 198}},
      {"Ünïcödé café naïve — “quotes” … 東京タワー 😀 emoji",
       {53591, 77,  38672, 66,    3029, 67,    978,   53050, 95980, 588,   2001,  1054,
        54382, 863, 4696,  61696, 109,  47653, 47307, 2845,  107,   11972, 91416, 43465}},
      {"<|im_start|>user\nWhat is 3.14159?<|im_end|>\n",
       {27, 91, 318,  5011, 91,    29, 882, 198,  3923, 374, 220,
        18, 13, 9335, 2946, 76514, 91, 318, 6345, 91,   397}},
      {"Hello\r\n\r\nWorld   ", {9906, 881, 10343, 262}},
      {"supercalifragilisticexpialidocious antidisestablishmentarianism",
       {13066, 3035, 278, 333, 4193, 321, 4633, 4683, 532, 307, 78287, 3276, 85342, 34500, 479,
        8997, 2191}},
  };
  for (auto& c : cases) {
    std::vector<uint32_t> ids;
    tok->encode(c.text, ids);
    EXPECT_EQ(ids, c.ids) << c.text;
  }
}

// The textbook BPE the tokenizer used before its heap (rescan every pair, merge the lowest rank,
// leftmost on a tie), over the rank file read independently of the tokenizer's own loader.
class NaiveBpe {
 public:
  explicit NaiveBpe(const std::string& path) {
    simdjson::dom::parser parser;
    std::string_view text = parser.load(path)["bpe_ranks"].get_string().value();
    std::istringstream lines{std::string(text)};
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream words(line);
      std::string name, token;
      uint32_t rank = 0;
      words >> name >> rank;
      while (words >> token) ranks_[base64(token)] = rank++;
    }
  }
  std::vector<uint32_t> encode(std::string_view text) const {
    std::vector<uint32_t> ids;
    for (std::string_view piece : pretokenize(text)) {
      std::vector<std::string> parts;
      for (char c : piece) parts.emplace_back(1, c);
      for (;;) {
        size_t at = SIZE_MAX;
        uint32_t best = UINT32_MAX;
        for (size_t k = 0; k + 1 < parts.size(); ++k) {
          auto it = ranks_.find(parts[k] + parts[k + 1]);
          if (it != ranks_.end() && it->second < best) best = it->second, at = k;
        }
        if (at == SIZE_MAX) break;
        parts[at] += parts[at + 1];
        parts.erase(parts.begin() + static_cast<ptrdiff_t>(at) + 1);
      }
      for (auto& part : parts) ids.push_back(ranks_.at(part));
    }
    return ids;
  }

 private:
  static std::string base64(const std::string& in) {
    const std::string abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
      if (c == '=') break;
      acc = (acc << 6) | uint32_t(abc.find(c));
      if ((bits += 6) >= 8) out += static_cast<char>((acc >> (bits -= 8)) & 0xFF);
    }
    return out;
  }
  std::unordered_map<std::string, uint32_t> ranks_;
};

// The heap-based merge gives the same ids as the rescanning one, ties included (runs of one
// letter, repeated pairs), on ordinary text and on words of a few thousand bytes.
TEST(Tokenizer, Cl100kHeapMergeMatchesTheRescanningMerge) {
  auto tok = cl100k_or_skip();
  if (!tok) GTEST_SKIP() << "the cl100k_base vocabulary is not installed (tools/install-deps.sh)";
  NaiveBpe naive(find_bpe_vocabulary());
  std::mt19937 rng(7);
  auto random_word = [&](size_t n, std::string_view alphabet) {
    std::string w;
    for (size_t k = 0; k < n; ++k) w += alphabet[rng() % alphabet.size()];
    return w;
  };
  std::vector<std::string> texts = {
      "The quick brown fox jumps over the lazy dog; WE'RE done, it's 12345 dollars!!",
      "Ünïcödé café naïve — “quotes” … 東京タワー 😀 emoji\r\n\tend",
      "supercalifragilisticexpialidocious antidisestablishmentarianism",
      std::string(3000, 'a'),
      [] {
        std::string s;
        for (int k = 0; k < 1000; ++k) s += "ab";
        return s;
      }(),
      random_word(3000, "abcdefghijklmnopqrstuvwxyz"),
      random_word(2000, "aeiouxyz"),
      random_word(1500, "!?#*-=+~"),
      [] {
        std::string s;
        for (int k = 0; k < 400; ++k) s += "東京";
        return s;
      }(),
  };
  for (auto& text : texts) {
    std::vector<uint32_t> ids;
    tok->encode(text, ids);
    EXPECT_EQ(ids, naive.encode(text)) << text.substr(0, 40);
  }
}

TEST(Tokenizer, MissingVocabularyFailsClearlyOrFallsBack) {
  try {
    load_bpe_tokenizer("/nonexistent/cl100k_base.json");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/cl100k_base.json"), std::string::npos);
  }
  std::string bad = write_file("ranks.json", R"({"pat_str":"x","bpe_ranks":"! 0 IQ=="})");
  EXPECT_THROW(load_bpe_tokenizer(bad), ConfigError);
  // $KVPOLICY_TOKENIZER pointing at nothing: "auto" falls back and says why, "cl100k" refuses.
  const char* old = std::getenv("KVPOLICY_TOKENIZER");
  std::string saved = old ? old : "";
  setenv("KVPOLICY_TOKENIZER", "/nonexistent/v.json", 1);
  EXPECT_EQ(find_bpe_vocabulary(), "");
  std::string note;
  auto tok = make_tokenizer("auto", &note);
  EXPECT_NE(tok->name().find("approx"), std::string::npos);
  EXPECT_NE(note.find("install-deps"), std::string::npos);
  EXPECT_THROW(make_tokenizer("cl100k"), ConfigError);
  EXPECT_THROW(make_tokenizer("approx:x"), ConfigError);
  if (old) {
    setenv("KVPOLICY_TOKENIZER", saved.c_str(), 1);
  } else {
    unsetenv("KVPOLICY_TOKENIZER");
  }
}

TEST(Tokenizer, ApproxIsDeterministicAndNearItsRatio) {
  auto tok = make_approx_tokenizer(4.5);
  std::string text;
  for (int i = 0; i < 200; ++i) text += "The quick brown fox jumps over the lazy dog; ";
  std::vector<uint32_t> a, b;
  tok->encode(text, a);
  tok->encode(text, b);
  EXPECT_EQ(a, b);
  double ratio = double(text.size()) / double(a.size());
  EXPECT_GT(ratio, 3.0);
  EXPECT_LT(ratio, 6.0);
  std::vector<uint32_t> c;
  tok->encode("The quick brown fox", c);
  EXPECT_EQ(c, std::vector<uint32_t>(a.begin(), a.begin() + c.size()));
}

const char* kArena =
    R"({"id": "a1", "messages": [{"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello! How can I help?"}, {"role": "user", "content": "Tell me a story about a cat."}, {"role": "assistant", "content": "Once upon a time a cat sat on a mat and thought about fish for a very long while."}, {"role": "user", "content": "Shorter please"}, {"role": "assistant", "content": "A cat. A mat. Fish."}]}
{"id": "a2", "messages": [{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4"}, {"role": "user", "content": "And 3+3?"}, {"role": "assistant", "content": "6"}]}
{"id": "a3", "messages": [{"role": "user", "content": "One question only"}, {"role": "assistant", "content": "One answer."}]}
)";

TEST(TextTrace, ReadsChatbotArenaAndShareGpt) {
  TextReadReport rep;
  auto convs = read_conversations(write_file("arena.jsonl", kArena), "chatbot-arena", false, rep);
  ASSERT_EQ(convs.size(), 3u);
  EXPECT_EQ(rep.turns, 6u);
  EXPECT_EQ(convs[0].id, "a1");
  EXPECT_EQ(convs[0].messages.size(), 6u);
  EXPECT_EQ(convs[0].messages[1].role, Role::kAssistant);
  // ShareGPT: a leading gpt message (a cut conversation) is context; consecutive human
  // messages merge; roles are human/gpt/system.
  std::string share =
      R"({"id": "x_1", "conversations": [{"from": "gpt", "value": "...as I said."}, {"from": "human", "value": "ok"}, {"from": "human", "value": "and?"}, {"from": "gpt", "value": "done"}]})"
      "\n";
  TextReadReport rep2;
  auto sg = read_conversations(write_file("share.jsonl", share), "sharegpt", false, rep2);
  ASSERT_EQ(sg.size(), 1u);
  EXPECT_EQ(rep2.merged_messages, 1u);
  EXPECT_EQ(rep2.turns, 1u);
  ASSERT_EQ(sg[0].messages.size(), 3u);
  EXPECT_EQ(sg[0].messages[1].text, "ok\n\nand?");
  auto tok = make_approx_tokenizer();
  ConversationTokens t = tokenize_conversation(sg[0], *tok);
  EXPECT_EQ(t.turns(), 1u);
}

TEST(TextTrace, BadRecordsAreReportedNotDropped) {
  std::string text = std::string(kArena) +
                     R"({"id": "b", "messages": [{"role": "assistant", "content": "no user"}]})"
                     "\n"
                     R"({"id": "c", "messages": [{"role": "user"}]})"
                     "\n"
                     R"({"id": "d", "messages": [{"role": "wizard", "content": "x"}]})"
                     "\n{not json\n";
  std::string path = write_file("bad.jsonl", text);
  TextReadReport rep;
  InputError e = input_error([&] { read_conversations(path, "chatbot-arena", false, rep); });
  // Line 4 (no user message) is valid data that makes no request; line 5 is the first bad one.
  EXPECT_EQ(e.line(), 5u);
  EXPECT_EQ(e.field(), "messages[0].content");
  TextReadReport skipped;
  auto convs = read_conversations(path, "chatbot-arena", true, skipped);
  EXPECT_EQ(convs.size(), 3u);
  EXPECT_EQ(skipped.without_user, 1u);
  EXPECT_EQ(skipped.bad_records, 3u);
  EXPECT_NE(skipped.first_error.find(":5:"), std::string::npos) << skipped.first_error;
  // The missing content and the unknown role name their field.
  InputError e5 = input_error([&] {
    TextReadReport r;
    read_conversations(write_file("c.jsonl", R"({"messages": [{"role": "user"}]})"),
                       "chatbot-arena", false, r);
  });
  EXPECT_EQ(e5.field(), "messages[0].content");
  InputError e6 = input_error([&] {
    TextReadReport r;
    read_conversations(
        write_file("d.jsonl", R"({"messages": [{"role": "wizard", "content": "x"}]})"),
        "chatbot-arena", false, r);
  });
  EXPECT_EQ(e6.field(), "messages[0].role");
  TextReadReport r;
  EXPECT_THROW(read_conversations(write_file("e.jsonl", ""), "chatbot-arena", false, r),
               InputError);
  EXPECT_THROW(read_conversations(path, "wildchat", false, r), ConfigError);
}

TEST(TextTrace, ReadsLoogleQuestionsAsIndependentTurns) {
  std::string loogle =
      R"({"input": "A long document. It has sentences.", "title": "Doc", "qa_pairs": "[{'Q': \"What's in it?\", 'A': 'Sentences.', 'S': ['x']}, {'Q': 'Is it \\'long\\'?', 'A': {'<mask-0>': 'yes', '<mask-1>': 'no'}}]", "output": "None"})"
      "\n"
      R"({"input": "Another document.", "title": "Paper", "qa_pairs": "none", "output": "A summary.", "question": "none"})"
      "\n";
  TextReadReport rep;
  auto convs = read_conversations(write_file("loogle.jsonl", loogle), "loogle", false, rep);
  ASSERT_EQ(convs.size(), 2u);
  EXPECT_EQ(rep.turns, 3u);
  EXPECT_TRUE(convs[0].independent_turns);
  ASSERT_EQ(convs[0].messages.size(), 5u);
  EXPECT_EQ(convs[0].messages[1].text, "What's in it?");
  EXPECT_EQ(convs[0].messages[3].text, "Is it 'long'?");
  EXPECT_EQ(convs[0].messages[4].text, "yes; no");
  EXPECT_EQ(convs[1].messages[1].text, "Summarize the document above.");
  EXPECT_EQ(convs[1].messages[2].text, "A summary.");
  // Every question's prompt is the document + the question: they share the document's blocks.
  auto tok = make_approx_tokenizer();
  TextTraceParams p;
  p.block_tokens = 2;
  Trace t = build_text_trace(convs, *tok, p, 1);
  ASSERT_EQ(t.size(), 3u);
  size_t a = SIZE_MAX, b = SIZE_MAX;
  for (size_t r = 0; r < t.size(); ++r)
    if (t.session[r] == 0) (a == SIZE_MAX ? a : b) = r;
  ASSERT_NE(b, SIZE_MAX);
  ConversationTokens ct = tokenize_conversation(convs[0], *tok);
  size_t shared = ct.tokens.size() / 2;
  auto pa = t.prompt(a), pb = t.prompt(b);
  ASSERT_GE(pa.size(), shared);
  ASSERT_GE(pb.size(), shared);
  EXPECT_TRUE(std::equal(pa.begin(), pa.begin() + shared, pb.begin()));
  EXPECT_NE(pa.back(), pb.back());
  // A malformed literal is a bad record naming qa_pairs.
  InputError e = input_error([&] {
    TextReadReport r;
    read_conversations(write_file("bad.jsonl", R"({"input": "d", "qa_pairs": "[{'Q': 'x'"})"),
                       "loogle", false, r);
  });
  EXPECT_EQ(e.field(), "qa_pairs");
}

// A hostile qa_pairs nesting 40,000 brackets deep is one bad record naming the depth limit, not a
// stack overflow (the literal parser recursed without a bound).
TEST(TextTrace, LoogleRejectsLiteralsNestedTooDeep) {
  for (std::string open : {"[", "(", "{'k': "}) {
    std::string close = open == "[" ? "]" : open == "(" ? ")" : "}";
    std::string qa;
    for (int k = 0; k < 40000; ++k) qa += open;
    for (int k = 0; k < 40000; ++k) qa += close;
    std::string line = R"({"input": "d", "qa_pairs": ")" + qa + "\"}\n";
    InputError e = input_error([&] {
      TextReadReport r;
      read_conversations(write_file("deep.jsonl", line), "loogle", false, r);
    });
    EXPECT_EQ(e.field(), "qa_pairs") << open;
    EXPECT_NE(std::string(e.what()).find("deeper than 512 levels"), std::string::npos) << e.what();
  }
  // 500 levels (under the limit) still parse: the shape check rejects it, not the depth.
  std::string qa(500, '[');
  qa += std::string(500, ']');
  InputError e = input_error([&] {
    TextReadReport r;
    read_conversations(
        write_file("deep500.jsonl", R"({"input": "d", "qa_pairs": ")" + qa + "\"}\n"), "loogle",
        false, r);
  });
  EXPECT_EQ(std::string(e.what()).find("deeper than"), std::string::npos) << e.what();
}

// A directory given as a chat log is one clear error, not a read of its bytes.
TEST(TextTrace, DirectoryIsOneClearError) {
  std::string dir = temp_path("logs.jsonl");
  std::filesystem::create_directories(dir);
  InputError e = input_error([&] {
    TextReadReport r;
    read_conversations(dir, "sharegpt", false, r);
  });
  EXPECT_NE(std::string(e.what()).find("'" + dir + "' is a directory"), std::string::npos)
      << e.what();
}

std::vector<Conversation> arena_conversations() {
  TextReadReport rep;
  return read_conversations(write_file("arena.jsonl", kArena), "chatbot-arena", false, rep);
}

TEST(TextTrace, DeterministicForASeed) {
  auto convs = arena_conversations();
  auto tok = make_approx_tokenizer();
  TextTraceParams p;
  p.block_tokens = 4;
  p.think_mean_s = 30;
  Trace a = build_text_trace(convs, *tok, p, 5);
  Trace b = build_text_trace(convs, *tok, p, 5);
  Trace c = build_text_trace(convs, *tok, p, 6);
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.blocks, b.blocks);
  EXPECT_EQ(a.session, b.session);
  EXPECT_NE(a.time, c.time);
  ASSERT_EQ(a.size(), 6u);
  a.validate();
}

// Real arrivals: each conversation's first turn starts at its given time (relative to the
// first); too few times for the conversations is an error, not a silent wrap-around.
TEST(TextTrace, RealArrivalsStartTheConversations) {
  auto convs = arena_conversations();
  auto tok = make_approx_tokenizer();
  TextTraceParams p;
  p.block_tokens = 4;
  p.session_starts_s = {100.0, 100.5, 130.0};
  Trace t = build_text_trace(convs, *tok, p, 5);
  std::vector<Time> first(3, -1);
  for (size_t r = 0; r < t.size(); ++r)
    if (t.turn[r] == 1) first[t.session[r]] = t.time[r];
  EXPECT_EQ(first, (std::vector<Time>{0, 500'000, 30'000'000}));
  p.session_starts_s = {1.0, 2.0};
  EXPECT_THROW(build_text_trace(convs, *tok, p, 5), ConfigError);
}

// Turn k+1's prompt starts with every block of turn k's prompt and answer; token counts and
// blocks agree with the conversation's token stream.
TEST(TextTrace, NextTurnCarriesThePromptAndTheAnswer) {
  auto convs = arena_conversations();
  auto tok = make_approx_tokenizer();
  TextTraceParams p;
  p.block_tokens = 4;
  p.max_active = 1;  // conversations one after another
  Trace t = build_text_trace(convs, *tok, p, 3);
  ASSERT_EQ(t.size(), 6u);
  size_t answer_blocks = 0;  // blocks that only an answer filled
  for (uint32_t s = 0; s < 3; ++s) {
    ConversationTokens ct = tokenize_conversation(convs[s], *tok);
    std::vector<size_t> rows;
    for (size_t r = 0; r < t.size(); ++r)
      if (t.session[r] == s) rows.push_back(r);
    ASSERT_EQ(rows.size(), ct.turns());
    for (size_t k = 0; k < rows.size(); ++k) {
      size_t r = rows[k];
      EXPECT_EQ(t.turn[r], k + 1);
      EXPECT_EQ(t.prompt_tokens[r], ct.prompt_end[k]);
      EXPECT_EQ(t.output_tokens[r], ct.answer_end[k] - ct.prompt_end[k]);
      // Reference keys of the stream's full blocks.
      BlockKey key = kRootKey;
      auto prompt = t.prompt(r);
      for (size_t b = 0; b < ct.prompt_end[k] / 4; ++b) {
        key = chain_key(key, text_block_id(&ct.tokens[b * 4], 4));
        EXPECT_EQ(prompt[b], key);
      }
      if (k + 1 < rows.size()) {
        EXPECT_GE(ct.prompt_end[k + 1], ct.answer_end[k]);
        EXPECT_LT(t.time[r], t.time[rows[k + 1]]);
        // Every full block of this prompt + its answer, as reference keys of the stream.
        size_t carried = ct.answer_end[k] / 4;
        auto next = t.prompt(rows[k + 1]);
        ASSERT_GE(next.size(), carried);
        BlockKey ref = kRootKey;
        for (size_t b = 0; b < carried; ++b) {
          ref = chain_key(ref, text_block_id(&ct.tokens[b * 4], 4));
          EXPECT_EQ(next[b], ref) << "turn " << k + 2 << " block " << b;
        }
        answer_blocks += carried - t.prompt_tokens[r] / 4;
      }
    }
    // The stream is the messages' texts tokenized one by one: the answer's tokens are its own.
    std::vector<uint32_t> answer;
    tok->encode(convs[s].messages[1].text, answer);
    EXPECT_TRUE(std::equal(answer.begin(), answer.end(), ct.tokens.begin() + ct.prompt_end[0]));
  }
  EXPECT_GT(answer_blocks, 0u);  // the check above covered answers' blocks
  // With one conversation active at a time, session s+1 starts after s's last answer.
  for (size_t r = 1; r < t.size(); ++r) EXPECT_GE(t.session[r], t.session[r - 1]);
}

TEST(TextTrace, JsonlRoundTripsThroughTheBailianReader) {
  auto convs = arena_conversations();
  auto tok = make_approx_tokenizer();
  TextTraceParams p;
  p.think_mean_s = 10;
  p.system_prompt = "You are a helpful assistant.";
  std::vector<uint64_t> raw;
  Trace t = build_text_trace(convs, *tok, p, 9, &raw);
  ASSERT_EQ(raw.size(), t.blocks.size());
  std::string path = temp_path("out.jsonl");
  write_conversation_jsonl(t, path, raw);
  Trace back = read_trace(path, "auto", ReadOptions{});
  ASSERT_EQ(back.size(), t.size());
  EXPECT_EQ(back.blocks, t.blocks);
  EXPECT_EQ(back.prompt_tokens, t.prompt_tokens);
  EXPECT_EQ(back.output_tokens, t.output_tokens);
  EXPECT_EQ(back.turn, t.turn);
  EXPECT_EQ(back.session, t.session);
  for (size_t r = 0; r < t.size(); ++r) EXPECT_NEAR(back.time[r], t.time[r], 1);
  // Every conversation starts with the shared system prompt.
  EXPECT_EQ(t.prompt(0)[0], t.prompt(t.size() - 1)[0]);
}

// The real datasets, when KVPOLICY_DATA points at them.
TEST(TextTrace, RealChatbotArenaAndShareGpt) {
  const char* dir = std::getenv("KVPOLICY_DATA");
  std::string arena =
      dir ? std::string(dir) + "/chatbot-arena/chatbot_arena_conversations_raw.jsonl" : "";
  std::string share = dir ? std::string(dir) + "/sharegpt-sample/sharegpt_sample_slim.jsonl" : "";
  if (!dir || !std::filesystem::exists(arena) || !std::filesystem::exists(share))
    GTEST_SKIP() << "KVPOLICY_DATA unset or the conversation datasets are absent";
  TextReadReport rep;
  auto convs = read_conversations(arena, "chatbot-arena", false, rep);
  EXPECT_EQ(convs.size(), 2129u);
  EXPECT_EQ(rep.turns, 6080u);  // the README's count of user turns
  EXPECT_EQ(rep.bad_records, 0u);
  // Nine ShareGPT records have no human message: valid data that makes no request, left out and
  // counted (not an error, and not silently dropped).
  TextReadReport srep;
  auto sg = read_conversations(share, "sharegpt", false, srep);
  EXPECT_EQ(srep.without_user, 9u);
  EXPECT_EQ(srep.bad_records, 0u);
  EXPECT_EQ(sg.size(), 991u);
  auto tok = make_approx_tokenizer();
  TextTraceParams p;
  p.max_conversations = 200;
  Trace t = build_text_trace(convs, *tok, p, 1);
  t.validate();
  EXPECT_GT(t.size(), 400u);
}

}  // namespace
}  // namespace kvpolicy
