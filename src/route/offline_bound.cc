// offline_bound: knows the whole trace (offline, as Belady is for eviction) and plays a plan made
// in the prefill-work model before the first request: each request in arrival order goes to the
// worker where its prefill would finish first (that worker's queued prefill work plus the
// request's uncached blocks given the model's caches), plus the wait it adds to the next turns of
// the sessions that worker holds arriving before then, under a per-window load cap. Not a proven
// optimum in serve mode: the best found; its proven companion is prefill_lower_bound
// (docs/routers.md, offline_bound).
// Cost: O(n x workers x prompt blocks) once, at the first request; O(1) per request after.
#include <cmath>

#include "kvpolicy/route/prefill_model.h"
#include "route_common.h"

namespace kvpolicy {
namespace {

class OfflineBound final : public Router {
 public:
  OfflineBound(const RouterContext& ctx, const Params& p) : ctx_(ctx) {
    options_.workers = ctx.workers;
    options_.block_tokens = ctx.block_tokens;
    options_.prefill_seconds_per_token = ctx.prefill_seconds_per_token;
    options_.capacity_blocks = static_cast<uint64_t>(p.get_int("capacity"));
    options_.horizon_s = p.get_double("horizon");
    auto window = static_cast<uint32_t>(p.get_int("window"));
    if (window != 0) {
      options_.cap.window = window;
      options_.cap.per_worker = static_cast<uint32_t>(
          std::ceil(p.get_double("slack") * double(window) / double(ctx.workers) - 1e-9));
      options_.cap.per_worker =
          std::max<uint32_t>(options_.cap.per_worker, (window + ctx.workers - 1) / ctx.workers);
    }
  }

  WorkerId route(const RequestView& r, const ClusterView& cluster) override {
    if (!planned_) {
      // The model's caches are the workers' (capacity 0: as the cluster reports them).
      if (options_.capacity_blocks == 0) options_.capacity_blocks = cluster.load(0).capacity_blocks;
      plan_ = offline_plan(*ctx_.future, options_);
      planned_ = true;
    }
    if (r.index < plan_.size()) return plan_[r.index];
    ++unplanned_;  // not in the trace it was given (a request the future did not hold)
    return least_in_flight(cluster);
  }

  PolicyStats stats() const override {
    return {{"unplanned_requests", double(unplanned_)},
            {"load_cap_per_window", double(options_.cap.per_worker)}};
  }

 private:
  RouterContext ctx_;
  OfflinePlanOptions options_;
  bool planned_ = false;
  std::vector<WorkerId> plan_;
  uint64_t unplanned_ = 0;
};

const bool registered = register_router<OfflineBound>({
    .name = "offline_bound",
    .summary = "offline (reads the trace's future): a plan made before the first request, each "
               "request to the worker where its prefill finishes first plus the wait it adds to "
               "its sessions' next turns, under a per-window load cap",
    .source = "kvpolicy's offline reference (issue 38); prefill-work model in docs/routers.md",
    .params = {param_int("window", 64, {.min = 0}, "arrivals per load window (0 = no cap)"),
               param_double("slack", 1.5, {.min = 1},
                            "a worker takes at most ceil(slack x window / workers) of a window"),
               param_double(
                   "horizon", 30, {.min = 0},
                   "seconds ahead a held session's next turn is looked at (0 = no lookahead)"),
               param_int("capacity", 0, {.min = 0},
                         "the model's cache per worker in blocks (0 = the workers' KV memory)")},
    .variants = {"window=0,horizon=0"},
    .needs_future = true,
});

}  // namespace
}  // namespace kvpolicy
