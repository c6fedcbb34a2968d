// Serve mode routed by a given assignment (ServeOptions::assignment; docs/routers.md,
// "Per-decision regret").
#include "assignment.h"

#include <algorithm>
#include <string>

#include "kvpolicy/core/error.h"

namespace kvpolicy::serve_detail {
namespace {

class AssignedRouter final : public Router {
 public:
  explicit AssignedRouter(const std::vector<WorkerId>& assignment) : assignment_(assignment) {}
  WorkerId route(const RequestView& request, const ClusterView&) override {
    return assignment_[request.index];
  }

 private:
  const std::vector<WorkerId>& assignment_;
};

}  // namespace

void check_assignment(const Trace& trace, const ServeOptions& o) {
  if (!o.assignment) return;
  const std::vector<WorkerId>& a = *o.assignment;
  if (a.size() != trace.size())
    throw ConfigError("serve: the assignment has " + std::to_string(a.size()) +
                      " workers for a trace of " + std::to_string(trace.size()) + " requests");
  const bool pd = o.prefill_workers != 0 && o.decode_workers != 0;
  const uint32_t pool = pd ? o.prefill_workers : o.workers;
  for (size_t r = 0; r < a.size(); ++r) {
    if (a[r] == kSkipRequest) {
      if (o.clients > 0)
        throw ConfigError("serve: the assignment leaves request " + std::to_string(r) +
                          " out, which a closed loop (--clients) cannot do (its sessions chain "
                          "turns); use an open loop");
    } else if (a[r] >= pool) {
      throw ConfigError("serve: the assignment sends request " + std::to_string(r) + " to worker " +
                        std::to_string(a[r]) + " of " + std::to_string(pool) +
                        (pd ? " prefill workers" : " workers"));
    }
  }
}

std::unique_ptr<Router> assigned_router(const ServeOptions& o) {
  return std::make_unique<AssignedRouter>(*o.assignment);
}

size_t skipped_requests(const ServeOptions& o) {
  if (!o.assignment) return 0;
  return static_cast<size_t>(std::count(o.assignment->begin(), o.assignment->end(), kSkipRequest));
}

}  // namespace kvpolicy::serve_detail
