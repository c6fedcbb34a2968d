// Belady: evicts the evictable leaf whose next use is furthest in the future (offline OPT).
// Source: Belady 1966; ALGORITHMS.md section 1. Reads the trace's future through the oracle.
// Cost: O(1) per access, O(log n) per eviction and per leaf change (indexed heap of leaves).
#include "belady.h"

#include "cache_access.h"

namespace kvpolicy {
namespace {

class Belady final : public InlinedPolicy<Belady, BeladyOrder> {
 public:
  explicit Belady(const PolicyContext& ctx) : InlinedPolicy(ctx, "belady", /*marks=*/false) {}
};

PolicyRegistrar registrar({
    .name = "belady",
    .summary = "the leaf used furthest in the future (offline optimum for hit rate)",
    .paper = "Belady, IBM Systems Journal 1966",
    .params = {},
    .needs_oracle = true,
    .make = [](const PolicyContext& ctx, const Params&) -> std::unique_ptr<Policy> {
      return std::make_unique<Belady>(ctx);
    },
});

}  // namespace
}  // namespace kvpolicy
