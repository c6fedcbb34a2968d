// The continuation classifier's text features and its turn baseline: plain text work, no
// fastText, so a build without it (-DKVPOLICY_LEARNED=OFF) still has them
// (src/learned/continuation_classifier.cc is the model).
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <string>

#include "kvpolicy/core/error.h"
#include "kvpolicy/predict/continuation.h"

namespace kvpolicy {
namespace {

bool is_continuation_byte(unsigned char c) { return (c & 0xC0) == 0x80; }

size_t code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += !is_continuation_byte(c);
  return n;
}

// Byte offset of code point `k` (or s.size()).
size_t offset_of(std::string_view s, size_t k) {
  size_t seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (is_continuation_byte(static_cast<unsigned char>(s[i]))) continue;
    if (seen++ == k) return i;
  }
  return s.size();
}

// Lowercase ASCII, one space for any run of white space or control characters, ASCII
// punctuation as tokens of its own.
std::string normalise(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  bool space = true;  // at the start, as after a space: no leading space
  auto sep = [&] {
    if (!space) out += ' ';
    space = true;
  };
  for (unsigned char c : text) {
    if (c <= 0x20 || c == 0x7f) {
      sep();
    } else if (c < 0x80 && std::ispunct(c)) {
      sep();
      out += char(c);
      out += ' ';
    } else {
      out += char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      space = false;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The first and last max_chars / 2 code points of `s` when it is longer than max_chars.
std::string head_and_tail(const std::string& s, uint32_t max_chars) {
  size_t n = code_points(s);
  if (n <= max_chars) return s;
  size_t half = max_chars / 2;
  std::string out = s.substr(0, offset_of(s, half));
  out += ' ';
  out += s.substr(offset_of(s, n - (max_chars - half)));
  return out;
}

size_t turn_bucket(uint32_t turn) {
  return turn <= 2 ? (turn <= 1 ? 0 : 1) : turn <= 4 ? 2 : turn <= 8 ? 3 : 4;
}

}  // namespace

std::string continuation_turn_token(uint32_t turn) {
  static const char* kTokens[5] = {"__turn_1", "__turn_2", "__turn_3_4", "__turn_5_8",
                                   "__turn_9plus"};
  return kTokens[turn_bucket(turn)];
}

TurnBucketBaseline TurnBucketBaseline::fit(std::span<const uint32_t> turns,
                                           std::span<const uint8_t> labels) {
  if (turns.size() != labels.size() || turns.empty())
    throw Error("turn baseline: one label per turn, and at least one");
  double count[5] = {}, positive[5] = {}, all_positive = 0;
  for (size_t i = 0; i < turns.size(); ++i) {
    ++count[turn_bucket(turns[i])];
    positive[turn_bucket(turns[i])] += labels[i] != 0;
    all_positive += labels[i] != 0;
  }
  TurnBucketBaseline b;
  for (size_t k = 0; k < 5; ++k)
    b.rate_[k] = count[k] ? positive[k] / count[k] : all_positive / double(turns.size());
  return b;
}

double TurnBucketBaseline::predict(uint32_t turn) const { return rate_[turn_bucket(turn)]; }

std::string continuation_features(std::span<const std::string> prompts, uint32_t turn,
                                  const ContinuationFeatureOptions& opts,
                                  int64_t previous_answer_chars, double turn_quantile) {
  std::string out;
  const size_t used = std::min<size_t>(prompts.size(), opts.window);
  for (size_t i = 0; i < used; ++i) {
    std::string text = head_and_tail(normalise(prompts[i]), opts.max_chars);
    std::string prefix = fmt::format("p{}_", i);
    bool any = false;
    for (size_t b = 0; b < text.size();) {
      size_t e = text.find(' ', b);
      if (e == std::string::npos) e = text.size();
      if (e > b) {
        if (!out.empty()) out += ' ';
        out += prefix;
        out.append(text, b, e - b);
        any = true;
      }
      b = e + 1;
    }
    if (!any) {
      if (!out.empty()) out += ' ';
      out += prefix + "_empty";
    }
  }
  if (opts.turn_token) {
    if (!out.empty()) out += ' ';
    out += continuation_turn_token(turn);
  }
  const size_t chars = prompts.empty() ? 0 : code_points(prompts[0]);
  if (!out.empty()) out += ' ';
  out += fmt::format("__len_{}", std::bit_width(chars + 1) - 1);
  if (opts.answer_length) {
    if (turn <= 1 || previous_answer_chars < 0) {
      out += " __ans_none";
    } else {
      out += fmt::format(" __ans_{}", std::bit_width(uint64_t(previous_answer_chars) + 1) - 1);
    }
  }
  if (opts.turn_quantile) {
    if (!(turn_quantile >= 0)) {
      out += " __tq_none";
    } else {
      out += fmt::format(" __tq_{}", std::min(4, int(std::min(turn_quantile, 1.0) * 5)));
    }
  }
  return out;
}

}  // namespace kvpolicy
