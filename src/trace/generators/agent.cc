// Agent: synthetic tool-using agent sessions. Each session starts from one of a few long shared
// system+tool prefixes, and every turn appends the model's tool call and the tool's output, after
// a tool-call pause of a stated log-normal length (some of them long). docs/formats.md, "Agent
// workloads", states the model and its defaults.
#include <fmt/format.h>

#include <algorithm>

#include "generator_limits.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/generators.h"
#include "token_context.h"

namespace kvpolicy {
namespace {}  // namespace

double AgentParams::mean_pause_s() const {
  // A log-normal with median m and sigma s has mean m exp(s^2 / 2).
  return (1 - long_pause_share) * pause_median_s * std::exp(pause_sigma * pause_sigma / 2) +
         long_pause_share * long_pause_median_s * std::exp(long_pause_sigma * long_pause_sigma / 2);
}

double AgentParams::prefix_share() const {
  double T = turns_mean, P = prefix_tokens_mean;
  return P * T / (T * (P + task_tokens_mean) + (T * T - T) * (call_tokens_mean + tool_tokens_mean));
}

double AgentParams::draw_pause_s(Rng& rng) const {
  bool long_one = rng.uniform() < long_pause_share;
  double median = long_one ? long_pause_median_s : pause_median_s;
  double sigma = long_one ? long_pause_sigma : pause_sigma;
  return median * std::exp(sigma * rng.normal());
}

Trace generate_agent(const AgentParams& p, uint64_t seed) {
  if (p.sessions == 0 || !(p.session_rate > 0) || p.prefixes == 0 || !(p.prefix_alpha >= 0) ||
      !(p.turns_mean >= 1) || p.max_turns == 0 || !(p.prefix_tokens_mean > 0) ||
      !(p.task_tokens_mean > 0) || !(p.tool_tokens_mean > 0) || !(p.call_tokens_mean > 0) ||
      !(p.pause_median_s > 0) || !(p.long_pause_median_s > 0) ||
      !(p.long_pause_share >= 0 && p.long_pause_share <= 1) || !(p.decode_ms_per_token >= 0) ||
      p.block_tokens == 0 || !(p.prefix_tokens_sigma >= 0) || !(p.task_tokens_sigma >= 0) ||
      !(p.tool_tokens_sigma >= 0) || !(p.call_tokens_sigma >= 0) || !(p.pause_sigma >= 0) ||
      !(p.long_pause_sigma >= 0))
    throw ConfigError("agent: parameters out of range (see `kvpolicy trace generate`)");
  const uint32_t B = p.block_tokens;
  const double turns = std::min<double>(p.turns_mean, p.max_turns);
  const double context = p.prefix_tokens_mean + p.task_tokens_mean +
                         (turns - 1) / 2 * (p.call_tokens_mean + p.tool_tokens_mean);
  check_generator_size("agent",
                       fmt::format("sessions={} x turns={} of about {:.0f} tokens", p.sessions,
                                   p.turns_mean, context),
                       double(p.sessions) * turns, std::ceil(context / B),
                       double(p.prefixes) * p.prefix_tokens_mean * 4 + double(p.sessions) * 64);

  // The shared prefixes, from their own stream.
  Rng pool_rng(mix64(seed ^ 0x6167656e74000000ULL));
  std::vector<std::vector<uint32_t>> prefix(p.prefixes);
  for (auto& s : prefix)
    append_random(pool_rng, draw_length(pool_rng, p.prefix_tokens_mean, p.prefix_tokens_sigma), s);

  // Plan: each session's arrival, prefix and turns (time, task or tool output, tool call).
  struct Turn {
    double time_s;
    uint32_t new_tokens;   // the task (first turn) or the last tool's output
    uint32_t call_tokens;  // the model's answer: a tool call
  };
  struct Plan {
    uint32_t prefix;
    std::vector<Turn> turns;
  };
  Rng rng(seed);
  ZipfSampler pick(p.prefixes, p.prefix_alpha);
  std::vector<Plan> plans(p.sessions);
  double arrival = 0;
  struct Event {
    Time time;
    uint32_t session, turn;
  };
  std::vector<Event> events;
  for (uint32_t s = 0; s < p.sessions; ++s) {
    if (s > 0) arrival += rng.exponential(1.0 / p.session_rate);
    Plan& plan = plans[s];
    plan.prefix = static_cast<uint32_t>(pick(rng));
    uint32_t n = std::min(p.max_turns, rng.geometric(p.turns_mean));
    double t = arrival;
    for (uint32_t k = 0; k < n; ++k) {
      Turn turn;
      turn.time_s = t;
      turn.new_tokens = k == 0 ? draw_length(rng, p.task_tokens_mean, p.task_tokens_sigma)
                               : draw_length(rng, p.tool_tokens_mean, p.tool_tokens_sigma);
      turn.call_tokens = draw_length(rng, p.call_tokens_mean, p.call_tokens_sigma);
      plan.turns.push_back(turn);
      events.push_back({generated_time(t, "agent"), s, k});
      t += turn.call_tokens * p.decode_ms_per_token * 1e-3 + p.draw_pause_s(rng);
    }
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.time != b.time         ? a.time < b.time
           : a.session != b.session ? a.session < b.session
                                    : a.turn < b.turn;
  });

  std::vector<TokenContext> ctx(p.sessions);
  Trace t;
  t.name = fmt::format("agent(seed={})", seed);
  t.block_tokens = B;
  std::vector<uint64_t> ids;
  for (const Event& e : events) {
    const Plan& plan = plans[e.session];
    const Turn& turn = plan.turns[e.turn];
    TokenContext& c = ctx[e.session];
    Rng content(mix64(seed * 0x9e3779b97f4a7c15ULL + e.session) ^ mix64(e.turn + 1));
    if (e.turn == 0) c.tokens = prefix[plan.prefix];
    append_random(content, turn.new_tokens, c.tokens);
    c.block_ids(B, ids);
    t.add_request(e.time, ids, static_cast<uint32_t>(c.tokens.size()), turn.call_tokens, e.session,
                  e.turn + 1, 0);
    if (e.turn + 1 == plan.turns.size()) {
      c = TokenContext{};
    } else {
      append_random(content, turn.call_tokens, c.tokens);
    }
  }
  return t;
}

std::vector<ParamSpec> agent_param_specs() {
  AgentParams d;
  const ParamRange count{.min = 1, .max = UINT32_MAX}, positive{.min = 0, .min_exclusive = true},
      non_negative{.min = 0};
  return {
      param_int("sessions", d.sessions, count, "agent sessions in the trace"),
      param_double("session_rate", d.session_rate, positive,
                   "Poisson arrivals of sessions per second"),
      param_int("prefixes", d.prefixes, count, "shared system+tool prefixes (agent types)"),
      param_double("prefix_alpha", d.prefix_alpha, non_negative,
                   "Zipf exponent of the prefixes' popularity"),
      param_double("prefix_tokens", d.prefix_tokens_mean, positive,
                   "mean shared prefix length (log-normal)"),
      param_double("prefix_sigma", d.prefix_tokens_sigma, non_negative,
                   "sigma of log prefix length"),
      param_double("turns", d.turns_mean, {.min = 1}, "mean turns per session (geometric)"),
      param_int("max_turns", d.max_turns, count, "cap on turns per session"),
      param_double("task_tokens", d.task_tokens_mean, positive,
                   "mean first-turn task length (log-normal)"),
      param_double("task_sigma", d.task_tokens_sigma, non_negative, "sigma of log task length"),
      param_double("tool_tokens", d.tool_tokens_mean, positive,
                   "mean tool output appended per turn (log-normal)"),
      param_double("tool_sigma", d.tool_tokens_sigma, non_negative,
                   "sigma of log tool-output length"),
      param_double("call_tokens", d.call_tokens_mean, positive,
                   "mean model answer (the tool call) per turn (log-normal)"),
      param_double("call_sigma", d.call_tokens_sigma, non_negative,
                   "sigma of log tool-call length"),
      param_double("pause_s", d.pause_median_s, positive,
                   "median tool-call pause, seconds (log-normal)"),
      param_double("pause_sigma", d.pause_sigma, non_negative, "sigma of log pause"),
      param_double("long_pause_share", d.long_pause_share, {.min = 0, .max = 1},
                   "share of pauses drawn from the long distribution"),
      param_double("long_pause_s", d.long_pause_median_s, positive,
                   "median long pause, seconds (log-normal)"),
      param_double("long_pause_sigma", d.long_pause_sigma, non_negative, "sigma of log long pause"),
      param_double("decode_ms", d.decode_ms_per_token, non_negative,
                   "tool-call duration per output token, ms"),
      param_int("block_tokens", d.block_tokens, count, "tokens per KV block"),
  };
}

AgentParams agent_params(const Params& params) {
  auto u32 = [&](const char* name) { return static_cast<uint32_t>(params.get_int(name)); };
  AgentParams p;
  p.sessions = u32("sessions");
  p.session_rate = params.get_double("session_rate");
  p.prefixes = u32("prefixes");
  p.prefix_alpha = params.get_double("prefix_alpha");
  p.prefix_tokens_mean = params.get_double("prefix_tokens");
  p.prefix_tokens_sigma = params.get_double("prefix_sigma");
  p.turns_mean = params.get_double("turns");
  p.max_turns = u32("max_turns");
  p.task_tokens_mean = params.get_double("task_tokens");
  p.task_tokens_sigma = params.get_double("task_sigma");
  p.tool_tokens_mean = params.get_double("tool_tokens");
  p.tool_tokens_sigma = params.get_double("tool_sigma");
  p.call_tokens_mean = params.get_double("call_tokens");
  p.call_tokens_sigma = params.get_double("call_sigma");
  p.pause_median_s = params.get_double("pause_s");
  p.pause_sigma = params.get_double("pause_sigma");
  p.long_pause_share = params.get_double("long_pause_share");
  p.long_pause_median_s = params.get_double("long_pause_s");
  p.long_pause_sigma = params.get_double("long_pause_sigma");
  p.decode_ms_per_token = params.get_double("decode_ms");
  p.block_tokens = u32("block_tokens");
  return p;
}

}  // namespace kvpolicy
