// Why two prompts part, told from their content (docs/doctor.md, "Causes"): a volatile run of
// digits or hex, a template change, reordered messages, a changed first (system) message.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>

#include "doctor_internal.h"

namespace kvpolicy::app::doctor {
namespace {

constexpr size_t kMaxSpan = 48;      // a volatile run is at most this long (characters)
constexpr size_t kAgree = 16;        // ... and both texts agree this long after it
constexpr size_t kMaxTokenSpan = 8;  // the same in token ids
constexpr size_t kTokenAgree = 8;
constexpr size_t kExcerpt = 30;     // characters either side of a difference
constexpr size_t kAnchor = 16;      // characters of constant text before a volatile span
constexpr size_t kTokenAnchor = 4;  // tokens before a volatile span in token ids
// What a masked span of token ids becomes: one token no tokenizer gives.
constexpr uint32_t kMaskToken = 0xFFFFFFFFu;

bool is_volatile(char c) {
  return c != 0 && (std::isxdigit(static_cast<unsigned char>(c)) || std::strchr("-:._/+TZ ", c));
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// kExcerpt characters either side of `at`, cut at UTF-8 character boundaries, on one line.
std::string excerpt(std::string_view s, size_t at) {
  size_t from = at > kExcerpt ? at - kExcerpt : 0, to = std::min(s.size(), at + kExcerpt);
  while (from > 0 && continuation_byte(s[from])) --from;
  while (to < s.size() && continuation_byte(s[to])) ++to;
  std::string out(s.substr(from, to - from));
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return (from ? "…" : "") + out + (to < s.size() ? "…" : "");
}

}  // namespace

std::string excerpt_of(std::string_view text, size_t at) { return excerpt(text, at); }

namespace {

template <typename Seq>
size_t first_difference(const Seq& a, const Seq& b) {
  size_t n = std::min(a.size(), b.size()), i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Length of the run from `from` whose items pass `ok`, at most `cap`.
template <typename Seq, typename Ok>
size_t run_length(const Seq& s, size_t from, size_t cap, Ok ok) {
  size_t n = 0;
  while (from + n < s.size() && n < cap && ok(s[from + n])) ++n;
  return n;
}

// How long a[i..] and b[j..] agree, counting both ending together as agreeing to the end.
template <typename Seq>
size_t agreement(const Seq& a, size_t i, const Seq& b, size_t j, size_t want) {
  size_t n = 0;
  while (i + n < a.size() && j + n < b.size() && n < want && a[i + n] == b[j + n]) ++n;
  if (i + n == a.size() && j + n == b.size()) return want;  // both end: nothing differs after
  return n;
}

// The shortest spans [at, at+i) of a and [at, at+j) of b, each within the first `va`/`vb` items
// after `at`, after which both agree for `want` items. False if there are none.
template <typename Seq>
bool resync(const Seq& a, const Seq& b, size_t at, size_t va, size_t vb, size_t want, size_t& i,
            size_t& j) {
  for (size_t total = 1; total <= va + vb; ++total)
    for (size_t x = 0; x <= std::min(total, va); ++x) {
      size_t y = total - x;
      if (y > vb) continue;
      if (agreement(a, at + x, b, at + y, want) >= want) {
        i = x;
        j = y;
        return true;
      }
    }
  return false;
}

// --- Messages ------------------------------------------------------------------------------

constexpr const char* kRoles[] = {"system", "user", "assistant", "human", "ai", "gpt", "bot"};

// The header of a message starting at `i` (at the text's start or after a newline), or 0: a
// role word and ':' ("User:"), ChatML's <|im_start|>role, Llama 3's <|start_header_id|>role<|...|>.
size_t header_at(std::string_view s, size_t i) {
  auto rest = s.substr(i);
  for (const char* tag : {"<|im_start|>", "<|start_header_id|>"})
    if (rest.starts_with(tag)) {
      size_t end = rest.find_first_of("\n|", std::strlen(tag));
      if (end == std::string_view::npos) return 0;
      if (rest[end] == '|') end = rest.find(">", end);
      return end == std::string_view::npos ? 0 : end + 1;
    }
  for (const char* role : kRoles) {
    size_t n = std::strlen(role);
    if (rest.size() > n && rest[n] == ':' &&
        std::equal(role, role + n, rest.begin(),
                   [](char r, char c) { return r == std::tolower(static_cast<unsigned char>(c)); }))
      return n + 1;
  }
  return 0;
}

std::string clean(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    bool ws = std::isspace(static_cast<unsigned char>(c));
    if (ws) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  for (const char* tag : {"<|im_end|>", "<|eot_id|>", "</s>"})
    if (out.ends_with(tag)) out.resize(out.size() - std::strlen(tag));
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

// Boundaries by header_at; the doc comment is in doctor_internal.h.
std::vector<Message> split_messages(std::string_view s) {
  std::vector<Message> out;
  for (size_t i = 0; i < s.size();
       i = s.find('\n', i), i = i == std::string_view::npos ? s.size() : i + 1) {
    size_t h = header_at(s, i);
    if (!h) continue;
    if (!out.empty()) out.back().end = i;
    out.push_back({i, s.size(), {}});
  }
  for (Message& m : out)
    m.content = clean(s.substr(m.start, m.end - m.start).substr(header_at(s, m.start)));
  if (out.size() < 2) out.clear();
  return out;
}

namespace {

std::string message_cause(std::string_view a, std::string_view b, size_t at) {
  auto ma = split_messages(a), mb = split_messages(b);
  if (ma.empty() || mb.empty()) return kOther;
  // The earlier prompt's last message may be cut (a prompt ends mid-message): compare whole ones.
  size_t n = ma.size();
  bool same = mb.size() >= n;
  for (size_t k = 0; same && k < n; ++k) same = ma[k].content == mb[k].content;
  if (same) return kTemplate;
  std::map<std::string, int> left;
  for (auto& m : ma) ++left[m.content];
  for (auto& m : mb) --left[m.content];
  bool all_there = std::all_of(left.begin(), left.end(), [](auto& e) { return e.second <= 0; });
  if (all_there && n >= 2) return kReordered;
  if (at < ma[0].end && ma[0].content != mb[0].content) return kSystemPrompt;
  return kOther;
}

}  // namespace

bool volatile_span(std::string_view a, std::string_view b, Diff& d) {
  size_t at = first_difference(a, b);
  if (at >= a.size() || at >= b.size()) return false;
  size_t va = run_length(a, at, kMaxSpan, is_volatile),
         vb = run_length(b, at, kMaxSpan, is_volatile);
  size_t i = 0, j = 0;
  if (!resync(a, b, at, va, vb, kAgree, i, j)) return false;
  // The run starts where the volatile characters before the difference start (both agree there).
  size_t start = at;
  while (start > 0 && at - start < kMaxSpan && is_volatile(a[start - 1])) --start;
  // ... from its first piece (between separators) that holds a digit: "e: 2024-…" starts at 2024.
  for (size_t piece = start; piece <= at && piece < a.size(); ++piece) {
    if (!std::isxdigit(static_cast<unsigned char>(a[piece]))) continue;
    size_t end = piece;
    while (end < a.size() && std::isxdigit(static_cast<unsigned char>(a[end]))) ++end;
    if (std::any_of(a.begin() + piece, a.begin() + end, is_digit)) {
      start = piece;
      break;
    }
    piece = end;
  }
  std::string_view span_a = a.substr(start, at + i - start),
                   span_b = b.substr(start, at + j - start);
  if (std::none_of(span_a.begin(), span_a.end(), is_digit) &&
      std::none_of(span_b.begin(), span_b.end(), is_digit))
    return false;
  d.at = at;
  d.anchor = std::string(a.substr(start > kAnchor ? start - kAnchor : 0, std::min(start, kAnchor)));
  size_t agree = 0;
  while (at + i + agree < a.size() && at + j + agree < b.size() &&
         a[at + i + agree] == b[at + j + agree])
    ++agree;
  d.agree_after = agree;
  return true;
}

Diff classify(const Content& earlier, const Content& later) {
  Diff d;
  std::string_view a = earlier.text, b = later.text;
  if (a.empty() || b.empty()) {
    // Token ids only: a short differing run that resynchronizes, or nothing to tell.
    d.cause = kOther;
    if (!earlier.tokens || !later.tokens) return d;
    const auto &ta = *earlier.tokens, &tb = *later.tokens;
    d.at = first_difference(ta, tb);
    auto any = [](uint32_t) { return true; };
    size_t i, j;
    if (d.at < ta.size() && d.at < tb.size() &&
        resync(ta, tb, d.at, run_length(ta, d.at, kMaxTokenSpan, any),
               run_length(tb, d.at, kMaxTokenSpan, any), kTokenAgree, i, j)) {
      d.cause = kVolatile;
      size_t from = d.at > kTokenAnchor ? d.at - kTokenAnchor : 0;
      d.token_anchor.assign(ta.begin() + from, ta.begin() + d.at);
      d.span_tokens = std::max(i, j);
    }
    auto ids = [](const std::vector<uint32_t>& t, size_t at) {
      std::string out;
      for (size_t k = at > 4 ? at - 4 : 0; k < std::min(t.size(), at + 4); ++k)
        out += (out.empty() ? "" : " ") + std::to_string(t[k]);
      return out;
    };
    d.before = ids(ta, d.at);
    d.after = ids(tb, d.at);
    return d;
  }
  d.at = first_difference(a, b);
  d.before = excerpt(a, d.at);
  d.after = excerpt(b, d.at);
  if (d.at >= a.size())
    d.cause = kTemplate;  // the same text, tokenized differently
  else if (volatile_span(a, b, d))
    d.cause = kVolatile;
  else
    d.cause = message_cause(a, b, d.at);
  return d;
}

std::string mask_volatile(std::string_view text, const std::vector<std::string>& anchors) {
  std::string out(text);
  for (const std::string& anchor : anchors) {
    size_t pos = 0;
    while ((pos = out.find(anchor, pos)) != std::string::npos) {
      // Through the run's last digit and the hex letters glued to it ("…12:00:07", "3fa2b").
      size_t from = pos + anchor.size(), end = from, last = from;
      while (end < out.size() && end - from < kMaxSpan && is_volatile(out[end])) {
        if (is_digit(out[end])) last = end + 1;
        ++end;
      }
      while (last > from && last < out.size() &&
             std::isxdigit(static_cast<unsigned char>(out[last])))
        ++last;
      if (last > from) out.replace(from, last - from, "#");
      pos = from + 1;
      if (anchor.empty()) break;  // a span at the very start
    }
  }
  return out;
}

std::string replace_first_message(std::string_view text, std::string_view first) {
  auto m = split_messages(text);
  if (m.empty()) return std::string(text);
  return std::string(text.substr(0, m[0].start)) + std::string(first) +
         std::string(text.substr(m[0].end));
}

std::string stable_message_order(std::string_view text, std::map<std::string, size_t>& first_seen) {
  auto m = split_messages(text);
  if (m.empty()) return std::string(text);
  for (const Message& x : m) first_seen.try_emplace(x.content, first_seen.size());
  std::vector<const Message*> order;
  for (const Message& x : m) order.push_back(&x);
  std::stable_sort(order.begin(), order.end(), [&](const Message* a, const Message* b) {
    return first_seen.at(a->content) < first_seen.at(b->content);
  });
  std::string out(text.substr(0, m[0].start));
  for (const Message* x : order) {
    std::string_view raw = text.substr(x->start, x->end - x->start);
    out += raw;
    if (!raw.ends_with('\n')) out += '\n';  // the last message, moved up, needs its line end
  }
  return out;
}

std::vector<uint32_t> mask_volatile_tokens(const std::vector<uint32_t>& tokens,
                                           const std::vector<TokenAnchor>& anchors) {
  std::vector<uint32_t> out = tokens;
  for (const TokenAnchor& a : anchors) {
    auto at = a.before.empty()
                  ? out.begin()
                  : std::search(out.begin(), out.end(), a.before.begin(), a.before.end());
    if (at == out.end()) continue;
    auto from = at + a.before.size();
    auto to = from + std::min<size_t>(a.span, out.end() - from);
    if (from == to) continue;
    *from = kMaskToken;
    out.erase(from + 1, to);
  }
  return out;
}

size_t position_bucket(uint32_t block) {
  size_t b = 0;
  while (block) {
    ++b;
    block >>= 1;
  }
  return b;
}

std::string bucket_label(size_t bucket) {
  if (bucket <= 1) return std::to_string(bucket);
  uint64_t lo = uint64_t(1) << (bucket - 1), hi = (uint64_t(1) << bucket) - 1;
  return std::to_string(lo) + "-" + std::to_string(hi);
}

}  // namespace kvpolicy::app::doctor
