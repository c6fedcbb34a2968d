// How a sweep command (simulate, serve, mrc) takes part in a sweep: all of it in this process
// (threads, as always), one shard of it (--shard i/n), or its share of an mpirun's cells.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "kvpolicy/app/sweep.h"

namespace kvpolicy::cli {

using app::SweepCells;
using app::SweepPlacement;

// Adds --shard i/n to a sweep command.
void add_shard_option(CLI::App* cmd, std::string& shard_text);
// Reads --shard (empty: none) and whether mpirun started this process (MPI starts here; the
// placement ends it). Throws ConfigError on a bad --shard, --shard under mpirun, or --jobs above
// 1 under mpirun (each rank runs one cell at a time: start one rank per core instead).
SweepPlacement sweep_placement(const std::string& shard_text, unsigned jobs);

}  // namespace kvpolicy::cli
