// Parser of the Python literals LooGLE stores its QA pairs in (see python_literal.h).
#include "python_literal.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <stdexcept>

namespace kvpolicy {
namespace {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Deeper nesting than any real QA list; the bound keeps the recursion (and PyValue's recursive
// destructor) far from the end of the stack on hostile input.
constexpr size_t kMaxDepth = 512;

// Recursive descent over the text; i_ is the offset read up to, depth_ the brackets open.
class PyLiteral {
 public:
  explicit PyLiteral(std::string_view s) : s_(s) {}
  PyValue parse() {
    PyValue v = value();
    skip();
    if (i_ != s_.size()) fail("unexpected text after the value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(fmt::format("Python literal, offset {}: {}", i_, what));
  }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }
  void open_bracket() {
    if (depth_ == kMaxDepth) fail(fmt::format("nested deeper than {} levels", kMaxDepth));
    ++depth_;
    ++i_;
  }
  bool word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  PyValue value() {
    skip();
    if (i_ >= s_.size()) fail("unexpected end");
    char c = s_[i_];
    PyValue v;
    if (c == '\'' || c == '"') {
      v.kind = PyValue::kString;
      v.text = string();
    } else if (c == '[' || c == '(') {
      char close = c == '[' ? ']' : ')';
      v.kind = PyValue::kList;
      open_bracket();
      while (true) {
        skip();
        if (i_ < s_.size() && s_[i_] == close) break;
        v.items.push_back(value());
        skip();
        if (i_ < s_.size() && s_[i_] == ',')
          ++i_;
        else if (i_ >= s_.size() || s_[i_] != close)
          fail("expected ',' or a closing bracket");
      }
      ++i_;
      --depth_;
    } else if (c == '{') {
      v.kind = PyValue::kDict;
      open_bracket();
      while (true) {
        skip();
        if (i_ < s_.size() && s_[i_] == '}') break;
        PyValue key = value();
        if (key.kind != PyValue::kString && key.kind != PyValue::kNumber)
          fail("a dict key that is not a string");
        skip();
        if (i_ >= s_.size() || s_[i_] != ':') fail("expected ':'");
        ++i_;
        v.keys.push_back(std::move(key.text));
        v.items.push_back(value());
        skip();
        if (i_ < s_.size() && s_[i_] == ',')
          ++i_;
        else if (i_ >= s_.size() || s_[i_] != '}')
          fail("expected ',' or '}'");
      }
      ++i_;
      --depth_;
    } else if (word("None")) {
      v.kind = PyValue::kNone;
    } else if (word("True") || word("False")) {
      v.kind = PyValue::kBool;
      v.text = s_[i_ - 1] == 'e' && s_[i_ - 2] == 'u' ? "True" : "False";
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t start = i_++;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                                s_[i_] == '-' || s_[i_] == '+'))
        ++i_;
      v.kind = PyValue::kNumber;
      v.text = std::string(s_.substr(start, i_ - start));
    } else {
      fail(std::string("unexpected character '") + c + "'");
    }
    return v;
  }
  uint32_t hex(size_t digits) {
    if (i_ + digits > s_.size()) fail("short escape");
    uint32_t v = 0;
    for (size_t k = 0; k < digits; ++k) {
      char h = s_[i_++];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= uint32_t(h - '0');
      else if ((h | 0x20) >= 'a' && (h | 0x20) <= 'f')
        v |= uint32_t((h | 0x20) - 'a' + 10);
      else
        fail("bad hex escape");
    }
    return v;
  }
  std::string string() {
    char quote = s_[i_++];
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      char c = s_[i_++];
      if (c == quote) break;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unterminated escape");
      char e = s_[i_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case '0':
          out += '\0';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        case 'x':
          append_utf8(out, hex(2));
          break;
        case 'u':
          append_utf8(out, hex(4));
          break;
        case 'U':
          append_utf8(out, hex(8));
          break;
        case '\n':
          break;  // line continuation
        default:
          out += e;  // \\ \' \" and unknown escapes keep the character
      }
    }
    return out;
  }

  std::string_view s_;
  size_t i_ = 0;
  size_t depth_ = 0;
};

}  // namespace

PyValue parse_python_literal(std::string_view s) { return PyLiteral(s).parse(); }

}  // namespace kvpolicy
