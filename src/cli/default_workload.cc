#include "common.h"
#include "kvpolicy/error.h"

namespace kvpolicy::cli {
// Replaced by the synthetic conversation generator.
Trace default_workload(uint64_t) { throw Error("the built-in workload is not built yet"); }
}  // namespace kvpolicy::cli
