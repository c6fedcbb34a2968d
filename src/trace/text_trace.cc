// Conversations to replayable traces: the chat template that tokenizes a conversation, the
// block ids of its prompts, and the turns' arrival times.
#include "kvpolicy/trace/text_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <queue>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/token_blocks.h"
#include "kvpolicy/trace/generators.h"

namespace kvpolicy {

ConversationTokens tokenize_conversation(const Conversation& c, const Tokenizer& tok,
                                         const std::string& system_prompt) {
  ConversationTokens t;
  t.independent = c.independent_turns;
  auto header = [&](Role r, std::vector<uint32_t>& out) {
    tok.encode(r == Role::kUser        ? "<|im_start|>user\n"
               : r == Role::kAssistant ? "<|im_start|>assistant\n"
                                       : "<|im_start|>system\n",
               out);
  };
  auto footer = [&](std::vector<uint32_t>& out) { tok.encode("<|im_end|>\n", out); };
  auto message = [&](Role r, const std::string& text, std::vector<uint32_t>& out) {
    header(r, out);
    tok.encode(text, out);
    footer(out);
  };
  if (!system_prompt.empty()) message(Role::kSystem, system_prompt, t.tokens);

  if (c.independent_turns) {
    // The first message is the shared context (a document); then question/answer pairs.
    size_t k = 0;
    if (!c.messages.empty()) {
      header(c.messages[0].role, t.tokens);
      tok.encode(c.messages[0].text, t.tokens);
      tok.encode("\n\n", t.tokens);
      k = 1;
    }
    for (; k < c.messages.size(); ++k) {
      if (c.messages[k].role != Role::kUser) continue;
      std::vector<uint32_t> q;
      tok.encode(c.messages[k].text, q);
      footer(q);
      header(Role::kAssistant, q);
      std::vector<uint32_t> answer;
      if (k + 1 < c.messages.size() && c.messages[k + 1].role == Role::kAssistant)
        tok.encode(c.messages[k + 1].text, answer);
      t.questions.push_back(std::move(q));
      t.answer_tokens.push_back(static_cast<uint32_t>(answer.size()));
    }
    return t;
  }

  bool pending_user = false;
  auto close_turn = [&](const std::string* answer) {
    header(Role::kAssistant, t.tokens);
    t.prompt_end.push_back(static_cast<uint32_t>(t.tokens.size()));
    if (answer) tok.encode(*answer, t.tokens);
    t.answer_end.push_back(static_cast<uint32_t>(t.tokens.size()));
    t.answer_tokens.push_back(t.answer_end.back() - t.prompt_end.back());
    if (answer) footer(t.tokens);
    pending_user = false;
  };
  for (const Message& m : c.messages) {
    if (m.role == Role::kAssistant && pending_user) {
      close_turn(&m.text);
    } else {
      // User and system messages join the next prompt; an assistant message before any user
      // message (a conversation cut out of a longer one) is context.
      message(m.role, m.text, t.tokens);
      pending_user |= m.role == Role::kUser;
    }
  }
  if (pending_user) close_turn(nullptr);  // a last question without an answer
  return t;
}

uint64_t text_block_id(const uint32_t* tokens, size_t count) {
  return token_block_id(tokens, count);
}

void text_block_ids(const uint32_t* tokens, size_t n, uint32_t B, std::vector<uint64_t>& ids,
                    size_t from_block) {
  for (size_t b = from_block * B; b < n; b += B)
    ids.push_back(text_block_id(tokens + b, std::min<size_t>(B, n - b)));
}

Trace build_text_trace(const std::vector<Conversation>& conversations, const Tokenizer& tok,
                       const TextTraceParams& p, uint64_t seed, std::vector<uint64_t>* raw_ids) {
  if (p.block_tokens == 0 || !(p.session_rate > 0) || !(p.think_mean_s >= 0) || p.max_active == 0 ||
      !(p.decode_ms >= 0))
    throw ConfigError(
        "trace build: block_tokens, session_rate and max_active must be positive, "
        "think time and decode time >= 0");
  const uint32_t B = p.block_tokens;
  size_t count = conversations.size();
  if (p.max_conversations) count = std::min<size_t>(count, p.max_conversations);
  std::vector<ConversationTokens> toks(count);
  for (size_t i = 0; i < count; ++i)
    toks[i] = tokenize_conversation(conversations[i], tok, p.system_prompt);

  if (!p.session_starts_s.empty() && p.session_starts_s.size() < count)
    throw ConfigError(
        fmt::format("trace build: the arrivals give {} start times for {} conversations (use "
                    "--max-conversations {} or a longer arrivals file)",
                    p.session_starts_s.size(), count, p.session_starts_s.size()));
  // Times: Poisson (or the given real) starts; a conversation waits while max_active are active;
  // each next turn follows the answer's decoding and an exponential think time.
  Rng rng(seed);
  struct Event {
    Time time;
    uint32_t session, turn;
  };
  std::vector<Event> events;
  std::priority_queue<double, std::vector<double>, std::greater<double>> active_ends;
  double arrival = 0;
  for (uint32_t s = 0; s < count; ++s) {
    if (!p.session_starts_s.empty())
      arrival = p.session_starts_s[s] - p.session_starts_s[0];
    else if (s > 0)
      arrival += rng.exponential(1.0 / p.session_rate);
    while (!active_ends.empty() && active_ends.top() <= arrival) active_ends.pop();
    double t = arrival;
    if (active_ends.size() >= p.max_active) {
      t = std::max(t, active_ends.top());
      active_ends.pop();
    }
    const ConversationTokens& ct = toks[s];
    for (uint32_t k = 0; k < ct.turns(); ++k) {
      events.push_back({static_cast<Time>(std::llround(t * kMicrosPerSecond)), s, k});
      t += ct.answer_tokens[k] * p.decode_ms * 1e-3;
      if (k + 1 < ct.turns()) t += rng.exponential(p.think_mean_s);
    }
    active_ends.push(t);
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.time != b.time         ? a.time < b.time
           : a.session != b.session ? a.session < b.session
                                    : a.turn < b.turn;
  });

  Trace trace;
  trace.block_tokens = B;
  std::vector<std::vector<uint64_t>> full(count);  // per nested conversation: its full blocks
  std::vector<uint64_t> ids;
  std::vector<uint32_t> prompt;
  for (const Event& e : events) {
    const ConversationTokens& ct = toks[e.session];
    ids.clear();
    uint32_t prompt_tokens;
    if (ct.independent) {
      prompt.assign(ct.tokens.begin(), ct.tokens.end());
      prompt.insert(prompt.end(), ct.questions[e.turn].begin(), ct.questions[e.turn].end());
      text_block_ids(prompt.data(), prompt.size(), B, ids);
      prompt_tokens = static_cast<uint32_t>(prompt.size());
    } else {
      prompt_tokens = ct.prompt_end[e.turn];
      std::vector<uint64_t>& f = full[e.session];
      size_t whole = prompt_tokens / B;
      for (size_t b = f.size(); b < whole; ++b) f.push_back(text_block_id(&ct.tokens[b * B], B));
      ids.assign(f.begin(), f.begin() + whole);
      if (prompt_tokens % B) ids.push_back(text_block_id(&ct.tokens[whole * B], prompt_tokens % B));
    }
    if (raw_ids) raw_ids->insert(raw_ids->end(), ids.begin(), ids.end());
    trace.add_request(e.time, ids, prompt_tokens, ct.answer_tokens[e.turn], e.session, e.turn + 1,
                      0);
    if (e.turn + 1 == ct.turns()) full[e.session] = {};
  }
  return trace;
}

}  // namespace kvpolicy
