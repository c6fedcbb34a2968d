#include "kvpolicy/app/import_sanity.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/core/percentile.h"

namespace kvpolicy::app {
namespace {

// "Most" prompts, for the one-block warning: a log where half the prompts fit in one block gets
// no reuse from half its requests whatever the cache.
constexpr double kMostShare = 0.5;

template <typename T>
void median_p99(std::vector<T>& v, uint64_t& median, uint64_t& p99) {
  std::sort(v.begin(), v.end());
  median = percentile_nearest_rank(v, 50);
  p99 = percentile_nearest_rank(v, 99);
}

void count_sessions(const Trace& t, SanityReport& s) {
  std::unordered_map<SessionId, uint32_t> last;  // session -> its latest request
  std::unordered_map<SessionId, uint64_t> turns;
  for (size_t r = 0; r < t.size(); ++r) {
    SessionId id = t.session[r];
    if (id == kNoSession) continue;
    ++turns[id];
    auto it = last.find(id);
    if (it != last.end()) {
      ++s.session_pairs;
      s.session_pairs_sharing += common_prefix_blocks(t, it->second, r) > 0;
    }
    last[id] = static_cast<uint32_t>(r);
  }
  std::vector<uint64_t> counts;
  for (auto& [id, n] : turns) counts.push_back(n);
  s.sessions = counts.size();
  uint64_t p99 = 0;
  median_p99(counts, s.turns_median, p99);
  s.turns_max = counts.empty() ? 0 : counts.back();
}

void ideal_hit_rates(const Trace& t, SanityReport& s) {
  std::unordered_set<BlockKey> seen;
  seen.reserve(t.num_block_accesses());
  uint64_t hits = 0, token_hits = 0, tokens = 0;
  for (size_t r = 0; r < t.size(); ++r) {
    uint64_t h = 0;
    for (BlockKey k : t.prompt(r)) h += !seen.insert(k).second;
    hits += h;
    token_hits += std::min<uint64_t>(h * t.block_tokens, t.prompt_tokens[r]);
    tokens += t.prompt_tokens[r];
  }
  s.ideal_block_hit_rate = t.num_block_accesses() ? double(hits) / t.num_block_accesses() : 0;
  s.ideal_token_hit_rate = tokens ? double(token_hits) / tokens : 0;
}

void add_warnings(const Trace& t, bool sorted, SanityReport& s) {
  auto warn = [&](const char* code, std::string text) { s.warnings.push_back({code, text}); };
  if (s.prompts && s.one_block_prompts >= kMostShare * double(s.prompts))
    warn("one_block_prompts",
         fmt::format("{} of {} prompts ({:.1f}%) are one block ({} tokens) or less: the block "
                     "size is larger than most prompts, so they can hit at most their one block",
                     s.one_block_prompts, s.prompts, 100.0 * s.one_block_prompts / s.prompts,
                     t.block_tokens));
  if (s.session_pairs && s.session_pairs_sharing == 0)
    warn("no_session_reuse",
         fmt::format("no turn of any session shares even its first block with the session's "
                     "previous turn ({} pairs of consecutive turns): each turn's prompt does not "
                     "start with the previous one's (a changing head, or the session column is "
                     "not a conversation)",
                     s.session_pairs));
  if (s.prompts > 1 && s.ideal_block_hit_rate == 0)
    warn("no_shared_blocks",
         "no two requests share any block: the ideal (infinite-cache) hit rate is 0, so no "
         "cache or policy can hit (different text at every prompt's start, or prompts shorter "
         "than a block)");
  if (sorted)
    warn("rows_sorted",
         "the rows' times were not increasing in the file; they were sorted (stably), so "
         "the trace's order is the times', not the file's");
  if (s.prompts > 1 && t.time.front() == t.time.back())
    warn("equal_times",
         "every request has the same time: replays keep the file's order, but serve mode "
         "sees them all arrive at once (check the time column and --time-unit)");
}

}  // namespace

uint32_t common_prefix_blocks(const Trace& trace, size_t before, size_t r) {
  auto a = trace.prompt(before), b = trace.prompt(r);
  size_t n = std::min(a.size(), b.size()), i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return static_cast<uint32_t>(i);
}

SanityReport import_sanity(const Trace& t, bool sorted) {
  SanityReport s;
  s.prompts = t.size();
  s.block_tokens = t.block_tokens;
  std::vector<uint64_t> tokens(t.prompt_tokens.begin(), t.prompt_tokens.end()), blocks;
  for (size_t r = 0; r < t.size(); ++r) {
    blocks.push_back(t.prompt_blocks(r));
    s.one_block_prompts += t.prompt_blocks(r) <= 1;
  }
  median_p99(tokens, s.tokens_median, s.tokens_p99);
  median_p99(blocks, s.blocks_median, s.blocks_p99);
  count_sessions(t, s);
  ideal_hit_rates(t, s);
  add_warnings(t, sorted, s);
  return s;
}

std::string SanityReport::text() const {
  std::string out = fmt::format(
      "sanity: {} prompts; tokens per prompt median {}, p99 {}; blocks of {} tokens per prompt "
      "median {}, p99 {}\n",
      prompts, tokens_median, tokens_p99, block_tokens, blocks_median, blocks_p99);
  if (sessions)
    out += fmt::format(
        "sanity: {} sessions, turns per session median {}, max {}; {} of {} consecutive turns "
        "share a prefix with the previous turn\n",
        sessions, turns_median, turns_max, session_pairs_sharing, session_pairs);
  else
    out += "sanity: no sessions\n";
  out +=
      fmt::format("sanity: ideal (infinite-cache) hit rate {:.1f}% of blocks, {:.1f}% of tokens\n",
                  100 * ideal_block_hit_rate, 100 * ideal_token_hit_rate);
  for (const SanityWarning& w : warnings) out += fmt::format("warning: {}: {}\n", w.code, w.text);
  return out;
}

std::string SanityReport::to_json() const {
  std::string list;
  for (const SanityWarning& w : warnings)
    list += (list.empty() ? "" : ",") + JsonObject().add("code", w.code).add("text", w.text).str();
  return JsonObject()
      .add("prompts", prompts)
      .add("block_tokens", block_tokens)
      .add("tokens_median", tokens_median)
      .add("tokens_p99", tokens_p99)
      .add("blocks_median", blocks_median)
      .add("blocks_p99", blocks_p99)
      .add("sessions", sessions)
      .add("turns_median", turns_median)
      .add("turns_max", turns_max)
      .add("session_pairs", session_pairs)
      .add("session_pairs_sharing", session_pairs_sharing)
      .add("one_block_prompts", one_block_prompts)
      .add("ideal_block_hit_rate", ideal_block_hit_rate)
      .add("ideal_token_hit_rate", ideal_token_hit_rate)
      .raw("warnings", "[" + list + "]")
      .str();
}

}  // namespace kvpolicy::app
