// `kvpolicy route-bound` (issue 38, item 3; docs/routers.md, offline_bound): every router asked,
// round_robin and offline_bound served on one trace and cluster; each router's gap closed to the
// offline router on TTFT and hit rate, its per-decision regret in the prefill-work model and in
// serve mode, and the model's proven ceiling on hit rate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/app/serve.h"

namespace kvpolicy::app {

struct RouteBoundOptions {
  size_t regret_sample = 200;   // decisions sampled per router (0 = no regret)
  uint32_t regret_window = 64;  // arrivals re-simulated from each (0 = to the end)
  // "model" (the prefill-work model), "serve" (serve_regret: W serve runs per decision) or
  // "both"; the serve regret samples serve_regret_sample decisions (its cost), the model's
  // regret_sample.
  std::string regret_mode = "model";
  size_t serve_regret_sample = 10;
};

struct RouteBoundRow {
  ServeResult result;
  bool offline = false;       // offline_bound (reads the future)
  double model_hit_rate = 0;  // its serve-mode assignment replayed in the prefill-work model
  double regret_mean_tokens = 0, regret_p90_tokens = 0;
  size_t regret_samples = 0;
  // serve_regret: the window's summed TTFT, ms (0 samples when the mode leaves it out).
  double serve_regret_mean_ms = 0, serve_regret_p90_ms = 0;
  size_t serve_regret_samples = 0;
  // (router - round_robin) / (offline_bound - round_robin); NaN when the two are equal.
  double gap_ttft_mean = 0, gap_ttft_p50 = 0, gap_hit = 0;
};

struct RouteBoundReport {
  std::vector<RouteBoundRow> rows;  // round_robin, offline_bound, then the routers asked
  uint64_t prompt_blocks = 0;       // summed over requests (the model's block accesses)
  uint64_t lower_bound_blocks = 0;  // prefill_lower_bound without a cap
  double model_hit_ceiling = 0;     // 1 - lower_bound_blocks / prompt_blocks
  uint32_t regret_window = 0;
  std::string regret_mode = "model";
  bool has_serve_regret() const { return regret_mode != "model"; }
  std::string row_json(const RouteBoundRow& row) const;
};

// A router list with the set "online" replaced by every registered router that reads no future.
std::string expand_router_sets(const std::string& routers);

// `spec.routers` may be "online" (every registered router that reads no future). One worker
// count, capacity and policy; an open loop; regret_mode model, serve or both. Throws
// ConfigError naming the flag otherwise.
RouteBoundReport route_bound(const Trace& trace, const ServeSpec& spec,
                             const RouteBoundOptions& options);

}  // namespace kvpolicy::app
