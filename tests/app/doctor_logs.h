// Deterministic request logs with planted causes of prefix-cache misses, for the tests of
// `kvpolicy doctor` and the import's sanity report (docs/doctor.md). JSONL rows {t, s, text}.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace kvpolicy::test_logs {

enum class Planted {
  kTimestamp,      // (i) a timestamp in the shared system prompt, new on every request
  kSystemChanges,  // (ii) the system prompt's persona changes every 2 turns
  kReordered,      // (iii) the retrieved documents come in another order every turn
  kShortPrompts,   // (iv) prompts of ~100 tokens (to be imported with 256-token blocks)
  kSprayed,        // (v) long private sessions: the router decides their reuse
  kClean,          // (vi) well-formed conversations, a fixed system prompt
  kTemplate,       // role markers capitalized every other 2 turns: same messages, other template
  kAnswerEdited,   // the client re-sends each answer with its double space made single
};

// Words of letters only, none all-hex, so only planted digits look volatile.
class Words {
 public:
  explicit Words(uint64_t seed) : x_(seed * 2654435761u + 1) {}
  std::string word() {
    static const char* kSyll[] = {"ka", "lo", "mi", "ru", "ten", "vos", "gil", "pran", "zu", "qor"};
    std::string w;
    int n = 2 + next() % 3;
    for (int i = 0; i < n; ++i) w += kSyll[next() % 10];
    return w;
  }
  std::string sentence(int words) {
    std::string s;
    for (int i = 0; i < words; ++i) s += (i ? " " : "") + word();
    return s + ".";
  }
  uint64_t next() {
    x_ = x_ * 6364136223846793005ull + 1442695040888963407ull;
    return x_ >> 33;
  }

 private:
  uint64_t x_;
};

struct Row {
  double t;
  std::string session, text;
  std::string out;  // the answer as generated (output_text)
};

inline std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

inline std::vector<Row> planted_rows(Planted kind, int sessions = 24, int turns = 6) {
  Words w(static_cast<uint64_t>(kind) + 7);
  std::string instructions;
  for (int i = 0; i < 12; ++i) instructions += w.sentence(12) + " ";
  std::vector<std::string> docs;
  for (int i = 0; i < 3; ++i) docs.push_back("Document: " + w.sentence(40));
  std::vector<std::string> personas;
  for (int i = 0; i < 8; ++i) personas.push_back(w.word());
  std::vector<Row> rows;
  for (int s = 0; s < sessions; ++s) {
    std::vector<std::string> history;  // "user: ...", "assistant: ..." messages so far
    std::string own = kind == Planted::kSprayed ? w.sentence(120) + " " : "";
    for (int k = 0; k < turns; ++k) {
      double t = k * 60.0 + s * 2.0;
      int second = (s * 7 + k * 13) % 60;
      std::string system;
      switch (kind) {
        case Planted::kTimestamp:
          system = fmt::format(
                       "You are a helpful assistant. Current time: 2024-05-01 12:{:02d}:{:02d}. ",
                       (s + k) % 60, second) +
                   instructions;
          break;
        case Planted::kSystemChanges:
          system =
              "You are a helpful assistant. Persona: " + personas[(s + k / 2) % personas.size()] +
              ". " + instructions;
          break;
        case Planted::kShortPrompts:
          system = "Answer briefly. " + instructions.substr(0, 200);
          break;
        case Planted::kSprayed:
          system = own;
          break;
        default:
          system = "You are a helpful assistant. " + instructions;
      }
      std::string text = "system: " + system + "\n";
      if (kind == Planted::kReordered) {
        std::vector<int> order{0, 1, 2};
        for (int i = 2; i > 0; --i) std::swap(order[i], order[w.next() % (i + 1)]);
        for (int i : order) text += "user: " + docs[i] + "\n";
      }
      std::string question = "user: " + w.sentence(kind == Planted::kShortPrompts ? 10 : 25);
      if (kind == Planted::kShortPrompts) {
        rows.push_back({t, fmt::format("s{}", s), text + question, ""});
        history.clear();
        continue;
      }
      history.push_back(question);
      for (const std::string& m : history) text += m + "\n";
      if (kind == Planted::kTemplate && (k / 2) % 2 == 1)
        for (auto [from, to] : {std::pair{"system: ", "System: "},
                                {"user: ", "User: "},
                                {"assistant: ", "Assistant: "}})
          for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += 1)
            text.replace(at, std::string(from).size(), to);
      // The answer as generated, and as the next turn's prompt carries it.
      std::string answer = w.sentence(30);
      bool edited = kind == Planted::kAnswerEdited;
      rows.push_back({t, fmt::format("s{}", s), text, (edited ? "Sure.  " : "") + answer});
      history.push_back(std::string("assistant: ") + (edited ? "Sure. " : "") + answer);
    }
  }
  return rows;
}

// Writes the rows as JSONL (in time order) and returns the path.
inline std::string write_planted_log(const std::string& path, Planted kind, int sessions = 24,
                                     int turns = 6) {
  auto rows = planted_rows(kind, sessions, turns);
  std::stable_sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.t < b.t; });
  std::ofstream out(path);
  for (const Row& r : rows)
    out << fmt::format("{{\"t\": {}, \"s\": \"{}\", \"text\": \"{}\", \"out\": \"{}\"}}\n", r.t,
                       r.session, json_escape(r.text), json_escape(r.out));
  return path;
}

}  // namespace kvpolicy::test_logs
