// Tokenizers for text traces: cl100k_base BPE from a tiktoken rank file, and an approximation.
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <queue>
#include <unordered_map>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/types.h"
#include "kvpolicy/trace/text_trace.h"

namespace kvpolicy {
namespace {

// Decodes one UTF-8 code point at s[i]; invalid bytes decode as themselves (U+0080..U+00FF
// class as "other"), so any byte string splits deterministically.
char32_t decode(std::string_view s, size_t i, size_t& len) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  auto cont = [&](size_t k) {
    return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
  };
  auto at = [&](size_t k) { return char32_t(static_cast<unsigned char>(s[i + k]) & 0x3F); };
  if (c < 0x80) {
    len = 1;
    return c;
  }
  if ((c & 0xE0) == 0xC0 && cont(1)) {
    len = 2;
    return (char32_t(c & 0x1F) << 6) | at(1);
  }
  if ((c & 0xF0) == 0xE0 && cont(1) && cont(2)) {
    len = 3;
    return (char32_t(c & 0x0F) << 12) | (at(1) << 6) | at(2);
  }
  if ((c & 0xF8) == 0xF0 && cont(1) && cont(2) && cont(3)) {
    len = 4;
    return (char32_t(c & 0x07) << 18) | (at(1) << 12) | (at(2) << 6) | at(3);
  }
  len = 1;
  return 0xFFFD;  // an invalid byte: "other"
}

bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

bool is_number(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return c == 0xB2 || c == 0xB3 || c == 0xB9 || (c >= 0xBC && c <= 0xBE) ||
         (c >= 0x660 && c <= 0x669) || (c >= 0x6F0 && c <= 0x6F9) || (c >= 0x966 && c <= 0x96F) ||
         (c >= 0x2070 && c <= 0x2079 && c != 0x2071) || (c >= 0x2080 && c <= 0x2089) ||
         (c >= 0x2150 && c <= 0x2189) || (c >= 0x2460 && c <= 0x249B) ||
         (c >= 0x2776 && c <= 0x2793) || c == 0x3007 || (c >= 0x3021 && c <= 0x3029) ||
         (c >= 0xFF10 && c <= 0xFF19);
}

// Unicode letters (\p{L}): exact for ASCII and Latin-1; above, everything that is not white
// space, a digit, a combining mark or in a punctuation/symbol block counts as a letter.
bool is_letter(char32_t c) {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  if (c < 0x100)
    return c == 0xAA || c == 0xB5 || c == 0xBA || (c >= 0xC0 && c != 0xD7 && c != 0xF7);
  if (is_space(c) || is_number(c)) return false;
  if (c >= 0x300 && c <= 0x36F) return false;    // combining diacritical marks
  if (c >= 0x2000 && c <= 0x2BFF) return false;  // punctuation, symbols, arrows, math, shapes
  if (c >= 0x2E00 && c <= 0x2E7F) return false;  // supplemental punctuation
  if (c >= 0x3000 && c <= 0x303F) return false;  // CJK symbols and punctuation
  if (c >= 0xD800 && c <= 0xF8FF) return false;  // surrogates, private use
  if (c >= 0xFE00 && c <= 0xFE0F) return false;  // variation selectors
  if (c >= 0xFE30 && c <= 0xFE6F) return false;  // CJK compatibility and small forms
  if ((c >= 0xFF00 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) ||
      (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65))
    return false;                                  // fullwidth punctuation
  if (c >= 0xFFF0 && c <= 0xFFFF) return false;    // specials (incl. U+FFFD)
  if (c >= 0x1F000 && c <= 0x1FAFF) return false;  // emoji and pictographs
  return true;
}

enum Class : uint8_t { kLetter, kNumber, kSpace, kNewline, kOther };

Class classify(char32_t c) {
  if (c == '\r' || c == '\n') return kNewline;
  if (is_space(c)) return kSpace;
  if (is_letter(c)) return kLetter;
  if (is_number(c)) return kNumber;
  return kOther;
}

}  // namespace

// The cl100k_base pattern, alternative by alternative, leftmost first:
//   (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,3} |
//   ' '?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
std::vector<std::string_view> pretokenize(std::string_view s) {
  std::vector<std::string_view> out;
  // Code points with their byte offsets (one pass), so alternatives can look ahead.
  std::vector<uint32_t> off;
  std::vector<Class> cls;
  off.reserve(s.size() + 1);
  cls.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t len;
    char32_t c = decode(s, i, len);
    off.push_back(static_cast<uint32_t>(i));
    cls.push_back(classify(c));
    i += len;
  }
  const size_t n = cls.size();
  off.push_back(static_cast<uint32_t>(s.size()));
  auto lower = [&](size_t k) {
    return k < n && off[k + 1] - off[k] == 1 ? char(s[off[k]] | 0x20) : '\0';
  };
  auto is_ws = [&](size_t k) { return cls[k] == kSpace || cls[k] == kNewline; };
  size_t i = 0;
  while (i < n) {
    size_t end = i;
    char32_t first = off[i + 1] - off[i] == 1 ? char32_t(s[off[i]]) : 0;
    // 1. Contractions.
    if (first == '\'') {
      char a = lower(i + 1), b = lower(i + 2);
      if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
        end = i + 3;
      } else if (a == 's' || a == 't' || a == 'm' || a == 'd') {
        end = i + 2;
      }
    }
    // 2. An optional non-letter, non-number, non-newline, then letters.
    if (end == i) {
      size_t j = i;
      if (cls[j] != kLetter && cls[j] != kNumber && cls[j] != kNewline && j + 1 < n &&
          cls[j + 1] == kLetter)
        ++j;
      if (cls[j] == kLetter) {
        while (j < n && cls[j] == kLetter) ++j;
        end = j;
      }
    }
    // 3. One to three digits.
    if (end == i && cls[i] == kNumber) {
      size_t j = i;
      while (j < n && j < i + 3 && cls[j] == kNumber) ++j;
      end = j;
    }
    // 4. An optional space, punctuation/symbols, then newlines.
    if (end == i) {
      size_t j = i;
      if (first == ' ' && j + 1 < n && cls[j + 1] == kOther) ++j;
      if (cls[j] == kOther) {
        while (j < n && cls[j] == kOther) ++j;
        while (j < n && cls[j] == kNewline) ++j;
        end = j;
      }
    }
    // 5-7. White space: up to the last newline of the run; else the run minus its last
    // character when more text follows; else the whole run.
    if (end == i && is_ws(i)) {
      size_t j = i, last_newline = SIZE_MAX;
      while (j < n && is_ws(j)) {
        if (cls[j] == kNewline) last_newline = j;
        ++j;
      }
      if (last_newline != SIZE_MAX) {
        end = last_newline + 1;
      } else if (j == n || j - i == 1) {
        end = j;
      } else {
        end = j - 1;
      }
    }
    if (end == i) end = i + 1;  // unreachable: every class is covered above
    out.push_back(s.substr(off[i], off[end] - off[i]));
    i = end;
  }
  return out;
}

namespace {

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool base64_decode(std::string_view in, std::string& out) {
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    int v = base64_value(c);
    if (v < 0) return false;
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return true;
}

class BpeTokenizer final : public Tokenizer {
 public:
  explicit BpeTokenizer(const std::string& path) : path_(path) {
    simdjson::padded_string data;
    if (simdjson::padded_string::load(path).get(data))
      throw ConfigError("tokenizer: cannot read '" + path + "'");
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    std::string_view pattern, ranks;
    if (parser.parse(data).get(doc) || doc["pat_str"].get_string().get(pattern) ||
        doc["bpe_ranks"].get_string().get(ranks))
      throw ConfigError("tokenizer: '" + path +
                        "' is not a tiktoken rank file (pat_str, bpe_ranks)");
    if (pattern.find("\\p{N}{1,3}") == std::string_view::npos ||
        pattern.find("'ll") == std::string_view::npos)
      throw ConfigError("tokenizer: '" + path +
                        "' uses a pre-tokenizer pattern other than cl100k_base's");
    // Lines of "<name> <first rank> <base64 token> <base64 token> ...".
    bytes_.reserve(ranks.size());
    std::vector<std::pair<uint32_t, uint32_t>> spans;  // offset, length in bytes_
    std::vector<uint32_t> ids;
    size_t pos = 0;
    while (pos < ranks.size()) {
      size_t nl = ranks.find('\n', pos);
      std::string_view line = ranks.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
      pos = nl == std::string_view::npos ? ranks.size() : nl + 1;
      if (line.empty()) continue;
      size_t a = line.find(' '), b = a == std::string_view::npos ? a : line.find(' ', a + 1);
      if (b == std::string_view::npos) throw bad(path, "a line without a rank offset");
      uint64_t rank =
          std::strtoull(std::string(line.substr(a + 1, b - a - 1)).c_str(), nullptr, 10);
      for (size_t p = b + 1; p <= line.size();) {
        size_t q = line.find(' ', p);
        if (q == std::string_view::npos) q = line.size();
        if (q > p) {
          size_t start = bytes_.size();
          if (!base64_decode(line.substr(p, q - p), bytes_) || bytes_.size() == start)
            throw bad(path, "a token that is not base64");
          spans.push_back(
              {static_cast<uint32_t>(start), static_cast<uint32_t>(bytes_.size() - start)});
          ids.push_back(static_cast<uint32_t>(rank++));
        }
        p = q + 1;
      }
    }
    if (spans.size() < 256) throw bad(path, "fewer than 256 tokens");
    // bytes_ no longer grows, so views into it stay valid.
    ranks_.reserve(spans.size() * 2);
    for (size_t k = 0; k < spans.size(); ++k)
      ranks_.emplace(std::string_view(bytes_.data() + spans[k].first, spans[k].second), ids[k]);
    for (int c = 0; c < 256; ++c) {
      char ch = static_cast<char>(c);
      auto it = ranks_.find(std::string_view(&ch, 1));
      if (it == ranks_.end()) throw bad(path, "a byte without a token");
      byte_rank_[c] = it->second;
    }
  }

  void encode(std::string_view text, std::vector<uint32_t>& out) const override {
    for (std::string_view piece : pretokenize(text)) {
      auto whole = ranks_.find(piece);
      if (whole != ranks_.end()) {
        out.push_back(whole->second);
        continue;
      }
      merge_bytes(piece, out);
    }
  }
  std::string name() const override { return "cl100k_base(" + path_ + ")"; }

 private:
  static ConfigError bad(const std::string& path, const std::string& what) {
    return ConfigError("tokenizer: '" + path + "' is malformed: " + what);
  }
  uint32_t rank_of(std::string_view bytes) const {
    auto it = ranks_.find(bytes);
    return it == ranks_.end() ? std::numeric_limits<uint32_t>::max() : it->second;
  }

  // Byte-level BPE over one piece: repeatedly merge the adjacent pair whose joined bytes have the
  // lowest rank, the leftmost on a tie. The candidate pairs sit in a min-heap and the parts in a
  // linked list, so a piece of n bytes takes O(n log n) rather than a rescan per merge (O(n^2),
  // minutes for one 200k-character word); a heap entry is stale once either part has changed.
  void merge_bytes(std::string_view piece, std::vector<uint32_t>& out) const {
    constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
    const auto n = static_cast<uint32_t>(piece.size());
    // Parts are named by their first byte; next[k] is where part k ends (n for the last part),
    // prev[k] where the part before it starts; merged[k] marks a start absorbed by its left part.
    std::vector<uint32_t> next(n), prev(n);
    std::vector<bool> merged(n, false);
    for (uint32_t k = 0; k < n; ++k) {
      next[k] = k + 1;
      prev[k] = k == 0 ? kNone : k - 1;
    }
    struct Pair {
      uint32_t rank, left, end;  // the pair piece[left, end) of part `left` and the one after it
      bool operator>(const Pair& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
    };
    std::priority_queue<Pair, std::vector<Pair>, std::greater<Pair>> heap;
    auto push = [&](uint32_t left) {
      uint32_t right = next[left];
      if (right >= n) return;
      uint32_t r = rank_of(piece.substr(left, next[right] - left));
      if (r != kNone) heap.push({r, left, next[right]});
    };
    for (uint32_t k = 0; k + 1 < n; ++k) push(k);
    while (!heap.empty()) {
      Pair p = heap.top();
      heap.pop();
      // Parts only grow, so the same left start with the same end is the same pair.
      if (merged[p.left] || next[p.left] >= n || next[next[p.left]] != p.end) continue;
      uint32_t right = next[p.left];
      merged[right] = true;
      next[p.left] = p.end;
      if (p.end < n) prev[p.end] = p.left;
      if (prev[p.left] != kNone) push(prev[p.left]);
      push(p.left);
    }
    for (uint32_t k = 0; k < n; k = next[k]) {
      std::string_view sub = piece.substr(k, next[k] - k);
      out.push_back(sub.size() == 1 ? byte_rank_[static_cast<unsigned char>(sub[0])]
                                    : rank_of(sub));
    }
  }

  std::string path_;
  std::string bytes_;  // every token's bytes, back to back
  std::unordered_map<std::string_view, uint32_t> ranks_;
  uint32_t byte_rank_[256] = {};
};

class ApproxTokenizer final : public Tokenizer {
 public:
  explicit ApproxTokenizer(double chars) : chars_(chars) {
    if (!(chars >= 1)) throw ConfigError("approx tokenizer: chars_per_token must be >= 1");
  }
  void encode(std::string_view text, std::vector<uint32_t>& out) const override {
    for (std::string_view piece : pretokenize(text)) {
      size_t tokens = std::max<size_t>(1, size_t(std::llround(double(piece.size()) / chars_)));
      size_t step = (piece.size() + tokens - 1) / tokens;
      for (size_t p = 0; p < piece.size(); p += step) {
        std::string_view chunk = piece.substr(p, step);
        uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, then mixed
        for (char c : chunk) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
        out.push_back(static_cast<uint32_t>(mix64(h)));
      }
    }
  }
  std::string name() const override { return "approx(" + std::to_string(chars_) + ")"; }

 private:
  double chars_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_bpe_tokenizer(const std::string& path) {
  return std::make_unique<BpeTokenizer>(path);
}

std::unique_ptr<Tokenizer> make_approx_tokenizer(double chars_per_token) {
  return std::make_unique<ApproxTokenizer>(chars_per_token);
}

std::string find_bpe_vocabulary() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("KVPOLICY_TOKENIZER"); env && *env) {
    candidates.push_back(env);  // an explicit choice: no silent fallback to another file
  } else {
    candidates.push_back("/usr/local/share/kvpolicy/cl100k_base.json");
    candidates.push_back("/usr/share/kvpolicy/cl100k_base.json");
  }
  std::error_code ec;
  for (auto& c : candidates)
    if (std::filesystem::is_regular_file(c, ec)) return c;
  return "";
}

std::unique_ptr<Tokenizer> make_tokenizer(const std::string& spec, std::string* note) {
  constexpr const char* kHint =
      "the cl100k_base vocabulary is not installed (looked in $KVPOLICY_TOKENIZER if set, else "
      "/usr/local/share/kvpolicy/cl100k_base.json and /usr/share/kvpolicy/cl100k_base.json); "
      "tools/install-deps.sh installs it from the npm package tiktoken";
  if (spec == "approx") return make_approx_tokenizer();
  if (spec.rfind("approx:", 0) == 0) {
    std::optional<double> chars = read_number(std::string_view(spec).substr(7));
    if (!chars || *chars < 1 || *chars > 1000)
      throw ConfigError("tokenizer: '" + spec + "': expected approx:<bytes per token, 1 to 1000>");
    return make_approx_tokenizer(*chars);
  }
  if (spec == "cl100k" || spec == "auto") {
    std::string path = find_bpe_vocabulary();
    if (!path.empty()) return load_bpe_tokenizer(path);
    if (spec == "cl100k") throw ConfigError(std::string("tokenizer: ") + kHint);
    if (note)
      *note = std::string(kHint) +
              "; using the approximate tokenizer (calibrated to cl100k's counts within 10 %)";
    return make_approx_tokenizer();
  }
  return load_bpe_tokenizer(spec);
}

}  // namespace kvpolicy
