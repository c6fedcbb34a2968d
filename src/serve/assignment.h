// Serve mode routed by a given assignment (ServeOptions::assignment): its checks, the router
// that plays it, and the requests it leaves out.
#pragma once

#include <cstddef>
#include <memory>

#include "kvpolicy/serve/serve.h"

namespace kvpolicy::serve_detail {

// Throws ConfigError when o.assignment (if set) does not fit the trace and the cluster.
void check_assignment(const Trace& trace, const ServeOptions& o);

// Sends request r to (*o.assignment)[r]; o.assignment must be set and checked.
std::unique_ptr<Router> assigned_router(const ServeOptions& o);

// Whether the assignment leaves request r out, and how many it leaves out.
inline bool skipped(const ServeOptions& o, size_t r) {
  return o.assignment && (*o.assignment)[r] == kSkipRequest;
}
size_t skipped_requests(const ServeOptions& o);

}  // namespace kvpolicy::serve_detail
