#include "common.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::cli {

void TraceArgs::add(CLI::App* app, bool required) {
  auto* opt = app->add_option("--trace,-t", path, "trace file");
  if (required) opt->required();
  app->add_option("--format,-f", format, "trace format (auto, or see `kvpolicy trace formats`)")
      ->capture_default_str();
  app->add_flag("--skip-bad-lines", skip_bad_lines, "skip and count malformed records");
  app->add_option("--block-tokens", block_tokens, "tokens per block (default: the format's)");
  app->add_option("--max-requests", max_requests, "read at most this many requests");
  app->add_option("--sessions", sessions,
                  "auto: infer sessions from shared prefixes when the trace has none; "
                  "infer: always; keep: as read")
      ->check(CLI::IsMember({"auto", "infer", "keep"}))
      ->capture_default_str();
  app->add_option("--session-min-blocks", session_min_blocks,
                  "inference: a request is continued only if it has this many full blocks")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

Trace TraceArgs::load(size_t* continued_requests) const {
  ReadOptions opts;
  opts.skip_bad_lines = skip_bad_lines;
  opts.block_tokens = block_tokens;
  opts.max_requests = max_requests;
  ReadReport report;
  Trace t = read_trace(path, format, opts, &report);
  if (report.skipped_lines)
    fmt::print(stderr, "kvpolicy: skipped {} bad line(s) of {}; first: {}\n", report.skipped_lines,
               report.lines, report.first_skipped);
  if (report.sorted)
    fmt::print(stderr, "kvpolicy: {}: timestamps were out of order; sorted\n", path);
  bool has_sessions =
      std::any_of(t.session.begin(), t.session.end(), [](SessionId s) { return s != kNoSession; });
  size_t continued = 0;
  if (sessions == "infer" || (sessions == "auto" && !has_sessions)) {
    continued = infer_sessions(t, session_min_blocks);
    fmt::print(stderr,
               "kvpolicy: sessions inferred from shared prefixes: {} of {} requests continue an "
               "earlier one\n",
               continued, t.size());
  }
  if (continued_requests) *continued_requests = continued;
  return t;
}

Progress::Progress(std::string what)
    : what_(std::move(what)), start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() {
  if (shown_) fmt::print(stderr, "\n");
}

void Progress::update(double done, const std::string& detail) {
  auto now = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  bool tty = isatty(STDERR_FILENO);
  // A terminal line is redrawn in place; a log gets a line every 10 s.
  auto every = tty ? std::chrono::milliseconds(500) : std::chrono::milliseconds(10000);
  if (elapsed < 3.0 || now - last_ < every) return;
  last_ = now;
  double eta = done > 0 ? elapsed * (1 - done) / done : 0;
  fmt::print(stderr, "{}{}: {:5.1f}% {} elapsed {:.0f}s, about {:.0f}s left{}", tty ? "\r" : "",
             what_, done * 100, detail, elapsed, eta, tty ? "   " : "\n");
  shown_ = tty;
}

CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi)
          return fmt::format("'{}' is not a finite number in [{:g}, {:g}]", text, lo, hi);
        return "";
      },
      fmt::format("NUMBER in [{:g}, {:g}]", lo, hi));
}

std::ofstream open_output(const std::string& path, bool append) {
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  if (!out) throw ConfigError("cannot write '" + path + "'");
  return out;
}

void oracle_scores_without_continuation(const Trace& trace, std::vector<PolicySpec>& specs) {
  if (trace.has_continuation()) return;
  for (auto& spec : specs) {
    if (spec.params.find("predictor") != std::string::npos) continue;
    for (auto& p : PolicyRegistry::instance().get(spec.name).params) {
      if (p.name != "predictor" || p.default_value != "trace") continue;
      spec.params = "predictor=oracle";
      fmt::print(stderr,
                 "kvpolicy: {}: this trace carries no continuation scores (build one with "
                 "`kvpolicy trace build --classifier MODEL`); showing {}\n",
                 spec.name, spec.label());
    }
  }
}

}  // namespace kvpolicy::cli
