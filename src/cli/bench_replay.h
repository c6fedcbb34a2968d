// `kvpolicy bench`'s replay section: every policy's replay timed round by round against LRU's on
// one workload, with bytes per cached block, victim() latency and the workload's memory.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/policy/policy.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy::cli {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t);
// Peak resident memory of this process (VmHWM), and a reset of it (clear_refs 5), so each
// workload's peak is its own.
uint64_t peak_rss_bytes();
void reset_peak_rss();

// victim() latency is timed on one eviction decision in this many (at random).
constexpr uint64_t kVictimSampleEvery = 8;

struct BenchArgs {
  std::string data;
  std::string policies;  // empty = every registered policy
  bool quick = false;
  bool repeat_given = false;  // --repeat on the command line: --quick keeps it
  int repeat = 3;
  uint64_t seed = 1;
  std::string json;
  // Serve section (issue 37): only it, some routers, extra worker counts, the stepped loop.
  bool serve_only = false;
  std::string serve_routers;  // empty = every router of the section
  std::string serve_workers = "4,16";
  bool serve_stepped = false;
};

struct Latency {
  double p50 = 0, p99 = 0;
  size_t samples = 0;
};

struct PolicyBench {
  std::string policy;
  ReplayResult best;       // the fastest of the repeats
  double cpu_seconds = 0;  // its replay's thread CPU time
  // The median round's CPU time: the headline rate, steadier than the fastest (the machine's
  // speed drifts, and one lucky round is no measure).
  double median_cpu_seconds = 0;
  double ratio_to_lru = 0;
  std::vector<double> round_cpu_seconds;  // one per round, for the per-round ratios
  // Its time over LRU's in the same round, across rounds: the spread shows the machine's noise.
  double round_ratio_median = 0, round_ratio_min = 0, round_ratio_max = 0;
  Latency latency;
  // The hit rate on one copy of a trace the workload repeats with fresh keys (-1: not
  // repeated). The copies' blocks never recur, and frequency-aware policies keep them, so the
  // workload's own hit rate is not the trace's.
  double one_copy_hit_rate = -1;
  std::string error;
};

struct WorkloadBench {
  std::string name;
  size_t unique_blocks = 0;
  size_t capacity = 0;
  double capacity_basis = 0;  // unique blocks the 10 % refers to
  double build_seconds = 0;
  std::vector<PolicyBench> rows;
  // LRU's whole miss-ratio curve in one pass (`kvpolicy mrc`): the stack-distance pass's thread
  // CPU time, the fastest of the rounds.
  double stack_cpu_seconds = 0;
  uint64_t block_accesses = 0;
  // Memory: the peak RSS from building the trace through its oracle and one replay (the
  // caller resets the peak before the build), and the trace's and oracle's own bytes.
  uint64_t peak_rss = 0, trace_bytes = 0, oracle_bytes = 0;
};

// `one_copy`: the trace `trace` repeats with fresh keys, or null; its hit rates are reported.
WorkloadBench bench_workload(const std::string& label, const std::string& name, const Trace& trace,
                             size_t capacity, std::vector<PolicySpec> specs, const BenchArgs& args,
                             const Trace* one_copy = nullptr);
void print_workload(const WorkloadBench& w);
std::string json_workload(const WorkloadBench& w);

}  // namespace kvpolicy::cli
