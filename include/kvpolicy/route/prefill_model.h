// The prefill-work model of routing (docs/routers.md, offline_bound): what an offline bound,
// per-decision regret and the offline router's plan are computed in. Requests come in trace
// order; W workers each keep a prefix cache of C blocks (0 = unlimited) holding the prompt and
// answer blocks of the requests they served, least recently used leaves leaving first; a request
// costs the blocks of its prompt beyond the longest prefix its worker holds (its prefill work).
// No timing, no queueing: the model prices cache affinity, and load only through a cap.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <unordered_map>
#include <vector>

#include "kvpolicy/route/router.h"

namespace kvpolicy {

// One worker's cache in the model.
class ModelCache {
 public:
  explicit ModelCache(uint64_t capacity_blocks = 0) : capacity_(capacity_blocks) {}
  // Blocks of `prompt` from its start that the cache holds (its prefix hit).
  uint32_t prefix_hit(std::span<const BlockKey> prompt) const;
  // The worker served a request: its sequence is cached (a parent is used later than its child,
  // so leaves go first), then least recently used blocks leave while over capacity.
  void serve(std::span<const BlockKey> sequence);
  size_t size() const { return stamp_.size(); }

 private:
  uint64_t capacity_;
  uint64_t clock_ = 0;
  std::unordered_map<BlockKey, uint64_t> stamp_;
  std::map<uint64_t, BlockKey> order_;  // stamp -> block, oldest first
};

// A load cap: each aligned window of `window` consecutive arrivals puts at most `per_worker` of
// its requests on any one worker. window = 0: no cap.
struct LoadCap {
  uint32_t window = 0;
  uint32_t per_worker = 0;
  bool allows(std::span<const WorkerId> assignment, uint32_t workers) const;
};

// Prefill blocks of each request under `assignment` (one worker per request) with caches of
// `capacity_blocks` (0 = unlimited).
std::vector<uint32_t> model_misses(const std::vector<FutureRequest>& requests,
                                   std::span<const WorkerId> assignment, uint32_t workers,
                                   uint64_t capacity_blocks);
uint64_t model_cost(const std::vector<FutureRequest>& requests,
                    std::span<const WorkerId> assignment, uint32_t workers,
                    uint64_t capacity_blocks);

// A lower bound on model_cost over every assignment the cap allows, whatever the cache capacity
// and eviction (docs/routers.md, offline_bound): each distinct prompt block v is computed at
// least once on every worker that serves a prompt holding it, unless v reached that worker as
// an answer block first (at most one worker per request whose answer holds v); and in each
// window at least ceil(prompts holding v / per_worker) workers serve such a prompt.
uint64_t prefill_lower_bound(const std::vector<FutureRequest>& requests, uint32_t workers,
                             const LoadCap& cap);

// Per-decision regret in the model: at each sampled decision i, the prefill blocks of requests
// [i, i + window) (to the end when window = 0) with request i moved to each other worker and every
// other request left where `assignment` put it, against the chosen worker's; regret = the chosen
// one's cost minus the cheapest (>= 0). Caches start from replaying `assignment` up to i.
std::vector<double> model_regret(const std::vector<FutureRequest>& requests,
                                 std::span<const WorkerId> assignment, uint32_t workers,
                                 uint64_t capacity_blocks, std::span<const size_t> decisions,
                                 uint32_t window);

// `count` decisions spread evenly over n requests (all when count >= n).
std::vector<size_t> sampled_decisions(size_t n, size_t count);

// "Routing gap closed" = (router - baseline) / (bound - baseline): 0 for the baseline, 1 for the
// bound; NaN when bound and baseline are equal (no gap to close).
double gap_closed(double router, double baseline, double bound);

// The offline router's plan (offline_bound): the worker of every request of `requests`.
struct OfflinePlanOptions {
  uint32_t workers = 1;
  uint64_t capacity_blocks = 0;  // the model's cache per worker (0 = unlimited)
  uint32_t block_tokens = 16;
  double prefill_seconds_per_token = 1e-4;
  LoadCap cap;
  double horizon_s = 30;  // how far ahead a held session's next turn is looked at
};
std::vector<WorkerId> offline_plan(const std::vector<FutureRequest>& requests,
                                   const OfflinePlanOptions& options);

}  // namespace kvpolicy
