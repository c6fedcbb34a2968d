// `trace import --map` and `--preset`: the targets a log's columns map to, the named log
// formats, and the parsing of target=column lists (import.h).
#include <fmt/format.h>

#include <string_view>
#include <utility>
#include <vector>

#include "import_rows.h"
#include "import_sources.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/trace/import.h"

namespace kvpolicy {
namespace {

struct Target {
  const char* name;
  std::string ImportMapping::*column;
};

constexpr Target kTargets[] = {
    {"time", &ImportMapping::time},       {"id", &ImportMapping::id},
    {"session", &ImportMapping::session}, {"tokens", &ImportMapping::tokens},
    {"text", &ImportMapping::text},       {"messages", &ImportMapping::messages},
    {"hashes", &ImportMapping::hashes},   {"prompt_tokens", &ImportMapping::prompt_tokens},
    {"output", &ImportMapping::output},   {"output_text", &ImportMapping::output_text},
    {"turn", &ImportMapping::turn},       {"category", &ImportMapping::category},
    {"user", &ImportMapping::user},
};

bool is_prompt_target(std::string_view t) {
  return t == "tokens" || t == "text" || t == "messages" || t == "hashes";
}

constexpr ImportPreset kPresets[] = {
    {"openai-chat", "id=id,time=created,messages=messages,output=usage.completion_tokens", "",
     "OpenAI chat completions logged one JSON line per request (or a request line and a "
     "response line sharing the id): messages with the earlier turns, usage"},
    {"openai-completion", "id=id,time=created,text=prompt,output=usage.completion_tokens", "",
     "OpenAI completions: prompt as a string or as token ids (prompt_token_ids via "
     "--map tokens=prompt_token_ids), usage"},
    {"otel-genai", "time=time,messages=gen_ai.input.messages,output=gen_ai.usage.output_tokens",
     "otlp-json",
     "OpenTelemetry GenAI spans in OTLP/JSON (the collector's file exporter): one request per "
     "span with gen_ai.* attributes, gen_ai.input.messages, gen_ai.usage.output_tokens"},
    {"vllm-log", "id=id,time=time,text=prompt", "vllm-log",
     "vLLM's --enable-log-requests lines (Received request ID: prompt: ..., prompt_token_ids: "
     "...): token ids when logged, else the prompt text; no output lengths"},
};

// target=column pairs, unchecked.
std::vector<std::pair<std::string, std::string>> parse_pairs(std::string_view rest) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw ConfigError(fmt::format("--map: '{}' is not target=column", item));
    out.emplace_back(trim(item.substr(0, eq)), trim(item.substr(eq + 1)));
  }
  return out;
}

}  // namespace

MappedColumns mapped_columns(const ImportMapping& map) {
  MappedColumns columns;
  for (const Target& target : kTargets)
    if (!(map.*target.column).empty()) columns.emplace_back(target.name, map.*target.column);
  return columns;
}

ImportMapping parse_import_mapping(const std::string& spec, const std::string& preset,
                                   bool lengths_only_ok) {
  auto lookup = [](const std::string& target) -> const Target* {
    for (const Target& t : kTargets)
      if (target == t.name) return &t;
    std::string valid;
    for (const Target& t : kTargets) valid += (valid.empty() ? "" : ", ") + std::string(t.name);
    throw ConfigError(fmt::format("--map: unknown target '{}' (valid targets: {})", target, valid));
  };
  ImportMapping m;
  if (!preset.empty()) {
    const ImportPreset* found = nullptr;
    std::string names;
    for (const ImportPreset& p : kPresets) {
      if (preset == p.name) found = &p;
      names += (names.empty() ? "" : ", ") + std::string(p.name);
    }
    if (!found)
      throw ConfigError(fmt::format("--preset: unknown preset '{}' (known: {})", preset, names));
    for (auto& [target, column] : parse_pairs(found->map)) m.*lookup(target)->column = column;
  }
  auto user = parse_pairs(spec);
  bool user_prompt = false;
  for (auto& [target, column] : user) user_prompt |= is_prompt_target(target);
  if (user_prompt) m.tokens = m.text = m.messages = m.hashes = "";  // the user's prompt wins
  ImportMapping given;  // what --map itself names, to find a target given twice
  for (auto& [target, column] : user) {
    const Target* t = lookup(target);
    if (column.empty()) throw ConfigError(fmt::format("--map: {} names no column", target));
    if (!(given.*t->column).empty())
      throw ConfigError(fmt::format("--map: {} is mapped twice", target));
    given.*t->column = column;
    m.*t->column = column;
  }
  if (m.time.empty()) throw ConfigError("--map: time=COLUMN is required");
  int prompts = !m.tokens.empty() + !m.text.empty() + !m.messages.empty() + !m.hashes.empty();
  if (prompts > 1)
    throw ConfigError("--map: map exactly one of tokens, text, messages and hashes (the prompt)");
  if (prompts == 0 && !m.prompt_tokens.empty() && !lengths_only_ok)
    throw ConfigError(
        fmt::format("--map: a log of lengths only (prompt_tokens, no tokens, text, messages or "
                    "hashes) and no --assume: {}",
                    kLengthsAreNotPrompts));
  if (prompts == 0 && m.prompt_tokens.empty())
    throw ConfigError(fmt::format("--map: no prompt mapped (tokens, text, messages or hashes): {}",
                                  kLengthsAreNotPrompts));
  if (!m.prompt_tokens.empty() && prompts == 1 && m.hashes.empty())
    throw ConfigError("--map: prompt_tokens goes with hashes (tokens and text are counted)");
  if (!m.output.empty() && !m.output_text.empty())
    throw ConfigError("--map: map output or output_text, not both");
  return m;
}

const std::vector<ImportPreset>& import_presets() {
  static const std::vector<ImportPreset> all(std::begin(kPresets), std::end(kPresets));
  return all;
}

}  // namespace kvpolicy
