// HPT, hits per token: evicts the evictable leaf with the fewest hits per token, then the least
// recently used, then the deeper block. Source: SGLang's example EvictionStrategy (hit_count /
// tokens of the radix node, last_access_time) (docs/policies.md).
// Cost: O(1) per access; O(log n) per eviction and per leaf change.
#include <algorithm>
#include <compare>

#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"
#include "leaf_heap.h"

namespace kvpolicy {
namespace {

// SGLang divides by the tokens of a radix node, a run of any length. kvpolicy's blocks all
// hold B tokens, so per block the ratio is hit_count / B: the order of lfu exactly (per=block).
// per=path (default) divides by the tokens of the block's whole prefix, (depth + 1) x B: of
// two blocks with equal hits the deeper one (a longer, more specific prefix) goes first.
// hit_count is SGLang's: every request reaching the block counts, its inserting one included.
#pragma pack(push, 4)
struct HptKey {
  uint32_t hits;
  uint32_t tokens;  // the divisor, in blocks: 1 or depth + 1
  uint32_t last;    // last access, a request counter
  // hits / tokens compared exactly by cross-multiplying (both below 2^32).
  std::strong_ordering operator<=>(const HptKey& o) const {
    uint64_t a = uint64_t{hits} * o.tokens, b = uint64_t{o.hits} * tokens;
    return a != b ? a <=> b : last <=> o.last;
  }
  bool operator==(const HptKey& o) const { return (*this <=> o) == 0; }
};
#pragma pack(pop)

class Hpt final : public InlinedPolicy<Hpt> {
 public:
  static constexpr PolicyHooks kHooks{};
  Hpt(const PolicyContext& ctx, const Params& p)
      : tree_(ctx.tree), heap_({ctx.tree}), per_path_(p.get_string("per") == "path") {}
  void reserve_ids(size_t ids) override { heap_.resize(ids); }

  void on_request_begin(const RequestView&) override { ++clock_; }
  void on_access(NodeId n, const AccessInfo& info) override {
    HptKey& k = heap_.stored_key(n);  // n is pinned
    k.hits = info.reused() ? std::min(k.hits, 0xFFFFFFFEu) + 1 : 1;
    k.tokens = per_path_ ? tree_->depth(n) + 1 : 1;
    k.last = clock_;
  }
  void on_evictable(NodeId n) override { heap_.insert(n); }
  void on_unevictable(NodeId n) override { heap_.erase(n); }
  NodeId victim(Time) override { return heap_.top(); }
  void on_removed(NodeId n, Removal) override { heap_.erase(n); }
  size_t memory_bytes() const override { return heap_.memory_bytes(); }

 private:
  const PrefixTree* tree_;
  LeafHeap<HptKey, DeeperOnTies<HptKey>> heap_;
  bool per_path_;
  uint32_t clock_ = 0;  // requests seen: a logical access time
};

const bool registered = register_policy<Hpt>({
    .name = "hpt",
    .summary = "fewest hits per token of the block's prefix (per=block: of the block, = lfu), "
               "then LRU, then deeper first",
    .paper = "SGLang's example radix-cache strategy (hit_count / node tokens, last_access_time)",
    .params = {param_choice("per", "path", {"path", "block"},
                            "hits divided by the tokens of the block's whole prefix (path) or of "
                            "the block alone (block: every block holds B tokens, so this is lfu)")},
    .variants = {"per=block"},
});

}  // namespace
}  // namespace kvpolicy
