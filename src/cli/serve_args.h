// Serve mode's command-line options, shared by `serve` and `route-study`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common.h"
#include "distributed.h"
#include "kvpolicy/app/serve.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/serve/serve.h"

namespace kvpolicy::cli {

// app::ServeSpec from flags, and where its cells run (--shard, mpirun).
struct ServeArgs : app::ServeSpec {
  std::string shard;  // --shard i/n (serve only)

  void add(CLI::App* cmd);
  void add_tier_options(CLI::App* cmd);  // memory tiers
  // Says on stderr, one line each, which flags given on `cmd` these settings ignore (--rate in a
  // closed loop, --think-time in an open one, --time-scale under --rate, P/D's link and decode
  // router without pools).
  void say_ignored(const CLI::App& cmd) const;
};

void print_serve_table(const Trace& trace, const std::vector<ServeResult>& results,
                       const CostModel& cost);

}  // namespace kvpolicy::cli
