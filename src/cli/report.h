// Running a (policy x capacity) grid and printing it, shared by simulate and compare.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common.h"
#include "distributed.h"
#include "kvpolicy/app/replay.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/sim/sweep.h"

namespace kvpolicy::cli {

// The application layer's grid, under the names the commands have always used.
using app::distinct_grid_configs;
using app::grid_replay_options;
using app::grid_sweep_configs;
using app::grid_sweep_settings;
using app::GridOptions;
using app::replay_sweep;
using app::run_grid;
using app::start_json_output;

// Adds --jobs, --json, --csv and --resume to a command.
void add_sweep_options(CLI::App* cmd, GridOptions& grid);

void print_table(const Trace& trace, const std::vector<ReplayResult>& results,
                 const TraceFacts* facts = nullptr);
// The same for a trace not held (a stream): facts.unique_blocks = 0 when not counted;
// `assumptions` are the trace's (print_assumptions).
void print_table(const std::string& trace_name, uint32_t block_tokens, const TraceFacts& facts,
                 const std::vector<ReplayResult>& results,
                 const Trace::Assumptions& assumptions = {});
// One stderr line per row whose policy's model was never fitted (ReplayResult::model_fitted).
void warn_unfitted_models(const std::vector<ReplayResult>& results);
void write_json(const std::string& path, const std::vector<ReplayResult>& results);
// One CSV row per result (a header first): the identifying fields, hit rates, capacity in GB,
// and the TTFT metrics. Throws naming the file if it cannot be written in full.
void write_csv(const std::string& path, const std::vector<ReplayResult>& results);

}  // namespace kvpolicy::cli
