// Options and helpers shared by the subcommands: loading a trace, progress, output files.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "kvpolicy/policy/policy.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy::cli {

// --trace/--format/--skip-bad-lines/--block-tokens/--max-requests, and the built-in workload.
struct TraceArgs {
  std::string path;
  std::string format = "auto";
  bool skip_bad_lines = false;
  uint32_t block_tokens = 0;
  uint64_t max_requests = 0;
  // auto: infer sessions from shared prefixes when the trace carries none; infer: always;
  // keep: as read.
  std::string sessions = "auto";
  uint32_t session_min_blocks = 2;

  void add(CLI::App* app, bool required);
  // Loads the trace, printing what was skipped, sorted or inferred to stderr.
  Trace load() const { return load(nullptr); }
  // Also tells how many requests inference put into an earlier request's session (0 if none).
  Trace load(size_t* continued_requests) const;
};

// The built-in default workload `compare` and `make run` use when no trace is given.
Trace default_workload(uint64_t seed);

// A progress line on stderr, shown only once a run has taken more than a few seconds.
class Progress {
 public:
  explicit Progress(std::string what);
  ~Progress();
  void update(double done, const std::string& detail = "");

 private:
  std::string what_;
  std::chrono::steady_clock::time_point start_, last_;
  bool shown_ = false;
};

// A finite number in [lo, hi]: CLI's NonNegativeNumber lets nan and inf through, which then
// reach the results (a "nan" in JSON, a DRAM tier of 2^63 blocks).
CLI::Validator finite_in(double lo, double hi);

// Opens an output file or throws ConfigError naming it.
std::ofstream open_output(const std::string& path, bool append = false);

// A policy that reads the trace's continuation scores by default (LPC) runs its oracle variant
// on a trace without them, and says so on stderr.
void oracle_scores_without_continuation(const Trace& trace, std::vector<PolicySpec>& specs);

}  // namespace kvpolicy::cli
