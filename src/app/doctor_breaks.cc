// Sections 2 and 3 of `kvpolicy doctor` (docs/doctor.md): where prompts stop sharing a prefix
// with their session's previous turn, and with recent requests of other sessions, and why.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "doctor_internal.h"
#include "kvpolicy/app/import_sanity.h"
#include "kvpolicy/trace/text_trace.h"

namespace kvpolicy::app::doctor {
namespace {

constexpr size_t kExamples = 3;
constexpr size_t kCandidates = 8;      // recent requests of other sessions compared with
constexpr uint32_t kNearStart = 4;     // a break "near the start": in the first 4 blocks
constexpr size_t kLongHeadChars = 64;  // "a long common head" after the span, in characters

Content content_of(const std::vector<KeptPrompt>* prompts, size_t r) {
  if (!prompts) return {};
  const KeptPrompt& k = (*prompts)[r];
  return {k.text, &k.tokens};
}

bool has_content(const std::vector<KeptPrompt>* prompts) {
  if (!prompts) return false;
  return std::any_of(prompts->begin(), prompts->end(),
                     [](const KeptPrompt& k) { return !k.text.empty() || !k.tokens.empty(); });
}

uint64_t line_of(const std::vector<KeptPrompt>* prompts, size_t r) {
  return prompts ? (*prompts)[r].line : r + 1;
}

void count(BreakSection& s, uint32_t block) {
  size_t b = position_bucket(block);
  if (s.histogram.size() <= b) s.histogram.resize(b + 1);
  ++s.histogram[b];
}

void add_cause(BreakSection& s, const Diff& d, const BreakExample& ex) {
  auto it = std::find_if(s.causes.begin(), s.causes.end(),
                         [&](const BreakCause& c) { return c.code == d.cause; });
  if (it == s.causes.end()) {
    s.causes.push_back({d.cause, 0, {}});
    it = s.causes.end() - 1;
  }
  ++it->count;
  if (it->examples.size() < kExamples) it->examples.push_back(ex);
}

void sort_causes(BreakSection& s) {
  std::stable_sort(s.causes.begin(), s.causes.end(),
                   [](const BreakCause& a, const BreakCause& b) { return a.count > b.count; });
}

BreakExample example(const std::vector<KeptPrompt>* prompts, size_t earlier, size_t r,
                     uint32_t block, const Diff& d) {
  return {line_of(prompts, r), line_of(prompts, earlier), block, d.before, d.after};
}

// Where two contents first differ, for choosing the most similar candidate; at most kCompare
// characters (or tokens) are compared, which is past the first blocks, where a span counts.
constexpr size_t kCompare = 8192;
size_t common_content(const Content& a, const Content& b) {
  if (!a.text.empty() && !b.text.empty()) {
    size_t n = std::min({a.text.size(), b.text.size(), kCompare}), i = 0;
    while (i < n && a.text[i] == b.text[i]) ++i;
    return i;
  }
  if (a.tokens && b.tokens) {
    size_t n = std::min({a.tokens->size(), b.tokens->size(), kCompare}), i = 0;
    while (i < n && (*a.tokens)[i] == (*b.tokens)[i]) ++i;
    return i;
  }
  return 0;
}

// The previous answer in the next prompt: its first characters (kAnswerKey, or fewer when the
// change is that early) within kAnswerWithin after the previous prompt, then all of it unchanged.
// Else false with d's cause answer_missing or answer_changed and its excerpts.
constexpr size_t kAnswerWithin = 256;
constexpr size_t kAnswerKey = 32;
bool answer_carried(const std::string& prev, const std::string& answer, const std::string& text,
                    Diff& d) {
  std::string_view a = answer;
  while (!a.empty() && std::isspace(static_cast<unsigned char>(a.front()))) a.remove_prefix(1);
  while (!a.empty() && std::isspace(static_cast<unsigned char>(a.back()))) a.remove_suffix(1);
  if (a.empty()) return true;
  // Its start: the longest of its first 32, 16, 8 or 4 characters found in the window.
  size_t q = std::string::npos;
  for (size_t key = kAnswerKey; key >= 4 && q == std::string::npos; key /= 2) {
    q = text.find(a.substr(0, std::min(a.size(), key)), prev.size());
    if (q != std::string::npos && q - prev.size() > kAnswerWithin) q = std::string::npos;
  }
  if (q == std::string::npos) {
    d.cause = "answer_missing";
    d.before = excerpt_of(a, 0);
    d.after = excerpt_of(text, prev.size());
    return false;
  }
  size_t k = 0;
  while (k < a.size() && q + k < text.size() && a[k] == text[q + k]) ++k;
  if (k == a.size()) return true;
  d.cause = "answer_changed";
  d.before = excerpt_of(a, k);
  d.after = excerpt_of(text, q + k);
  return false;
}

}  // namespace

BreakSection within_sessions(const Trace& t, const std::vector<KeptPrompt>* prompts,
                             AnchorCounts& anchors) {
  BreakSection s;
  bool content = has_content(prompts);
  std::unordered_map<SessionId, uint32_t> last;
  for (size_t r = 0; r < t.size(); ++r) {
    SessionId id = t.session[r];
    if (id == kNoSession) continue;
    auto it = last.find(id);
    if (it != last.end()) {
      size_t e = it->second;
      ++s.pairs;
      uint32_t b = common_prefix_blocks(t, e, r);
      // A break: before the previous prompt's last full block (its partial one never matches).
      if (b < t.prompt_tokens[e] / std::max<uint32_t>(t.block_tokens, 1)) {
        ++s.breaks;
        count(s, b);
        if (content) {
          Diff d = classify(content_of(prompts, e), content_of(prompts, r));
          if (d.cause == kVolatile) anchors.add(d, !content_of(prompts, e).text.empty());
          add_cause(s, d, example(prompts, e, r, b, d));
        }
      }
    }
    last[id] = static_cast<uint32_t>(r);
  }
  sort_causes(s);
  s.basis = content ? "each turn's prompt against its session's previous prompt (answers are "
                      "compared in 2b when output_text is mapped, else they are lengths only); "
                      "causes told from the prompts' text or token ids, messages recognised by "
                      "'role:' lines, ChatML or Llama 3 headers"
                    : "each turn's prompt against its session's previous prompt, by block keys; "
                      "the trace holds no text or token ids, so causes cannot be told";
  return s;
}

BreakSection across_sessions(const Trace& t, const std::vector<KeptPrompt>* prompts,
                             AnchorCounts& anchors) {
  BreakSection s;
  bool content = has_content(prompts);
  std::vector<uint32_t> recent;  // the latest request of each recent session, newest last
  for (size_t r = 0; r < t.size(); ++r) {
    SessionId id = t.session[r];
    size_t best = SIZE_MAX, best_common = 0;
    uint32_t best_blocks = 0;
    for (size_t k = recent.size(); k-- > 0;) {
      size_t e = recent[k];
      if (id != kNoSession && t.session[e] == id) continue;
      uint32_t b = common_prefix_blocks(t, e, r);
      size_t c = content ? common_content(content_of(prompts, e), content_of(prompts, r)) : b;
      if (best == SIZE_MAX || c > best_common || (c == best_common && b > best_blocks)) {
        best = e;
        best_common = c;
        best_blocks = b;
      }
    }
    if (id != kNoSession) std::erase_if(recent, [&](uint32_t e) { return t.session[e] == id; });
    recent.push_back(static_cast<uint32_t>(r));
    if (recent.size() > kCandidates) recent.erase(recent.begin());
    if (best == SIZE_MAX) continue;
    ++s.pairs;
    count(s, best_blocks);
    if (!content || best_blocks >= kNearStart) continue;
    Content a = content_of(prompts, best), b = content_of(prompts, r);
    Diff d = classify(a, b);
    bool long_head = a.text.empty() ? d.cause == kVolatile  // tokens: resync of 8 tokens
                                    : d.agree_after >= kLongHeadChars;
    if (d.cause != kVolatile || !long_head) continue;
    ++s.breaks;
    anchors.add(d, !a.text.empty());
    add_cause(s, d, example(prompts, best, r, best_blocks, d));
  }
  s.basis = content
                ? fmt::format(
                      "each request against the most similar of the latest requests of {} other "
                      "sessions; a break counts when the prompts part in the first {} blocks at "
                      "a short run of digits or hex and agree again for {} characters or more",
                      kCandidates, kNearStart, kLongHeadChars)
                : fmt::format(
                      "each request against the latest requests of {} other sessions, by block "
                      "keys; the trace holds no text or token ids, so a volatile span cannot be "
                      "told from a different prompt",
                      kCandidates);
  return s;
}

BreakSection answers_within_sessions(const Trace& t, const std::vector<KeptPrompt>* prompts) {
  BreakSection s;
  if (!prompts || std::none_of(prompts->begin(), prompts->end(),
                               [](const KeptPrompt& k) { return !k.output_text.empty(); }))
    return s;
  std::unordered_map<SessionId, uint32_t> last;
  for (size_t r = 0; r < t.size(); ++r) {
    SessionId id = t.session[r];
    if (id == kNoSession) continue;
    auto it = last.find(id);
    size_t e = it == last.end() ? SIZE_MAX : it->second;
    last[id] = static_cast<uint32_t>(r);
    if (e == SIZE_MAX) continue;
    const std::string &prev = (*prompts)[e].text, &answer = (*prompts)[e].output_text,
                      &text = (*prompts)[r].text;
    if (prev.empty() || answer.empty() || !text.starts_with(prev)) continue;
    ++s.pairs;
    Diff d;
    if (!answer_carried(prev, answer, text, d)) {
      ++s.breaks;
      uint32_t block = t.prompt_tokens[e] / std::max<uint32_t>(t.block_tokens, 1);
      count(s, block);
      add_cause(s, d, example(prompts, e, r, block, d));
    }
  }
  sort_causes(s);
  s.basis = fmt::format(
      "each turn whose prompt starts with its session's previous prompt, against that prompt's "
      "answer (output_text): the answer must follow within {} characters, as generated; the "
      "block is where the answer starts",
      kAnswerWithin);
  return s;
}

void AnchorCounts::add(const Diff& d, bool from_text) {
  if (from_text) {
    ++text[d.anchor];
    return;
  }
  auto& [count, span] = tokens[d.token_anchor];
  ++count;
  span = std::max(span, d.span_tokens);
}

std::vector<TokenAnchor> top_token_anchors(const AnchorCounts& anchors, size_t n) {
  std::vector<std::pair<TokenAnchor, uint64_t>> v;
  for (auto& [before, cs] : anchors.tokens) v.push_back({{before, cs.second}, cs.first});
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second > b.second; });
  std::vector<TokenAnchor> out;
  for (size_t i = 0; i < v.size() && i < n; ++i) out.push_back(v[i].first);
  return out;
}

std::vector<std::string> top_anchors(const AnchorCounts& anchors, size_t n) {
  std::vector<std::pair<std::string, uint64_t>> v(anchors.text.begin(), anchors.text.end());
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second > b.second; });
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size() && i < n; ++i) out.push_back(v[i].first);
  return out;
}

Trace rebuild(const Trace& t, const std::vector<std::vector<uint32_t>>& tokens,
              uint32_t block_tokens) {
  Trace out;
  out.name = t.name;
  out.block_tokens = block_tokens;
  out.category_names = t.category_names;
  std::vector<uint64_t> ids;
  for (size_t r = 0; r < t.size(); ++r) {
    ids.clear();
    text_block_ids(tokens[r].data(), tokens[r].size(), block_tokens, ids);
    out.add_request(t.time[r], ids, static_cast<uint32_t>(tokens[r].size()), t.output_tokens[r],
                    t.session[r], t.turn[r], t.category[r], t.user[r]);
  }
  return out;
}

}  // namespace kvpolicy::app::doctor
