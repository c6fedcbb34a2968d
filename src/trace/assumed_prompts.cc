// The assumption model of `trace import --assume` (assumed_prompts.h; docs/formats.md,
// "Length-only logs").
#include "kvpolicy/trace/assumed_prompts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/input_file.h"
#include "kvpolicy/core/types.h"
#include "kvpolicy/trace/text_trace.h"
#include "kvpolicy/trace/trace_stream.h"

namespace kvpolicy {
namespace {

constexpr const char* kOwner = "--assume";

// Salts of the token streams, so a system prompt's tokens and a session's never coincide.
constexpr uint64_t kSystemSalt = 0x73797374656d2121ULL, kSessionSalt = 0x73657373696f6e21ULL;

uint64_t hash3(uint64_t a, uint64_t b, uint64_t c) { return mix64(mix64(mix64(a) ^ b) ^ c); }

// A uniform draw in (0, 1) from a hash.
double unit(uint64_t h) { return (double(h >> 11) + 0.5) * 0x1.0p-53; }

// One session's token stream: its system prompt's first `system_len` tokens, then its own. A
// prompt is the stream's first prompt_tokens tokens; so is the next turn's, longer by the reply
// and the new message, which is what makes it share the whole previous context.
struct Session {
  uint64_t uid = 0;
  uint32_t system_id = 0, system_len = 0;
  uint32_t planned = 1, turns = 0;
  uint64_t context = 0;  // tokens the next turn's prompt starts with
  Time last = 0;
  bool open = true;
};

}  // namespace

const std::vector<ParamSpec>& assumed_prompt_params() {
  static const std::vector<ParamSpec> spec = {
      param_int("system", 512, {.min = 0, .max = double(UINT32_MAX)},
                "tokens of each shared system prompt (clamped to a session's first prompt)"),
      param_int("system_prompts", 4, {.min = 0, .max = 1 << 20},
                "distinct system prompts, one per session by a seeded hash (0: none)"),
      param_double("turns", 3, {.min = 1, .max = 1e6},
                   "mean planned session length in requests (geometric; 1: no sessions)"),
      param_choice("reply", "output", {"output", "none"},
                   "what a continuation's prompt holds of the previous turn besides its prompt: "
                   "the reply (output tokens as logged) or nothing"),
      param_double("idle", 600, {.min = 0, .max = 1e9},
                   "seconds a session waits for its next turn before it ends"),
      param_int("seed", 1, {.min = 0}, "seed of the sessions' lengths and system prompts"),
  };
  return spec;
}

AssumedPromptModel parse_assumed_prompt_model(const std::string& text) {
  Params p = Params::parse(text, assumed_prompt_params(), kOwner);
  AssumedPromptModel m;
  m.system = static_cast<uint32_t>(p.get_int("system"));
  m.system_prompts = static_cast<uint32_t>(p.get_int("system_prompts"));
  m.turns = p.get_double("turns");
  m.reply = p.get_string("reply");
  m.idle = p.get_double("idle");
  m.seed = static_cast<uint64_t>(p.get_int("seed"));
  return m;
}

std::string AssumedPromptModel::canonical() const {
  return fmt::format("system={},system_prompts={},turns={:g},reply={},idle={:g},seed={}", system,
                     system_prompts, turns, reply, idle, seed);
}

std::string AssumedPromptModel::statement() const {
  std::string shared = system == 0 || system_prompts == 0
                           ? std::string("no shared system prompt")
                           : fmt::format("{} shared system prompt{} of {} tokens", system_prompts,
                                         system_prompts == 1 ? "" : "s", system);
  std::string sessions =
      turns <= 1
          ? std::string("no sessions")
          : fmt::format("sessions geometric with mean {:g} planned turns, a turn within {:g} s {}",
                        turns, idle,
                        reply == "output" ? "resending the previous prompt and reply"
                                          : "resending the previous prompt");
  return fmt::format("lengths from the log; {}; {}; the rest unique (seed {})", shared, sessions,
                     seed);
}

std::string assumption_line(const Trace::Assumptions& a) {
  if (a.empty()) return "";
  return fmt::format("assumed prompts: {} (kvpolicy trace import --assume \"{}\")", a.statement,
                     a.model);
}

AssumedPromptReport assume_prompts(Trace& trace, const AssumedPromptModel& m) {
  const size_t n = trace.size();
  const uint32_t B = trace.block_tokens;
  const bool with_reply = m.reply == "output";
  const Time idle = static_cast<Time>(std::llround(m.idle * kMicrosPerSecond));
  // Geometric on {1, 2, ...} with mean `turns`: P(length > k) = q^k, q = 1 - 1/turns.
  const double q = 1 - 1 / m.turns;

  // The lengths are the log's: an absurd one (billions of tokens) must be one clear error, not
  // an allocation that fails halfway.
  uint64_t blocks = 0, longest = 0;
  for (uint32_t len : trace.prompt_tokens) {
    blocks += (uint64_t(len) + B - 1) / B;
    longest = std::max<uint64_t>(longest, len);
  }
  require_memory(blocks * kTraceBytesPerBlock + n * kTraceBytesPerRequest + longest * 4,
                 "--assume: the prompts of the log's lengths");

  std::vector<Session> sessions;
  // Open sessions by context length: a request continues the longest context it holds.
  std::multimap<uint64_t, size_t> open;
  std::vector<uint32_t> tokens;
  std::vector<uint64_t> ids;
  Trace out;
  out.name = trace.name;
  out.block_tokens = B;
  out.category_names = trace.category_names;
  out.reserve(n, trace.blocks.size());
  AssumedPromptReport report;

  for (size_t r = 0; r < n; ++r) {
    const Time t = trace.time[r];
    const uint64_t len = trace.prompt_tokens[r];
    size_t s = SIZE_MAX;
    for (auto it = open.upper_bound(len); it != open.begin();) {
      --it;
      Session& cand = sessions[it->second];
      if (t - cand.last > idle) {  // ended unanswered; no later request continues it either
        it = open.erase(it);
        continue;
      }
      s = it->second;
      open.erase(it);
      break;
    }
    if (s == SIZE_MAX) {
      s = sessions.size();
      Session fresh;
      fresh.uid = hash3(m.seed ^ kSessionSalt, s, 0);
      if (m.system && m.system_prompts) {
        fresh.system_id =
            static_cast<uint32_t>(hash3(m.seed ^ kSystemSalt, s, 1) % m.system_prompts);
        fresh.system_len = static_cast<uint32_t>(std::min<uint64_t>(m.system, len));
      }
      // Inverse CDF: planned = 1 + floor(log(u) / log(q)).
      if (q > 0) {
        double extra = std::floor(std::log(unit(hash3(m.seed, s, 2))) / std::log(q));
        fresh.planned = static_cast<uint32_t>(std::min(1.0 + extra, double(UINT32_MAX)));
      }
      sessions.push_back(fresh);
      ++report.sessions;
    } else {
      ++report.continuations;
    }
    Session& cur = sessions[s];
    tokens.resize(len);
    for (uint64_t i = 0; i < len; ++i)
      tokens[i] = static_cast<uint32_t>(i < cur.system_len
                                            ? hash3(m.seed ^ kSystemSalt, cur.system_id, i + 2)
                                            : hash3(cur.uid, i, 3));
    ids.clear();
    text_block_ids(tokens.data(), tokens.size(), B, ids);
    ++cur.turns;
    cur.last = t;
    cur.context = len + (with_reply ? trace.output_tokens[r] : 0);
    out.add_request(t, ids, trace.prompt_tokens[r], trace.output_tokens[r],
                    static_cast<SessionId>(s), cur.turns, trace.category[r], trace.user[r]);
    if (cur.turns < cur.planned) open.emplace(cur.context, s);
  }
  if (trace.has_continuation()) out.continuation = trace.continuation;
  out.assumptions = {m.canonical(), m.statement()};
  trace = std::move(out);
  return report;
}

}  // namespace kvpolicy
