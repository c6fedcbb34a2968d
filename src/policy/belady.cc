// Belady: evicts the evictable leaf whose next use is furthest in the future (offline OPT).
// Source: Belady 1966; docs/policies.md. Reads the trace's future through the oracle.
// Cost: O(1) per access, O(log n) per eviction and per leaf change (indexed heap of leaves).
#include "belady.h"

#include "kvpolicy/policy/walk.h"

namespace kvpolicy {
namespace {

class Belady final : public InlinedPolicy<Belady, BeladyOrder> {
 public:
  static constexpr PolicyHooks kHooks{};
  explicit Belady(const PolicyContext& ctx) : InlinedPolicy(ctx, "belady", /*marks=*/false) {}
};

const bool registered = register_policy<Belady>({
    .name = "belady",
    .summary = "the leaf used furthest in the future (offline optimum for hit rate)",
    .paper = "Belady, IBM Systems Journal 1966",
    .needs_future = true,
});

}  // namespace
}  // namespace kvpolicy
