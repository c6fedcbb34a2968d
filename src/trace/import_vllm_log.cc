#include "import_vllm_log.h"

#include <fmt/format.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "import_cells.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "python_literal.h"

namespace kvpolicy {
namespace {

constexpr std::string_view kReceived = "Received request ";

// The end of the Python string literal starting at s[i] (its quote), or npos.
size_t literal_end(std::string_view s, size_t i) {
  char q = s[i];
  for (size_t j = i + 1; j < s.size(); ++j) {
    if (s[j] == '\\') {
      ++j;
    } else if (s[j] == q) {
      return j + 1;
    }
  }
  return std::string_view::npos;
}

// vLLM's log prefix "LEVEL MM-DD HH:MM:SS" (logging's datefmt "%m-%d %H:%M:%S"), as an ISO 8601
// date-time in the year 2000 (the log has none; a leap year, so 02-29 reads).
bool log_time(std::string_view before, std::string& iso) {
  for (size_t i = 0; i + 14 <= before.size(); ++i) {
    std::string_view t = before.substr(i, 14);
    auto digit = [&](size_t k) { return t[k] >= '0' && t[k] <= '9'; };
    if (digit(0) && digit(1) && t[2] == '-' && digit(3) && digit(4) && t[5] == ' ' && digit(6) &&
        digit(7) && t[8] == ':' && digit(9) && digit(10) && t[11] == ':' && digit(12) &&
        digit(13)) {
      iso = fmt::format("2000-{}T{}Z", t.substr(0, 5), t.substr(6, 8));
      return true;
    }
  }
  return false;
}

// A request line: `at` is where "Received request ID: prompt: " (vLLM until its request log
// moved the prompt to DEBUG) or "Request ID details: prompt: " (after) begins, `id` the id,
// `rest` what follows "prompt: ".
std::string request_line(const std::string& path, uint64_t line_no, std::string_view line,
                         size_t at, std::string_view id, std::string_view rest) {
  auto fail = [&](const std::string& what) -> std::string {
    throw InputError(path, line_no, "", "vLLM request log: " + what);
  };
  std::string iso;
  if (!log_time(line.substr(0, at), iso)) fail("no 'MM-DD HH:MM:SS' time before the request");
  std::string prompt_json;
  if (rest.substr(0, 4) == "None") {
    rest = rest.substr(4);
  } else if (!rest.empty() && (rest[0] == '\'' || rest[0] == '"')) {
    size_t end = literal_end(rest, 0);
    if (end == std::string_view::npos) fail("the prompt's string is not closed on its line");
    try {
      prompt_json = json_string(parse_python_literal(rest.substr(0, end)).text);
    } catch (const std::exception& e) {
      fail(std::string("the prompt: ") + e.what());
    }
    rest = rest.substr(end);
  } else {
    fail("the prompt is neither a quoted string nor None");
  }
  size_t ids_at = rest.find("prompt_token_ids: ");
  if (ids_at != std::string_view::npos) {
    std::string_view ids = rest.substr(ids_at + 18);
    if (!ids.empty() && ids[0] == '[') {
      size_t close = ids.find(']');
      if (close == std::string_view::npos) fail("prompt_token_ids: the list is not closed");
      std::vector<uint64_t> tokens;
      std::string err = import_cells::parse_int_list(ids.substr(0, close + 1), false, tokens);
      if (!err.empty()) fail("prompt_token_ids: " + err);
      prompt_json = "[";
      for (size_t i = 0; i < tokens.size(); ++i)
        prompt_json += (i ? "," : "") + std::to_string(tokens[i]);
      prompt_json += "]";
    }
  }
  if (prompt_json.empty()) fail("neither a prompt nor prompt_token_ids");
  return fmt::format("{{\"id\": {}, \"time\": \"{}\", \"prompt\": {}}}", json_string(id), iso,
                     prompt_json);
}

}  // namespace

std::string vllm_log_to_jsonl(const std::string& path, const std::string& data, bool skip,
                              uint64_t& skipped, std::string& first_skipped) {
  constexpr std::string_view kDetails = "Request ", kDetailsPrompt = " details: prompt: ";
  std::string out;
  uint64_t line_no = 0, requests = 0, params_only = 0;
  for (size_t p = 0; p < data.size();) {
    size_t nl = data.find('\n', p);
    if (nl == std::string::npos) nl = data.size();
    std::string_view line(data.data() + p, nl - p);
    ++line_no;
    size_t at = line.find(kReceived), colon = std::string_view::npos;
    std::string_view id, rest;
    if (at != std::string_view::npos) {
      rest = line.substr(at + kReceived.size());
      colon = rest.find(": prompt: ");
      if (colon != std::string_view::npos && rest.substr(0, colon).find(' ') == std::string::npos) {
        id = rest.substr(0, colon);
        rest = rest.substr(colon + 10);
      } else {
        params_only += rest.find(": params: ") != std::string_view::npos;
        at = std::string_view::npos;  // the INFO line of a release that logs the prompt at DEBUG
      }
    } else if ((at = line.find(kDetails)) != std::string_view::npos) {
      rest = line.substr(at + kDetails.size());
      size_t d = rest.find(kDetailsPrompt);
      if (d != std::string_view::npos && rest.substr(0, d).find(' ') == std::string::npos) {
        id = rest.substr(0, d);
        rest = rest.substr(d + kDetailsPrompt.size());
      } else {
        at = std::string_view::npos;
      }
    }
    if (at != std::string_view::npos) {
      ++requests;
      try {
        out += request_line(path, line_no, line, at, id, rest);
      } catch (const InputError& e) {
        if (!skip) throw;
        if (skipped++ == 0) first_skipped = e.what();
      }
    }
    out += '\n';
    p = nl + 1;
  }
  if (requests == 0)
    throw InputError(path, 0, "",
                     params_only
                         ? "'Received request ID: params: ...' lines without the prompt: this "
                           "vLLM logs prompts at DEBUG ('Request ID details: prompt: ...'); run "
                           "it with VLLM_LOGGING_LEVEL=DEBUG as well as --enable-log-requests"
                         : "no 'Received request' line: not a vLLM request log (vLLM writes one "
                           "with --enable-log-requests)");
  return out;
}

}  // namespace kvpolicy
