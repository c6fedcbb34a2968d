// round_robin: workers in turn, 0, 1, ..., n-1, 0, ...
// Source: SGLang router's round_robin policy (a baseline of the RLT paper).
// Cost: O(1) per request.
#include "kvpolicy/route/router.h"

namespace kvpolicy {
namespace {

class RoundRobin final : public Router {
 public:
  RoundRobin(const RouterContext&, const Params&) {}
  WorkerId route(const RequestView&, const ClusterView& cluster) override {
    return static_cast<WorkerId>(next_++ % cluster.workers());
  }

 private:
  uint64_t next_ = 0;
};

const bool registered = register_router<RoundRobin>({
    .name = "round_robin",
    .summary = "workers in turn",
    .source = "SGLang router (round_robin); a baseline of the RLT paper",
});

}  // namespace
}  // namespace kvpolicy
