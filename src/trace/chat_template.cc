#include "chat_template.h"

#include <fmt/format.h>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

constexpr std::string_view kContent = "{content}";
constexpr std::string_view kRole = "{role}";

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char c = s[++i];
      out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
      if (c != 'n' && c != 't' && c != '\\')
        throw ConfigError(
            fmt::format("--chat-template: unknown escape '\\{}' (\\n, \\t, \\\\)", c));
      continue;
    }
    out += s[i];
  }
  return out;
}

// `format` with {role} replaced, up to {content} (head) and after it (tail).
void split(const std::string& format, const std::string& role, std::string& head,
           std::string& tail) {
  size_t at = format.find(kContent);
  auto fill = [&](std::string_view part) {
    std::string out;
    for (size_t i = 0; i < part.size();) {
      if (part.substr(i, kRole.size()) == kRole) {
        out += role;
        i += kRole.size();
      } else {
        out += part[i++];
      }
    }
    return out;
  };
  head = fill(std::string_view(format).substr(0, at));
  tail = fill(std::string_view(format).substr(at + kContent.size()));
}

// White space at both ends, newlines included (Jinja's `trim`, which Llama 3's template applies).
std::string_view trim_space(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

ChatTemplate parse_chat_template(const std::string& spec) {
  ChatTemplate t;
  t.name = spec;
  if (spec.empty() || spec == "chatml") {
    t.name = "chatml";
    t.format = "<|im_start|>{role}\n{content}<|im_end|>\n";
  } else if (spec == "llama3") {
    t.prefix = "<|begin_of_text|>";
    t.format = "<|start_header_id|>{role}<|end_header_id|>\n\n{content}<|eot_id|>";
    t.trim = true;
  } else if (spec == "plain") {
    t.format = "{role}: {content}\n\n";
  } else {
    t.name = "custom";
    t.format = unescape(spec);
    size_t at = t.format.find(kContent);
    if (at == std::string::npos || t.format.find(kContent, at + 1) != std::string::npos)
      throw ConfigError(fmt::format(
          "--chat-template '{}': expected chatml, llama3, plain, or a format holding {{content}} "
          "once (and {{role}}), such as '{{role}}: {{content}}\\n'",
          spec));
  }
  return t;
}

std::string render_chat(const ChatTemplate& t, const std::vector<ChatMessage>& messages) {
  std::string out = t.prefix, head, tail;
  for (const ChatMessage& m : messages) {
    split(t.format, m.role, head, tail);
    out += head;
    out += t.trim ? std::string(trim_space(m.content)) : m.content;
    out += tail;
  }
  split(t.format, "assistant", head, tail);
  out += head;
  return out;
}

}  // namespace kvpolicy
