#include "kvpolicy/app/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

namespace kvpolicy::app {

Progress::Progress(std::string what)
    : what_(std::move(what)), start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() {
  if (shown_) fmt::print(stderr, "\n");
}

void Progress::update(double done, const std::string& detail) {
  // Parallel replays each report the share done with their own part counted, so a later report
  // can be smaller: the display keeps the largest, and never runs backwards.
  done = done_ = std::max(done_, done);
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

}  // namespace kvpolicy::app
