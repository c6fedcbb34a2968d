// OpenAI chat `messages` rendered to the prompt text an engine would tokenize, by a named or
// custom template (docs/formats.md, "Chat messages"). Internal to src/trace (import).
#pragma once

#include <string>
#include <vector>

namespace kvpolicy {

struct ChatMessage {
  std::string role;
  std::string content;  // text parts joined by newlines; other parts as placeholders
};

// prefix, then each message as `format` with {role} and {content} replaced, then the generation
// prompt: `format` up to {content} with role "assistant". A turn's prompt is then a prefix of
// the next turn's, as in an engine's prefix cache.
struct ChatTemplate {
  std::string name;
  std::string prefix;
  std::string format;
  bool trim = false;  // content trimmed of surrounding white space (llama3)
};

// "chatml", "llama3", "plain", or a custom format holding {content} once (and {role}, with \n,
// \t and \\ escapes). Throws ConfigError otherwise.
ChatTemplate parse_chat_template(const std::string& spec);

// The prompt text of `messages` under `t`.
std::string render_chat(const ChatTemplate& t, const std::vector<ChatMessage>& messages);

}  // namespace kvpolicy
