// Serve mode's command-line options, shared by `serve` and `route-study`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common.h"
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

  void add(CLI::App* cmd);
  CostModel cost_model() const;
  // Checks the flags that need no trace; returns the worker counts. Throws ConfigError.
  std::vector<uint32_t> validate() const;
  // Every (capacity, workers, router, policy) asked, in that nesting; throws ConfigError.
  std::vector<ServeOptions> configs(const Trace& trace, const CostModel& cost) const;
  // Runs them all with a progress line, streaming --json, resuming with --resume.
  std::vector<ServeResult> run(const Trace& trace, const std::string& what) const;
};

void print_serve_table(const Trace& trace, const std::vector<ServeResult>& results,
                       const CostModel& cost);

}  // namespace kvpolicy::cli
