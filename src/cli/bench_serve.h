// `kvpolicy bench`'s serve-mode section: the Mooncake trace x18 through 8 workers for every
// (router, policy), timed on one thread against serve mode's budget (docs/architecture.md).
#pragma once

#include <string>
#include <vector>

#include "bench_replay.h"
#include "kvpolicy/serve/serve.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy::cli {

// Per (router, policy), thread CPU time: docs/architecture.md's budget (issue 37; 10 s before).
constexpr double kServeBudgetSeconds = 3;
constexpr uint32_t kServeWorkers = 8;
constexpr double kServeGpuBytes = 40e9;  // KV memory per worker
constexpr const char* kServeModel = "llama-3.1-8b";
constexpr const char* kServeGpu = "h100";

struct ServeBenchRow {
  std::string router, policy;
  uint32_t workers = kServeWorkers;
  ServeResult result;
  double wall_seconds = 0, cpu_seconds = 0;
  std::string error;
  bool within_budget() const { return error.empty() && cpu_seconds < kServeBudgetSeconds; }
};

struct ServeBench {
  bool done = false;
  std::string trace;
  size_t copies = 0;
  uint64_t requests = 0, block_accesses = 0;
  size_t capacity_blocks = 0;
  std::string cost_model;
  double build_seconds = 0;
  bool stepped = false;  // ServeOptions::stepped in every row
  std::vector<ServeBenchRow> rows;
};

// Every (router, policy) (two routers with lru when quick), one serve() each on this thread,
// then round_robin and cache_aware with lru at each of args.serve_workers (cost per request
// against the number of workers).
ServeBench bench_serve(const Trace& trace, size_t copies, const BenchArgs& args);
void print_serve(const ServeBench& b);
std::string json_serve(const ServeBench& b);  // "null" when the section did not run

}  // namespace kvpolicy::cli
