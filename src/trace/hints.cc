// Retention hints from rules: parsing `--hint` and adding the hints to a trace (hints.h).
#include "kvpolicy/trace/hints.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

[[noreturn]] void bad(const std::string& text, const std::string& what) {
  throw ConfigError("--hint '" + text + "': " + what +
                    " (expected system-prompt=P:D, session-pin=[P:]D, oracle=P:D, "
                    "random=P:D:SHARE or adversarial=P:D; P a priority 0-100, D a duration "
                    "such as 600s, 10m, 1h or inf)");
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

int32_t parse_priority(const std::string& s, const std::string& text) {
  int32_t p = -1;
  auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), p);
  if (s.empty() || err != std::errc() || end != s.data() + s.size() || p < 0 || p > 100)
    bad(text, "priority '" + s + "' is not an integer from 0 to 100");
  return p;
}

// Per block hints of one request, merged into ranges of equal hints.
void add_ranges(std::vector<RetentionHint>& out, std::span<const int32_t> prio,
                std::span<const Time> dur, int32_t none) {
  for (size_t i = 0; i < prio.size();) {
    size_t j = i + 1;
    while (j < prio.size() && prio[j] == prio[i] && dur[j] == dur[i]) ++j;
    if (prio[i] != none)
      out.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(j), prio[i], dur[i]});
    i = j;
  }
}

}  // namespace

Time parse_hint_duration(const std::string& text, const std::string& what) {
  if (text == "inf" || text == "never" || text == "forever") return RetentionHint::kForever;
  size_t digits = 0;
  while (digits < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
    ++digits;
  std::string unit = text.substr(digits);
  double scale = unit == "us"   ? 1
                 : unit == "ms" ? 1e3
                 : unit == "s"  ? 1e6
                 : unit == "m"  ? 60e6
                 : unit == "h"  ? 3600e6
                                : -1;
  double value = 0;
  auto [end, err] = std::from_chars(text.data(), text.data() + digits, value);
  if (digits == 0 || err != std::errc() || end != text.data() + digits || scale < 0)
    throw ConfigError(what + ": duration '" + text +
                      "' is not a number with a unit (us, ms, s, m, h) or inf");
  double micros = value * scale;
  if (!(micros < double(kMaxTime))) throw ConfigError(what + ": duration '" + text + "' too long");
  return static_cast<Time>(std::llround(micros));
}

HintRule parse_hint_rule(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos) bad(text, "no '='");
  std::string kind = text.substr(0, eq);
  std::vector<std::string> args = split(text.substr(eq + 1), ':');
  HintRule r;
  r.text = text;
  auto duration = [&](const std::string& s) {
    return parse_hint_duration(s, "--hint '" + text + "'");
  };
  if (kind == "session-pin") {
    r.kind = HintRule::Kind::kSessionPin;
    if (args.size() == 1) {
      r.priority = 100;
      r.duration = duration(args[0]);
    } else if (args.size() == 2) {
      r.priority = parse_priority(args[0], text);
      r.duration = duration(args[1]);
    } else {
      bad(text, "session-pin takes D or P:D");
    }
    return r;
  }
  if (kind == "system-prompt") {
    r.kind = HintRule::Kind::kSystemPrompt;
  } else if (kind == "oracle") {
    r.kind = HintRule::Kind::kOracle;
  } else if (kind == "random") {
    r.kind = HintRule::Kind::kRandom;
  } else if (kind == "adversarial") {
    r.kind = HintRule::Kind::kAdversarial;
  } else {
    bad(text, "unknown rule '" + kind + "'");
  }
  size_t want = r.kind == HintRule::Kind::kRandom ? 3 : 2;
  if (args.size() != want) bad(text, kind + " takes " + (want == 3 ? "P:D:SHARE" : "P:D"));
  r.priority = parse_priority(args[0], text);
  r.duration = duration(args[1]);
  if (r.kind == HintRule::Kind::kOracle && r.duration == RetentionHint::kForever)
    bad(text, "the oracle's horizon D must be finite");
  if (want == 3) {
    const std::string& s = args[2];
    auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), r.share);
    if (s.empty() || err != std::errc() || end != s.data() + s.size() || !(r.share >= 0) ||
        r.share > 1)
      bad(text, "share '" + s + "' is not a number from 0 to 1");
  }
  return r;
}

std::vector<HintRule> parse_hint_rules(const std::vector<std::string>& texts) {
  std::vector<HintRule> out;
  for (const std::string& t : texts) out.push_back(parse_hint_rule(t));
  return out;
}

std::vector<uint32_t> shared_prefix_blocks(const Trace& trace) {
  // Per key: the first session that holds it, and whether another one does too.
  struct Seen {
    uint64_t session;
    bool shared;
  };
  std::unordered_map<BlockKey, Seen> seen;
  seen.reserve(trace.blocks.size());
  auto session_of = [&](size_t r) {
    return trace.session[r] == kNoSession ? (uint64_t{1} << 63) | r : uint64_t{trace.session[r]};
  };
  for (size_t r = 0; r < trace.size(); ++r)
    for (BlockKey k : trace.prompt(r)) {
      auto [it, fresh] = seen.try_emplace(k, Seen{session_of(r), false});
      if (!fresh && it->second.session != session_of(r)) it->second.shared = true;
    }
  std::vector<uint32_t> out(trace.size(), 0);
  for (size_t r = 0; r < trace.size(); ++r) {
    uint32_t n = 0;
    for (BlockKey k : trace.prompt(r)) {
      if (!seen[k].shared) break;
      ++n;
    }
    out[r] = n;
  }
  return out;
}

void apply_hint_rules(Trace& trace, std::span<const HintRule> rules, uint64_t seed) {
  if (rules.empty()) return;
  bool future = false, shared = false;
  for (const HintRule& r : rules) {
    future |= r.kind == HintRule::Kind::kOracle || r.kind == HintRule::Kind::kAdversarial;
    shared |= r.kind == HintRule::Kind::kSystemPrompt;
  }
  Oracle oracle;
  if (future) oracle = compute_oracle(trace);
  std::vector<uint32_t> prefix;
  if (shared) prefix = shared_prefix_blocks(trace);
  constexpr int32_t kNone = -1;
  std::vector<std::vector<RetentionHint>> per_request(trace.size());
  std::vector<int32_t> prio;
  std::vector<Time> dur;
  for (size_t r = 0; r < trace.size(); ++r) {
    auto& out = per_request[r];
    auto own = trace.hints_of(r);
    out.assign(own.begin(), own.end());
    uint64_t first = trace.block_offset[r];
    uint32_t n = trace.prompt_blocks(r);
    for (const HintRule& rule : rules) {
      switch (rule.kind) {
        case HintRule::Kind::kSystemPrompt:
          if (prefix[r] > 0) out.push_back({0, prefix[r], rule.priority, rule.duration});
          break;
        case HintRule::Kind::kSessionPin:
          out.push_back({0, RetentionHint::kToEnd, rule.priority, rule.duration});
          break;
        default: {
          prio.assign(n, kNone);
          dur.assign(n, 0);
          for (uint32_t i = 0; i < n; ++i) {
            uint64_t a = first + i;
            uint32_t next = future ? oracle.next_request[a] : Oracle::kNoNext;
            if (rule.kind == HintRule::Kind::kRandom) {
              uint64_t x = mix64(trace.blocks[a] ^ mix64(seed + 0x68696e74));
              if (double(x >> 11) * 0x1p-53 < rule.share) {
                prio[i] = rule.priority;
                dur[i] = rule.duration;
              }
            } else if (next == Oracle::kNoNext) {  // never reused again
              prio[i] = rule.kind == HintRule::Kind::kOracle ? 0 : rule.priority;
              dur[i] =
                  rule.kind == HintRule::Kind::kOracle ? RetentionHint::kForever : rule.duration;
            } else if (rule.kind == HintRule::Kind::kOracle) {
              Time gap = trace.time[next] - trace.time[r];
              if (gap <= rule.duration) {  // kept until just past its next use
                prio[i] = rule.priority;
                dur[i] = gap + 1;
              }
            }
          }
          add_ranges(out, prio, dur, kNone);
        }
      }
    }
  }
  trace.set_hints(per_request);
}

}  // namespace kvpolicy
