// Running a (policy x capacity) grid and printing it, shared by simulate and compare.
#pragma once

#include <string>
#include <vector>

#include "kvpolicy/sim.h"

namespace kvpolicy::cli {

// Replays every policy at every capacity, with a progress line on long runs.
std::vector<ReplayResult> run_grid(const Trace& trace, const std::vector<PolicySpec>& policies,
                                   const std::vector<Capacity>& capacities, uint64_t seed);
void print_table(const Trace& trace, const std::vector<ReplayResult>& results);
void write_json(const std::string& path, const std::vector<ReplayResult>& results);

}  // namespace kvpolicy::cli
