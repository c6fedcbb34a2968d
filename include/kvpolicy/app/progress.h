// A progress line on stderr for long runs, shared by every front end's sweeps.
#pragma once

#include <chrono>
#include <string>

namespace kvpolicy::app {

// Shown only once a run has taken more than a few seconds.
class Progress {
 public:
  explicit Progress(std::string what);
  ~Progress();
  void update(double done, const std::string& detail = "");

 private:
  std::string what_;
  std::chrono::steady_clock::time_point start_, last_;
  bool shown_ = false;
  double done_ = 0;  // the most reported: parallel jobs report out of order, the display must not
};

}  // namespace kvpolicy::app
