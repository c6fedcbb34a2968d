// Belady: evicts the evictable leaf whose next use is furthest in the future (offline OPT).
// Source: Belady 1966; ALGORITHMS.md section 1. Reads the trace's future through the oracle.
// Cost: O(1) per access, O(log n) per eviction and per leaf change (indexed heap of leaves).
#include "belady.h"

namespace kvpolicy {
namespace {

PolicyRegistrar registrar({
    .name = "belady",
    .summary = "evicts the leaf used furthest in the future (offline optimum for hit rate)",
    .paper = "Belady, IBM Systems Journal 1966",
    .params = {},
    .needs_oracle = true,
    .make = [](const PolicyContext& ctx, const Params&) -> std::unique_ptr<Policy> {
      return std::make_unique<BeladyOrder>(ctx, "belady", /*marks=*/false);
    },
});

}  // namespace
}  // namespace kvpolicy
