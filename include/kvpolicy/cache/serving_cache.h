// ServingCache: a worker's KV memory in serve mode, shared between the prefix cache and the
// requests it runs (docs/serve.md). Every block a running request
// holds is either a node of the prefix tree, pinned while the request runs, or a private block
// (output being generated, or a recomputed answer) that joins the tree when the request
// completes. The policy hears each prompt block once, at admission, as in replay mode, and each
// answer block when it joins the tree, each in a request cycle of its own (policy.h); it
// chooses what to evict when memory runs short, and only unpinned blocks are ever evicted.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kvpolicy/cache/lower_tiers.h"
#include "kvpolicy/cache/policy_driver.h"
#include "kvpolicy/core/tree.h"
#include "kvpolicy/policy/policy.h"

namespace kvpolicy {

class ServingCache {
 public:
  ServingCache(size_t capacity_blocks, const PolicySpec& spec, PolicyContext ctx);

  // Leading blocks of `keys` that are cached and computed: what a KV-event subscriber (an exact
  // router) knows, and what a request admitted now would reuse. No side effects.
  uint32_t computed_prefix(std::span<const BlockKey> keys) const;
  // Whether admitting `prompt` with `private_blocks` more blocks fits, after evicting every
  // unpinned block if need be. No side effects.
  bool fits(std::span<const BlockKey> prompt, size_t private_blocks) const;
  // Admits a request (fits() must hold): one request cycle in which each prompt block is found
  // (told as reused) or inserted (evicting as needed), and pinned; the blocks of `path` (cleared
  // first) are the prompt's nodes, and private_blocks are reserved. Returns the computed prefix
  // in blocks, found before anything changed.
  uint32_t admit(const RequestView& prompt, size_t private_blocks, std::vector<NodeId>& path);
  // Marks path[0..blocks) computed (a prefill passed them) at `now`: later requests reuse them
  // (with write-through, they are written down then).
  void mark_computed(std::span<const NodeId> path, uint32_t blocks, Time now);
  // Reserves one more private block, evicting if need be; false if every block is pinned.
  bool grow(Time now);
  // A preempted request: its nodes are unpinned (they stay cached) and its private blocks freed,
  // at `now` (the policy hears on_time(now) first: hints' durations start at the release).
  void release(std::span<const NodeId> path, size_t private_blocks, Time now);
  // A completed request: one request cycle over `sequence` (prompt and answer blocks) in which
  // the blocks after `path` are inserted from the request's private blocks (or, when another
  // request cached the same block meanwhile, that one is reused and the private block freed),
  // then every node is unpinned, at r.time (the completion: hints' durations start then). Frees
  // private blocks beyond what the sequence needs.
  void complete(const RequestView& sequence, std::vector<NodeId>& path, size_t private_blocks);

  // Chunked allocation (docs/serve.md, "Allocation"): the policy hears a prompt in one request
  // cycle at admission, as with admit(), but its blocks take memory only as the prefill reaches
  // them. A block placed and not yet reached is *unallocated*: a tree node without KV, pinned by
  // the requests holding it, taking no memory; it is dropped (Removal::kDropped) when its last
  // holder releases it.
  //
  // Whether admit_chunked(prompt, allocate, private_blocks) fits: the first `allocate` prompt
  // blocks (and the private blocks) need memory, after evicting every unpinned block if need
  // be. No side effects.
  bool fits_chunked(std::span<const BlockKey> prompt, uint32_t allocate,
                    size_t private_blocks) const;
  // admit() whose blocks from `allocate` on are placed unallocated (fits_chunked must hold).
  // With allocate = the prompt's length it makes exactly admit()'s calls.
  uint32_t admit_chunked(const RequestView& prompt, uint32_t allocate, size_t private_blocks,
                         std::vector<NodeId>& path);
  // Unallocated blocks among path[0..upto).
  size_t unallocated(std::span<const NodeId> path, uint32_t upto) const;
  // Gives path[0..upto) memory, evicting as needed (reclaimable() must cover unallocated()).
  void allocate(std::span<const NodeId> path, uint32_t upto, Time now);
  // Blocks that free memory and eviction could provide now.
  size_t reclaimable() const { return free_blocks() + (tree_->size() - driver_->pinned()); }

  size_t capacity() const { return capacity_; }
  size_t cached_blocks() const { return tree_->size() - unallocated_; }
  size_t private_blocks() const { return private_; }
  size_t pinned_blocks() const { return driver_->pinned(); }
  size_t free_blocks() const { return capacity_ - (tree_->size() - unallocated_) - private_; }
  uint64_t evictions() const { return evictions_; }
  const PrefixTree& tree() const { return *tree_; }
  Policy& policy() { return *policy_; }
  // Checks every victim (tests): an evictable node, named again when asked twice.
  void set_checking(bool on) {
    checking_ = on;
    if (tiers_) tiers_->set_checking(on);
  }

  // Memory tiers (docs/serve.md, "Memory tiers"): with lower tiers, admit() looks past the HBM
  // prefix into them and promotes what it finds, and HBM's victims are handed to them.
  void set_tiers(std::unique_ptr<LowerTiers> tiers);
  LowerTiers* tiers() { return tiers_.get(); }
  const LowerTiers* tiers() const { return tiers_.get(); }
  // Per lower tier, the blocks the last admit() read from it into HBM.
  std::span<const uint32_t> last_tier_hits() const { return last_tier_hits_; }
  // Leading blocks of `keys` an admission now would reuse: computed in HBM, then found in the
  // lower tiers (what admit() returns). No side effects on the cache.
  uint32_t reusable_prefix(std::span<const BlockKey> keys);
  // P/D's decode cache (docs/serve.md): pins the leading computed blocks of `keys` (path, cleared
  // first) so that they stay until a transfer's KV arrives; release(path, 0, now) lets them go. The
  // policy hears nothing (a hold, not an access). Returns their number.
  uint32_t hold_computed_prefix(std::span<const BlockKey> keys, std::vector<NodeId>& path);

 private:
  void pin(NodeId n);
  void unpin(NodeId n);
  void reserve_ids();
  bool evict_one(Time now);
  // Inserts `key` under `parent` (told to the policy as kind), or pins the cached block.
  NodeId place(BlockKey key, NodeId parent, const AccessInfo& info);
  // Admission's placing of a prompt block: place(), evicting first for a block that takes
  // memory now; without memory a new block is left unallocated (admit_chunked).
  NodeId place_prompt_block(BlockKey key, NodeId parent, const AccessInfo& info, bool with_memory,
                            Time now);
  // Reserves an admitted request's private blocks (its fits check holds).
  void reserve_private(size_t blocks, Time now);

  std::unique_ptr<PolicyDriver> driver_;  // the tree, its policy, holds and eviction
  PrefixTree* tree_ = nullptr;            // driver_'s
  Policy* policy_ = nullptr;              // driver_'s
  size_t capacity_;
  size_t private_ = 0;
  std::vector<uint8_t> computed_;          // per node: its KV has been computed
  std::vector<uint8_t> unallocated_node_;  // per node: placed by chunked admission, no memory yet
  size_t unallocated_ = 0;
  uint64_t evictions_ = 0;
  bool checking_ = false;

  // Memory tiers (serving_cache_tiers.cc).
  // With lower tiers: admit(), or admit_chunked() when `allocate` is below the prompt's length.
  uint32_t admit_tiered(const RequestView& r, size_t private_blocks, std::vector<NodeId>& path,
                        uint32_t allocate = UINT32_MAX);
  void demote_victim(const PolicyDriver::Evicted& e, Time now);
  void write_through(NodeId n, Time now);  // at `now`, when HBM computed it
  std::unique_ptr<LowerTiers> tiers_;
  std::vector<uint64_t> last_access_;  // per node: its last access index (a demotion carries it)
  std::array<uint32_t, LowerTiers::kMaxTiers> last_tier_hits_{};
  std::vector<uint8_t> found_;  // the tier of each block past the HBM prefix
  AccessInfo cycle_info_;       // the request cycle under way: a demotion's fields
  bool swap_ = false;           // a hit leaves the first lower tier as its victim enters it
};

}  // namespace kvpolicy
