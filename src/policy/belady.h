// Belady's eviction order over the evictable leaves, shared by belady (belady.cc) and
// tail_belady (tlru.cc). Internal to src/policy.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/order/indexed_heap.h"
#include "kvpolicy/core/tree.h"
#include "kvpolicy/policy/policy.h"

namespace kvpolicy {

// Evicts the evictable leaf used furthest in the future: first any leaf marked first-to-evict,
// then never used again, deeper first, then the furthest next request.
//
// The key is 32 bits: mark << 31 | the next request holding the block or, for a block never
// used again, the trace's request count + its depth. That is the order of (mark, next request,
// depth): two evictable leaves of one tier never share a next request, since both blocks are in
// its prompt and so one is the other's ancestor. A heap entry is 8 bytes, and each block's key
// is kept once: in its heap entry while it is an evictable leaf, else in its slot.
class BeladyOrder : public Policy {
 public:
  // `marks`: mark_first is used, so keys keep their top bit free.
  BeladyOrder(const PolicyContext& ctx, const std::string& name, bool marks) : tree_(*ctx.tree) {
    if (!ctx.future) throw ConfigError(name + " needs the trace's future (oracle)");
    next_ = ctx.future->next_request.data();
    never_ = ctx.future->requests();
    // A block's depth is below its prompts' lengths.
    if (never_ + ctx.future->longest_prompt_blocks > (marks ? kMark : uint64_t{1} << 32))
      throw ConfigError(name + ": requests + longest prompt exceed its 32-bit keys");
  }

  void reserve_ids(size_t ids) override { heap_.resize(ids); }
  void on_access(NodeId n, const AccessInfo& info) override {
    uint32_t next = next_[info.access];
    // n is pinned, so out of the heap.
    heap_.stored_key(n) =
        next != OracleView::kNoNext ? next : static_cast<uint32_t>(never_ + tree_.depth(n));
  }
  void on_evictable(NodeId n) override {
    if (!heap_.contains(n)) heap_.push(n);
  }
  void on_unevictable(NodeId n) override {
    if (heap_.contains(n)) heap_.erase(n);
  }
  NodeId victim(Time) override { return heap_.empty() ? kNoNode : heap_.top(); }
  void on_removed(NodeId n, Removal) override {
    if (heap_.contains(n)) heap_.erase(n);
  }
  size_t memory_bytes() const override { return heap_.memory_bytes(); }

 protected:
  // Evicts n before every unmarked leaf, until its next access.
  void mark_first(NodeId n) {
    if (n >= heap_.ids()) return;  // not this tier's block
    heap_.update_key(n, [](uint32_t& k) { k |= kMark; });
  }

 private:
  static constexpr uint32_t kMark = uint32_t{1} << 31;

  const PrefixTree& tree_;
  const uint32_t* next_;  // the oracle's next request per block access
  uint64_t never_;        // request count: the key of "never used again" at depth 0
  IndexedHeap<uint32_t, ByKey<std::greater<uint32_t>>> heap_;  // holds every block's key
};

}  // namespace kvpolicy
