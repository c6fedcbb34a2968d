// Serve mode's command-line options, shared by `serve` and `route-study`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common.h"
#include "distributed.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/serve/serve.h"

namespace kvpolicy::cli {

struct ServeArgs {
  std::string routers = "round_robin";
  std::string policies = "lru";
  std::string workers = "1";
  CapacityArgs capacities;  // KV memory per GPU
  CostArgs cost;
  uint32_t tp = 1;
  // Batching, arrivals, SLO and seed: every configuration starts from these.
  ServeOptions base;
  bool no_cache_outputs = false;
  unsigned jobs = 0;
  std::string json_path;
  bool resume = false;
  std::string shard;  // --shard i/n (serve only)

  void add(CLI::App* cmd);
  CostModel cost_model() const;
  // Checks the flags that need no trace; returns the worker counts. Throws ConfigError.
  std::vector<uint32_t> validate() const;
  // Says on stderr, one line each, which flags given on `cmd` these settings ignore (--rate in a
  // closed loop, --think-time in an open one, --time-scale under --rate).
  void say_ignored(const CLI::App& cmd) const;
  // Every (capacity, workers, router, policy) asked, in that nesting; throws ConfigError.
  std::vector<ServeOptions> configs(const Trace& trace, const CostModel& cost) const;
  // Runs them all with a progress line, streaming --json, resuming with --resume; or only the
  // cells of `where`'s shard (the --json file then in configuration order); or, on rank 0 of an
  // mpirun, over every rank (run_on_ranks). Results in configuration order.
  std::vector<ServeResult> run(const Trace& trace, const std::string& what,
                               const SweepPlacement& where = {}) const;
};

// The serve sweep's cells (configurations) for a sharded or distributed run.
SweepCells serve_sweep_cells(const Trace& trace, const std::vector<ServeOptions>& configs,
                             const std::string& json_path);

void print_serve_table(const Trace& trace, const std::vector<ServeResult>& results,
                       const CostModel& cost);

}  // namespace kvpolicy::cli
