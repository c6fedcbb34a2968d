// A serve sweep as both front ends ask for it: every (capacity, workers, router, policy) of a
// trace through a simulated cluster (serve/serve.h), one result per configuration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/app/inputs.h"
#include "kvpolicy/app/sweep.h"
#include "kvpolicy/serve/serve.h"

namespace kvpolicy::app {

struct ServeSpec {
  std::string routers = "round_robin";  // comma-separated, each name[:key=value,...]
  std::string policies = "lru";         // names and the sets online, offline, all
  std::string workers = "1";            // worker counts, comma-separated
  std::string capacities = "0.1";       // KV memory per GPU (a worker has `tp` times it)
  CostOptions cost;
  uint32_t tp = 1;
  // Batching, arrivals, SLO and seed: every configuration starts from these.
  ServeOptions base;
  bool no_cache_outputs = false;
  unsigned jobs = 0;      // simulations at once; 0 = every core
  std::string json_path;  // stream each result here as it finishes
  bool resume = false;    // keep the results already in json_path, run only the missing ones

  // Memory tiers (issue 37, item 1; docs/serve.md, "Memory tiers"): the sizes of each worker's
  // DRAM and SSD and of the cluster's remote pool, each a multiple of HBM ("2", "0.5x"; the
  // pool's of all workers' HBM) or a capacity ("64GB", "1TiB", "100000b" blocks, "2000000t"
  // tokens); "" = no such tier. Each tier's policy, admission filter and link.
  std::string dram, ssd, remote;
  std::string dram_policy = "lru", ssd_policy = "lru", remote_policy = "lru";
  std::string dram_admit = "all", ssd_admit = "all", remote_admit = "all";
  std::string dram_link = "pcie4", ssd_link = "nvme", remote_link = "rdma-200";
  std::string placement = "exclusive", write = "write-back";
  bool overlap_transfers = false;
  // TensorRT-LLM's minimum priority for offload (ServeOptions::offload_min_priority); -1 = off.
  int32_t offload_min_priority = -1;
  // The lower tiers of a configuration whose workers have `hbm_blocks` each; throws ConfigError.
  std::vector<TierSpec> tier_specs(size_t hbm_blocks, uint32_t workers, size_t unique_blocks,
                                   uint32_t block_tokens, double kv_bytes_per_block) const;

  // The cost model with `tp` and the KV dtype (always passed: part of the results' key).
  CostModel cost_model() const;
  // Checks the settings that need no trace; returns the worker counts. Throws ConfigError.
  std::vector<uint32_t> validate() const;
  // Every (capacity, workers, router, policy) asked, in that nesting, each once; throws
  // ConfigError. Their cost_model is left for the caller to point at `cost`.
  std::vector<ServeOptions> configs(const Trace& trace, const CostModel& cost) const;
};

// A serve sweep's cells: each runs through serve() into a ServeResult, rows read back from
// `json_path`. `trace` and `configs` must outlive it.
Sweep<ServeResult> serve_cells(const Trace& trace, const std::vector<ServeOptions>& configs,
                               const std::string& json_path);

// The whole sweep of `spec` (app::run_sweep): on `spec.jobs` threads with a progress line named
// `what`, streaming spec.json_path and resuming with spec.resume; or the cells of `where`'s
// shard, or on rank 0 of an mpirun every rank's. Results in configuration order.
std::vector<ServeResult> serve_sweep(const Trace& trace, const ServeSpec& spec,
                                     const std::string& what = "serve",
                                     const SweepPlacement& where = {});

}  // namespace kvpolicy::app
