#include "distributed.h"

#include <fmt/format.h>

#include "common.h"
#include "kvpolicy/core/error.h"
#include "mpi_comm.h"

namespace kvpolicy::cli {

void add_shard_option(CLI::App* cmd, std::string& shard_text) {
  cmd->add_option("--shard", shard_text,
                  "run only shard i of n of the configurations (i/n, 0 <= i < n: contiguous "
                  "runs of configuration order of about equal estimated cost); join the shards' "
                  "--json files with `kvpolicy merge`");
}

SweepPlacement sweep_placement(const std::string& shard_text, unsigned jobs) {
  SweepPlacement p;
  if (!shard_text.empty()) {
    p.shard = parse_shard(shard_text);
    p.sharded = true;
  }
  p.comm = mpi_sweep_comm();
  if (p.comm) p.end_comm = mpi_finish;
  if (p.comm && p.sharded)
    throw ConfigError(
        "--shard splits a sweep between separate runs; under mpirun the ranks "
        "share the cells already (drop --shard)");
  if (p.comm && jobs > 1)
    throw ConfigError(fmt::format(
        "--jobs {}: under mpirun each rank runs one configuration at a time; start one rank per "
        "core (mpirun -np N) instead",
        jobs));
  return p;
}

}  // namespace kvpolicy::cli
