// Conversation: synthetic multi-turn chat sessions whose turns extend the previous context
// (the LPC paper's workload shape: capped active conversations, exponential think time).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <queue>

#include "generator_limits.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/generators.h"
#include "token_context.h"

namespace kvpolicy {
namespace {

struct TurnPlan {
  double time_s;
  uint32_t prompt_tokens;  // the new user prompt only
  uint32_t answer_tokens;
};

struct SessionPlan {
  uint32_t system = 0;
  std::vector<TurnPlan> turns;
};

}  // namespace

Trace generate_conversation(const ConversationParams& p, uint64_t seed) {
  if (p.sessions == 0 || p.session_rate <= 0 || p.max_active == 0 || p.system_prompts == 0 ||
      p.system_alpha < 0 || p.turns_mean < 1 || p.max_turns == 0 || p.prompt_tokens_mean <= 0 ||
      p.answer_tokens_mean <= 0 || p.system_tokens_mean <= 0 || p.think_mean_s < 0 ||
      p.decode_ms_per_token < 0 || p.block_tokens == 0 || p.system_tokens_sigma < 0 ||
      p.prompt_tokens_sigma < 0 || p.answer_tokens_sigma < 0)
    throw ConfigError("conversation: parameters out of range (see `kvpolicy trace generate`)");
  const uint32_t B = p.block_tokens;
  // Expected sizes: turn k's context is the system prompt and k earlier turns plus its prompt.
  const double turns = std::min<double>(p.turns_mean, p.max_turns);
  const double context = p.system_tokens_mean + p.prompt_tokens_mean +
                         (turns - 1) / 2 * (p.prompt_tokens_mean + p.answer_tokens_mean);
  check_generator_size(
      "conversation",
      fmt::format("sessions={} x turns={} of about {:.0f} tokens", p.sessions, p.turns_mean,
                  context),
      double(p.sessions) * turns, std::ceil(context / B),
      double(p.system_prompts) * p.system_tokens_mean * 4 + double(p.sessions) * turns * 40);

  // The shared system prompts, from their own stream so the pool does not depend on timing.
  Rng pool_rng(mix64(seed ^ 0x73797374656d0000ULL));
  std::vector<std::vector<uint32_t>> system(p.system_prompts);
  for (auto& s : system)
    append_random(pool_rng, draw_length(pool_rng, p.system_tokens_mean, p.system_tokens_sigma), s);

  // Plan every session: arrival, start under the active cap, and its turns' times and lengths.
  Rng rng(seed);
  ZipfSampler pick_system(p.system_prompts, p.system_alpha);
  std::vector<SessionPlan> plans(p.sessions);
  std::priority_queue<double, std::vector<double>, std::greater<double>> active_ends;
  double arrival = 0;
  size_t total_turns = 0;
  for (uint32_t s = 0; s < p.sessions; ++s) {
    if (s > 0) arrival += rng.exponential(1.0 / p.session_rate);
    SessionPlan& plan = plans[s];
    plan.system = static_cast<uint32_t>(pick_system(rng));
    uint32_t turns = std::min(p.max_turns, rng.geometric(p.turns_mean));
    while (!active_ends.empty() && active_ends.top() <= arrival) active_ends.pop();
    double start = arrival;
    if (active_ends.size() >= p.max_active) {  // wait for the earliest active one to end
      start = active_ends.top();
      active_ends.pop();
    }
    double t = start;
    for (uint32_t k = 0; k < turns; ++k) {
      TurnPlan turn;
      turn.time_s = t;
      turn.prompt_tokens = draw_length(rng, p.prompt_tokens_mean, p.prompt_tokens_sigma);
      turn.answer_tokens = draw_length(rng, p.answer_tokens_mean, p.answer_tokens_sigma);
      plan.turns.push_back(turn);
      t += turn.answer_tokens * p.decode_ms_per_token * 1e-3;
      if (k + 1 < turns) t += rng.exponential(p.think_mean_s);
    }
    active_ends.push(t);
    total_turns += turns;
  }

  // Every turn in time order; a session's turns keep their order on equal times.
  struct Event {
    Time time;
    uint32_t session, turn;
  };
  std::vector<Event> events;
  events.reserve(total_turns);
  for (uint32_t s = 0; s < p.sessions; ++s)
    for (uint32_t k = 0; k < plans[s].turns.size(); ++k)
      events.push_back({generated_time(plans[s].turns[k].time_s, "conversation"), s, k});
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.time != b.time         ? a.time < b.time
           : a.session != b.session ? a.session < b.session
                                    : a.turn < b.turn;
  });

  // Contents: each session's context grows turn by turn; full blocks are hashed once.
  std::vector<TokenContext> ctx(p.sessions);
  Trace t;
  t.name = fmt::format("conversation(seed={})", seed);
  t.block_tokens = B;
  std::vector<uint64_t> ids;
  for (const Event& e : events) {
    const TurnPlan& turn = plans[e.session].turns[e.turn];
    TokenContext& c = ctx[e.session];
    // Per-session content stream: a session's text does not depend on the interleaving.
    Rng content(mix64(seed * 0x9e3779b97f4a7c15ULL + e.session) ^ mix64(e.turn + 1));
    if (e.turn == 0) {
      const auto& sys = system[plans[e.session].system];
      c.tokens.assign(sys.begin(), sys.end());
    }
    append_random(content, turn.prompt_tokens, c.tokens);
    c.block_ids(B, ids);
    t.add_request(e.time, ids, static_cast<uint32_t>(c.tokens.size()), turn.answer_tokens,
                  e.session, e.turn + 1, 0);
    if (e.turn + 1 == plans[e.session].turns.size()) {
      c = TokenContext{};  // the session is over: free its context
    } else {
      append_random(content, turn.answer_tokens, c.tokens);
    }
  }
  return t;
}

std::vector<ParamSpec> conversation_param_specs() {
  ConversationParams d;
  const ParamRange count{.min = 1, .max = UINT32_MAX}, positive{.min = 0, .min_exclusive = true},
      non_negative{.min = 0};
  return {
      param_int("sessions", d.sessions, count, "conversations in the trace"),
      param_double("session_rate", d.session_rate, positive,
                   "Poisson arrivals of conversations per second"),
      param_int("max_active", d.max_active, count,
                "at most this many conversations active at once"),
      param_int("system_prompts", d.system_prompts, count, "size of the shared system-prompt pool"),
      param_double("system_alpha", d.system_alpha, non_negative,
                   "Zipf exponent of system-prompt popularity"),
      param_double("system_tokens", d.system_tokens_mean, positive,
                   "mean system-prompt length (log-normal)"),
      param_double("system_sigma", d.system_tokens_sigma, non_negative,
                   "sigma of log system-prompt length"),
      param_double("turns", d.turns_mean, {.min = 1}, "mean turns per conversation (geometric)"),
      param_int("max_turns", d.max_turns, count, "cap on turns per conversation"),
      param_double("prompt_tokens", d.prompt_tokens_mean, positive,
                   "mean new user-prompt length (log-normal)"),
      param_double("prompt_sigma", d.prompt_tokens_sigma, non_negative,
                   "sigma of log user-prompt length"),
      param_double("answer_tokens", d.answer_tokens_mean, positive,
                   "mean answer length (log-normal)"),
      param_double("answer_sigma", d.answer_tokens_sigma, non_negative,
                   "sigma of log answer length"),
      param_double("think_s", d.think_mean_s, non_negative,
                   "mean think time after an answer, seconds (exponential)"),
      param_double("decode_ms", d.decode_ms_per_token, non_negative,
                   "answer duration per output token, ms"),
      param_int("block_tokens", d.block_tokens, count, "tokens per KV block"),
  };
}

ConversationParams conversation_params(const Params& params) {
  // The declarations bound every value; the counts fit 32 bits.
  auto u32 = [&](const char* name) { return static_cast<uint32_t>(params.get_int(name)); };
  ConversationParams p;
  p.sessions = u32("sessions");
  p.session_rate = params.get_double("session_rate");
  p.max_active = u32("max_active");
  p.system_prompts = u32("system_prompts");
  p.system_alpha = params.get_double("system_alpha");
  p.system_tokens_mean = params.get_double("system_tokens");
  p.system_tokens_sigma = params.get_double("system_sigma");
  p.turns_mean = params.get_double("turns");
  p.max_turns = u32("max_turns");
  p.prompt_tokens_mean = params.get_double("prompt_tokens");
  p.prompt_tokens_sigma = params.get_double("prompt_sigma");
  p.answer_tokens_mean = params.get_double("answer_tokens");
  p.answer_tokens_sigma = params.get_double("answer_sigma");
  p.think_mean_s = params.get_double("think_s");
  p.decode_ms_per_token = params.get_double("decode_ms");
  p.block_tokens = u32("block_tokens");
  return p;
}

}  // namespace kvpolicy
