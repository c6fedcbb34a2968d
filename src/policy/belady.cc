// Belady: evicts the evictable leaf whose next use is furthest in the future (offline OPT).
// Source: Belady 1966; ALGORITHMS.md section 1. Reads the trace's future through the oracle.
// Cost: O(1) per access, O(log n) per eviction and per leaf change (indexed heap of leaves).
#include <functional>

#include "kvpolicy/order/indexed_heap.h"
#include "kvpolicy/policy.h"
#include "kvpolicy/trace.h"

namespace kvpolicy {
namespace {

class Belady final : public Policy {
 public:
  explicit Belady(const PolicyContext& ctx) : tree_(*ctx.tree), oracle_(*ctx.oracle) {}

  void on_access(NodeId n, const AccessInfo& info) override {
    if (n >= next_.size()) {
      next_.resize(tree_.id_limit());
      heap_.resize(tree_.id_limit());
    }
    next_[n] = oracle_.next_request[info.access];
    if (heap_.contains(n)) heap_.set(n, key(n));
  }
  void on_evictable(NodeId n) override { heap_.set(n, key(n)); }
  void on_unevictable(NodeId n) override {
    if (heap_.contains(n)) heap_.erase(n);
  }
  NodeId victim(Time) override { return heap_.empty() ? kNoNode : heap_.top(); }
  void on_removed(NodeId n) override {
    if (heap_.contains(n)) heap_.erase(n);
  }
  size_t memory_bytes() const override { return next_.capacity() * 4 + heap_.memory_bytes(); }

 private:
  // Furthest next use first (never-used-again is furthest), then the deeper block.
  uint64_t key(NodeId n) const { return (uint64_t{next_[n]} << 32) | tree_.depth(n); }

  const PrefixTree& tree_;
  const Oracle& oracle_;
  std::vector<uint32_t> next_;
  IndexedHeap<uint64_t, std::greater<uint64_t>> heap_;
};

PolicyRegistrar registrar({
    .name = "belady",
    .summary = "evicts the leaf used furthest in the future (offline optimum for hit rate)",
    .paper = "Belady, IBM Systems Journal 1966",
    .params = {},
    .needs_oracle = true,
    .make = [](const PolicyContext& ctx, const Params&) { return std::make_unique<Belady>(ctx); },
});

}  // namespace
}  // namespace kvpolicy
