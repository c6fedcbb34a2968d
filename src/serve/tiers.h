// Serve mode's memory tiers (docs/serve.md, "Memory tiers"): the lower tiers each worker's
// cache gets, the remote pool the cluster shares, and their counters in the result.
#pragma once

#include <memory>
#include <vector>

#include "kvpolicy/cache/tier_store.h"
#include "kvpolicy/serve/serve.h"
#include "worker.h"

namespace kvpolicy::serve_detail {

// Throws ConfigError: tiers out of order (dram, ssd, remote), repeated or of no blocks.
void check_tiers(const ServeOptions& o);
// Echoes the tier configuration into a planned result (its key() depends on it).
void echo_tiers(const ServeOptions& o, ServeResult& res);
// Gives every worker its lower tiers; `remote` receives the shared pool, if any.
void attach_tiers(std::vector<std::unique_ptr<Worker>>& workers, const ServeOptions& o,
                  PolicyContext ctx, std::unique_ptr<TierStore>& remote);
// Fills res.tiers and the HBM share of the hits (after block_hits and block_accesses).
void collect_tiers(const std::vector<std::unique_ptr<Worker>>& workers, const ServeOptions& o,
                   const CostModel& cost, ServeResult& res);

}  // namespace kvpolicy::serve_detail
