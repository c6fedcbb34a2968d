// Retention hints from rules (`--hint`): what a client that knows its workload's structure would
// ask the cache to keep, or, for the study, hints from the trace's future (the bound on what
// hints can be worth), random ones and adversarial ones. docs/policies.md, "Retention hints".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

struct HintRule {
  enum class Kind {
    kSystemPrompt,  // the leading blocks shared with another session's requests
    kSessionPin,    // the whole sequence of each turn (priority 100 unless given)
    kOracle,        // from the future: blocks reused within the duration, kept until that reuse;
                    // blocks never reused again, priority 0
    kRandom,        // a share of blocks chosen by their key's hash (a wrong hint)
    kAdversarial,   // the blocks never reused again (the worst hint)
  };
  Kind kind = Kind::kSystemPrompt;
  int32_t priority = 90;
  Time duration = 0;
  double share = 0;  // kRandom
  std::string text;  // as written
};

// "system-prompt=90:600s", "session-pin=120s" or "session-pin=100:120s", "oracle=90:600s",
// "random=90:600s:0.1", "adversarial=100:1h". Priority 0-100; durations in us, ms, s, m or h,
// or "inf" (never expires). Throws ConfigError naming --hint and what is wrong.
HintRule parse_hint_rule(const std::string& text);
std::vector<HintRule> parse_hint_rules(const std::vector<std::string>& texts);

// A duration as rules write it ("600s", "1.5m", "inf"); throws ConfigError naming `what`.
Time parse_hint_duration(const std::string& text, const std::string& what);

// Adds the hints of `rules` (in order, after any the trace carries: a later hint on a block
// overrides an earlier one) to every request of `trace`. `seed` picks the random rule's blocks.
void apply_hint_rules(Trace& trace, std::span<const HintRule> rules, uint64_t seed = 1);

// How many leading blocks of each request are shared with a request of another session (a
// request without a session is its own): the system-prompt rule's range.
std::vector<uint32_t> shared_prefix_blocks(const Trace& trace);

}  // namespace kvpolicy
