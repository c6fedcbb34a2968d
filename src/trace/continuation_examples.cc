// Turn-level examples for the continuation classifier, the split by conversation, and the
// scores put back on a trace's requests.
#include "kvpolicy/trace/continuation_examples.h"

#include <algorithm>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {
namespace {

int64_t code_points(const std::string& s) {
  int64_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

// The user prompts of a conversation's turns, as tokenize_conversation delimits them, and the
// length of each turn's answer (-1 without one) in `answers`.
std::vector<std::string> turn_prompts(const Conversation& c, std::vector<int64_t>* answers) {
  std::vector<std::string> prompts;
  if (c.independent_turns) {
    for (size_t k = 1; k < c.messages.size(); ++k)
      if (c.messages[k].role == Role::kUser) {
        prompts.push_back(c.messages[k].text);
        answers->push_back(k + 1 < c.messages.size() && c.messages[k + 1].role == Role::kAssistant
                               ? code_points(c.messages[k + 1].text)
                               : -1);
      }
    return prompts;
  }
  std::string pending;
  bool open = false;
  for (const Message& m : c.messages) {
    if (m.role == Role::kAssistant && open) {
      prompts.push_back(std::move(pending));
      answers->push_back(code_points(m.text));
      pending.clear();
      open = false;
    } else if (m.role == Role::kUser) {
      if (open) pending += "\n\n";
      pending += m.text;
      open = true;
    }
  }
  if (open) {
    prompts.push_back(std::move(pending));
    answers->push_back(-1);
  }
  return prompts;
}

uint64_t hash_string(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ULL;
  return mix64(h);
}

}  // namespace

bool continuation_split_test(const Conversation& c, uint32_t index, double test_share) {
  return continuation_split_value(c, index) < test_share;
}

double continuation_split_value(const Conversation& c, uint32_t index) {
  std::string_view key = c.id;
  if (size_t us = key.rfind('_');
      us != std::string_view::npos && us > 0 && us + 1 < key.size() &&
      key.substr(0, us).find('_') == std::string_view::npos &&
      std::all_of(key.begin() + us + 1, key.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    key = key.substr(0, us);
  const uint64_t h = key.empty() ? mix64(index + 0x636f6e76ULL) : hash_string(key);
  // The top 53 bits as a uniform number in [0, 1).
  return double(h >> 11) * 0x1.0p-53;
}

std::vector<ConversationTurnExample> continuation_examples(
    const std::vector<Conversation>& conversations, double test_share, uint32_t window) {
  if (!(test_share >= 0 && test_share <= 1) || window == 0)
    throw ConfigError("continuation examples: test share must be in [0, 1] and window positive");
  std::vector<ConversationTurnExample> out;
  for (uint32_t i = 0; i < conversations.size(); ++i) {
    std::vector<int64_t> answers;
    const std::vector<std::string> prompts = turn_prompts(conversations[i], &answers);
    const double split = continuation_split_value(conversations[i], i);
    const bool test = split < test_share;
    for (size_t k = 0; k < prompts.size(); ++k) {
      ConversationTurnExample e;
      e.conversation = i;
      e.turn = static_cast<uint32_t>(k + 1);
      e.continues = k + 1 < prompts.size();
      e.test = test;
      e.split = split;
      for (size_t j = 0; j < window && j <= k; ++j) e.prompts.push_back(prompts[k - j]);
      e.previous_answer_chars = k > 0 ? answers[k - 1] : -1;
      out.push_back(std::move(e));
    }
  }
  return out;
}

void set_continuation(Trace& trace, const std::vector<ConversationTurnExample>& examples,
                      const std::vector<float>& scores) {
  if (scores.size() != examples.size())
    throw Error("set_continuation: one score per example is needed");
  // first[i] = index of conversation i's turn-1 example; turns follow it in order.
  std::vector<size_t> first, turns;
  for (size_t e = 0; e < examples.size(); ++e) {
    const uint32_t c = examples[e].conversation;
    if (c >= first.size()) {
      first.resize(c + 1, SIZE_MAX);
      turns.resize(c + 1, 0);
    }
    if (first[c] == SIZE_MAX) first[c] = e;
    ++turns[c];
  }
  trace.continuation.assign(trace.size(), 0.0f);
  for (size_t r = 0; r < trace.size(); ++r) {
    const SessionId s = trace.session[r];
    const uint32_t t = trace.turn[r];
    if (s == kNoSession || s >= first.size() || first[s] == SIZE_MAX || t == 0 || t > turns[s] ||
        examples[first[s] + t - 1].turn != t)
      throw Error("set_continuation: request " + std::to_string(r) + " (session " +
                  std::to_string(s) + ", turn " + std::to_string(t) +
                  ") has no example; was the trace built from the same conversations?");
    trace.continuation[r] = std::clamp(scores[first[s] + t - 1], 0.0f, 1.0f);
  }
}

}  // namespace kvpolicy
