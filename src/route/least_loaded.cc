// least_loaded: the worker with the fewest requests in flight, ties to the lower index.
// Source: classic join-the-shortest-queue; the imbalanced branch of SGLang's cache-aware router.
// Cost: O(workers) per request.
#include "route_common.h"

namespace kvpolicy {
namespace {

class LeastLoaded final : public Router {
 public:
  LeastLoaded(const RouterContext&, const Params&) {}
  WorkerId route(const RequestView&, const ClusterView& cluster) override {
    return least_in_flight(cluster);
  }
};

const bool registered = register_router<LeastLoaded>({
    .name = "least_loaded",
    .summary = "fewest requests in flight (ties to the lower index)",
    .source = "join-the-shortest-queue; SGLang router's shortest_queue",
});

}  // namespace
}  // namespace kvpolicy
