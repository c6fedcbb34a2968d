// Windowed LFU: evicts the evictable leaf accessed fewest times within the last W block
// accesses, then the least recently used, then the deeper block.
// Source: window-based LFU (Karakostas & Serpanos, "Exploitation of different types of locality
// for Web caches", ISCC 2002); W-TinyLFU's sample of 10 x capacity for the default window
// (docs/policies.md). Cost: O(log n) per access (the access leaving the window re-keys its
// block); O(log n) per eviction and per leaf change.
#include <algorithm>
#include <compare>
#include <limits>
#include <vector>

#include "kvpolicy/core/order/indexed_heap.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"
#include "leaf_heap.h"

namespace kvpolicy {
namespace {

// Windowed access count, then the last access request (older first).
struct WlfuKey {
  uint32_t count;
  uint32_t last;
  std::strong_ordering operator<=>(const WlfuKey& o) const {
    return count != o.count ? count <=> o.count : last <=> o.last;
  }
  bool operator==(const WlfuKey& o) const { return (*this <=> o) == 0; }
};

// The window is the last W calls of on_access in this tier (a hit, an insertion, or a block
// arriving from the other tier), kept as a ring of node ids. When an access leaves the window
// its block's count drops by one, unless the block left the tier since (its id was recycled):
// a block's birth is the sequence number of the access that brought it in, and only accesses at
// or after it count. Unlike lfu's, keys change while blocks are evictable leaves, so the heap
// is re-keyed in place.
class Wlfu final : public InlinedPolicy<Wlfu> {
 public:
  static constexpr PolicyHooks kHooks{};
  Wlfu(const PolicyContext& ctx, const Params& p) : heap_(DeeperOnTies<WlfuKey>{ctx.tree}) {
    int64_t w = p.get_int("window");
    window_ = w > 0 ? static_cast<size_t>(w) : std::max<size_t>(1, 10 * ctx.capacity_blocks);
    ring_.reserve(std::min<size_t>(window_, size_t{1} << 20));
  }
  void reserve_ids(size_t ids) override {
    heap_.resize(ids);
    if (ids > birth_.size()) birth_.resize(ids, kGone);
  }

  void on_request_begin(const RequestView&) override { ++clock_; }
  void on_access(NodeId n, const AccessInfo& info) override {
    uint64_t seq = seq_++;
    if (info.reused() && birth_[n] != kGone) {
      WlfuKey& k = heap_.stored_key(n);  // n is pinned: not in the heap
      k.count += 1;
      k.last = clock_;
    } else {  // new to this tier: whatever the id counted before was another block's
      birth_[n] = seq;
      heap_.stored_key(n) = WlfuKey{1, clock_};
    }
    // The ring's slot seq % W holds the access W calls old, which leaves now.
    if (ring_.size() < window_) {
      ring_.push_back(n);
      return;
    }
    size_t slot = seq % window_;
    NodeId old = ring_[slot];
    ring_[slot] = n;
    uint64_t old_seq = seq - window_;
    if (birth_[old] != kGone && old_seq >= birth_[old])
      heap_.update_key(old, [](WlfuKey& k) { --k.count; });
  }
  void on_evictable(NodeId n) override { heap_.push(n); }
  void on_unevictable(NodeId n) override { heap_.erase(n); }
  NodeId victim(Time) override { return heap_.empty() ? kNoNode : heap_.top(); }
  void on_removed(NodeId n, Removal) override {
    if (heap_.contains(n)) heap_.erase(n);
    birth_[n] = kGone;
  }
  size_t memory_bytes() const override {
    return heap_.memory_bytes() + birth_.capacity() * sizeof(uint64_t) +
           ring_.capacity() * sizeof(NodeId);
  }

 private:
  static constexpr uint64_t kGone = std::numeric_limits<uint64_t>::max();
  IndexedHeap<WlfuKey, DeeperOnTies<WlfuKey>> heap_;
  std::vector<uint64_t> birth_;  // per id: the sequence number of its block's first access
  std::vector<NodeId> ring_;     // the window's accesses; slot seq % W
  size_t window_ = 1;
  uint64_t seq_ = 0;    // accesses told so far
  uint32_t clock_ = 0;  // requests seen: a logical access time
};

const bool registered = register_policy<Wlfu>({
    .name = "wlfu",
    .summary = "fewest accesses within the last `window` block accesses, then LRU, then deeper "
               "first",
    .paper = "window LFU (Karakostas & Serpanos, ISCC 2002); window as W-TinyLFU's sample",
    .params = {param_int("window", 0, {.min = 1, .special = {0}},
                         "block accesses the frequency is counted over (0 = 10 x the capacity "
                         "in blocks, W-TinyLFU's sample size)")},
    .variants = {"window=1", "window=50"},
});

}  // namespace
}  // namespace kvpolicy
