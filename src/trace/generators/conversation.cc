// Conversation: synthetic multi-turn chat sessions whose turns extend the previous context
// (the LPC paper's workload shape: capped active conversations, exponential think time).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <queue>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/generators.h"

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

uint32_t draw_length(Rng& rng, double mean, double sigma) {
  double v = std::round(rng.lognormal_mean(mean, sigma));
  return static_cast<uint32_t>(std::clamp(v, 1.0, 1e6));
}

void append_random(Rng& rng, uint32_t count, std::vector<uint32_t>& out) {
  for (uint32_t i = 0; i < count; ++i) out.push_back(static_cast<uint32_t>(rng.next()));
}

}  // namespace

Trace generate_conversation(const ConversationParams& p, uint64_t seed) {
  if (p.sessions == 0 || p.session_rate <= 0 || p.max_active == 0 || p.system_prompts == 0 ||
      p.system_alpha < 0 || p.turns_mean < 1 || p.max_turns == 0 || p.prompt_tokens_mean <= 0 ||
      p.answer_tokens_mean <= 0 || p.system_tokens_mean <= 0 || p.think_mean_s < 0 ||
      p.decode_ms_per_token < 0 || p.block_tokens == 0 || p.system_tokens_sigma < 0 ||
      p.prompt_tokens_sigma < 0 || p.answer_tokens_sigma < 0)
    throw ConfigError("conversation: parameters out of range (see `kvpolicy trace generate`)");
  const uint32_t B = p.block_tokens;

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
      events.push_back(
          {static_cast<Time>(std::llround(plans[s].turns[k].time_s * kMicrosPerSecond)), s, k});
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.time != b.time         ? a.time < b.time
           : a.session != b.session ? a.session < b.session
                                    : a.turn < b.turn;
  });

  // Contents: each session's context grows turn by turn; full blocks are hashed once.
  struct Context {
    std::vector<uint32_t> tokens;
    std::vector<uint64_t> full_ids;
  };
  std::vector<Context> ctx(p.sessions);
  Trace t;
  t.name = fmt::format("conversation(seed={})", seed);
  t.block_tokens = B;
  std::vector<uint64_t> ids;
  for (const Event& e : events) {
    const TurnPlan& turn = plans[e.session].turns[e.turn];
    Context& c = ctx[e.session];
    // Per-session content stream: a session's text does not depend on the interleaving.
    Rng content(mix64(seed * 0x9e3779b97f4a7c15ULL + e.session) ^ mix64(e.turn + 1));
    if (e.turn == 0) {
      const auto& sys = system[plans[e.session].system];
      c.tokens.assign(sys.begin(), sys.end());
    }
    append_random(content, turn.prompt_tokens, c.tokens);
    for (size_t b = c.full_ids.size() * B; b + B <= c.tokens.size(); b += B)
      c.full_ids.push_back(hash_tokens(c.tokens.data() + b, B));
    ids.assign(c.full_ids.begin(), c.full_ids.end());
    size_t tail = c.tokens.size() % B;
    if (tail) ids.push_back(hash_tokens(c.tokens.data() + c.tokens.size() - tail, tail));
    t.add_request(e.time, ids, static_cast<uint32_t>(c.tokens.size()), turn.answer_tokens,
                  e.session, e.turn + 1, 0);
    if (e.turn + 1 == plans[e.session].turns.size()) {
      c = Context{};  // the session is over: free its context
    } else {
      append_random(content, turn.answer_tokens, c.tokens);
    }
  }
  return t;
}

std::vector<ParamSpec> conversation_param_specs() {
  ConversationParams d;
  auto num = [](double v) { return fmt::format("{:g}", v); };
  return {
      {"sessions", num(d.sessions), "conversations in the trace"},
      {"session_rate", num(d.session_rate), "Poisson arrivals of conversations per second"},
      {"max_active", num(d.max_active), "at most this many conversations active at once"},
      {"system_prompts", num(d.system_prompts), "size of the shared system-prompt pool"},
      {"system_alpha", num(d.system_alpha), "Zipf exponent of system-prompt popularity"},
      {"system_tokens", num(d.system_tokens_mean), "mean system-prompt length (log-normal)"},
      {"system_sigma", num(d.system_tokens_sigma), "sigma of log system-prompt length"},
      {"turns", num(d.turns_mean), "mean turns per conversation (geometric)"},
      {"max_turns", num(d.max_turns), "cap on turns per conversation"},
      {"prompt_tokens", num(d.prompt_tokens_mean), "mean new user-prompt length (log-normal)"},
      {"prompt_sigma", num(d.prompt_tokens_sigma), "sigma of log user-prompt length"},
      {"answer_tokens", num(d.answer_tokens_mean), "mean answer length (log-normal)"},
      {"answer_sigma", num(d.answer_tokens_sigma), "sigma of log answer length"},
      {"think_s", num(d.think_mean_s), "mean think time after an answer, seconds (exponential)"},
      {"decode_ms", num(d.decode_ms_per_token), "answer duration per output token, ms"},
      {"block_tokens", num(d.block_tokens), "tokens per KV block"},
  };
}

ConversationParams conversation_params(const Params& params) {
  auto u32 = [&](const std::string& name, int64_t min) {
    int64_t v = params.get_int(name);
    if (v < min || v > UINT32_MAX)
      throw ConfigError(fmt::format("conversation: {} must be an integer >= {}", name, min));
    return static_cast<uint32_t>(v);
  };
  auto real = [&](const std::string& name, double min, bool strict) {
    double v = params.get_double(name);
    if (strict ? v <= min : v < min)
      throw ConfigError(
          fmt::format("conversation: {} must be {} {:g}", name, strict ? ">" : ">=", min));
    return v;
  };
  ConversationParams p;
  p.sessions = u32("sessions", 1);
  p.session_rate = real("session_rate", 0, true);
  p.max_active = u32("max_active", 1);
  p.system_prompts = u32("system_prompts", 1);
  p.system_alpha = real("system_alpha", 0, false);
  p.system_tokens_mean = real("system_tokens", 0, true);
  p.system_tokens_sigma = real("system_sigma", 0, false);
  p.turns_mean = real("turns", 1, false);
  p.max_turns = u32("max_turns", 1);
  p.prompt_tokens_mean = real("prompt_tokens", 0, true);
  p.prompt_tokens_sigma = real("prompt_sigma", 0, false);
  p.answer_tokens_mean = real("answer_tokens", 0, true);
  p.answer_tokens_sigma = real("answer_sigma", 0, false);
  p.think_mean_s = real("think_s", 0, false);
  p.decode_ms_per_token = real("decode_ms", 0, false);
  p.block_tokens = u32("block_tokens", 1);
  return p;
}

}  // namespace kvpolicy
