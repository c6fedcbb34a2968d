// random: a uniformly random worker, from the router's seeded stream.
// Source: a baseline of the RLT paper (Random+LRU) and of SGLang's router.
// Cost: O(1) per request.
#include "route_common.h"

namespace kvpolicy {
namespace {

class RandomRouter final : public Router {
 public:
  RandomRouter(const RouterContext& ctx, const Params&) : rng_(ctx.seed) {}
  WorkerId route(const RequestView&, const ClusterView& cluster) override {
    return rng_.below(cluster.workers());
  }

 private:
  SplitMix64 rng_;
};

const bool registered = register_router<RandomRouter>({
    .name = "random",
    .summary = "a uniformly random worker (seeded)",
    .source = "baseline (RLT paper's Random+LRU; SGLang router's random policy)",
    .randomized = true,
});

}  // namespace
}  // namespace kvpolicy
