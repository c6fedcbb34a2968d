// PolicyTree: a prefix tree of blocks whose evictions a kvpolicy policy decides, driven call by
// call by its owner: an engine's radix cache that mirrors its nodes here (a node id is the block
// key), or KvCache (kv_cache.h), which drives it from token sequences. It turns the owner's
// events (hit, insert, pin, unpin, evict) into the policy contract's sequence (policy.h), so any
// online policy of the registry runs outside the simulator with the decisions it makes in replay.
//
// Not thread-safe: one PolicyTree is used by one thread at a time (an engine's scheduler thread);
// distinct instances share nothing and may run on different threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/cache/held_blocks.h"
#include "kvpolicy/cache/policy_driver.h"
#include "kvpolicy/core/access.h"
#include "kvpolicy/core/tree.h"
#include "kvpolicy/policy/policy.h"

namespace kvpolicy {

// What a policy may know of the request behind a group of calls (RequestView's fields); all
// optional. Time is microseconds on the owner's clock and must not go backwards.
struct RequestInfo {
  std::optional<Time> time = std::nullopt;  // unset: the previous request's time
  SessionId session = kNoSession;
  uint32_t turn = 1;
  CategoryId category = 0;
  uint32_t prompt_tokens = 0;  // 0: the prompt's blocks x block_tokens
  uint32_t output_tokens = 0;
  float continuation = -1;  // P(the conversation goes on), for LPC; < 0 = unknown
  int32_t priority = 0;     // higher = kept longer, for the `priority` policy (SGLang, TRT-LLM)
  // The request's prompt as block keys when known up front (learned policies predict per request).
  std::vector<BlockKey> blocks = {};
};

struct PolicyTreeStats {
  uint64_t requests = 0;    // request cycles, explicit or implicit
  uint64_t hits = 0;        // blocks told as found cached
  uint64_t inserted = 0;    // blocks added
  uint64_t duplicates = 0;  // inserts of a block already cached (no event, not a hit)
  uint64_t evictions = 0;   // blocks the policy chose and the tree dropped (or, with victims(),
                            // took out of its order)
  uint64_t removed = 0;     // blocks the owner removed (remove(): not the policy's choice)
  uint64_t refused = 0;     // inserts refused because every cached block was pinned
  size_t size = 0;          // cached blocks now, pending ones included
  size_t capacity = 0;
  size_t pinned = 0;   // cached blocks held by a pin, the open request or a pending eviction
  size_t pending = 0;  // victims() named and not yet committed or cancelled
};

// How the owner's blocks relate. kPrefix: a radix tree, a block under its parent, leaves
// evicted first. kFlat: every block stands alone (parents are ignored), so any unpinned block
// may be evicted: an offload tier (vLLM's CPU tier, LMCache) whose blocks are independent.
enum class TreeShape : uint8_t { kPrefix, kFlat };

// What insert() did. kCached: the block was already there; nothing is told to the policy (a
// duplicate report is not a hit).
enum class Inserted : uint8_t { kRefused = 0, kAdded = 1, kCached = 2 };

// evict()'s options for an owner that must protect blocks or have all or nothing.
struct EvictOptions {
  // Never evicted by this call (nor their ancestors); keys not cached are ignored. They are held
  // for the call's length (the policy hears on_unevictable and on_evictable, as for a pin).
  std::span<const BlockKey> exclude = {};
  // Fewer than n evictable (evictable(exclude)): evict nothing, change nothing, return {}.
  bool all_or_nothing = false;
};

class PolicyTree {
 public:
  // Builds the policy from its spec (registry name and parameters). Throws ConfigError on an
  // unknown policy, a bad parameter, a policy that reads the future (offline: Belady, oracle
  // predictors), or a capacity of zero.
  PolicyTree(const PolicySpec& spec, size_t capacity_blocks, uint32_t block_tokens = 16,
             uint64_t seed = 1, TreeShape shape = TreeShape::kPrefix);
  ~PolicyTree();
  PolicyTree(const PolicyTree&) = delete;
  PolicyTree& operator=(const PolicyTree&) = delete;

  // A request cycle groups the calls one request makes, as the policy expects (phases,
  // per-request predictions, end-of-request hooks); the blocks it touches stay pinned until
  // end_request. Calls outside an explicit cycle run each in a cycle of its own.
  void begin_request(const RequestInfo& info = {});
  void end_request();
  bool in_request() const { return open_; }
  TreeShape shape() const { return shape_; }

  // Cached and not pending (victims() named it and it awaits commit or cancel).
  bool contains(BlockKey key) const {
    NodeId n = tree_->find(key);
    return n != kNoNode && !pending_[n];
  }
  // The block was found cached by the current request: told to the policy as reused.
  // Throws Error if it is not cached.
  void hit(BlockKey key);
  // Adds `key` under `parent` (nullopt: a first block; ignored when flat). When the cache is
  // full it first evicts the policy's victim if `make_room`, else (an owner that evicts through
  // evict() itself) adds nothing: kRefused (also when every cached block is pinned). A key
  // already cached is kCached: no event, not a hit; an open request holds it. A pending key is
  // cancelled (the owner has it after all). Throws Error if the parent is not cached.
  Inserted insert(BlockKey key, std::optional<BlockKey> parent, bool make_room = false);
  // insert() of keys[0] under `parent` and each next key under the one before (flat: each
  // alone), in one request cycle; stops at the first refused. Returns how many keys, from the
  // front, are cached after the call.
  size_t insert_chain(std::span<const BlockKey> keys, std::optional<BlockKey> parent,
                      bool make_room = false);
  // Held by a running request: never evicted until unpinned as often as pinned.
  void pin(BlockKey key);
  void unpin(BlockKey key);
  // hit(), pin(), unpin() for each key, in order; with `ignore_missing` keys not cached (or
  // pending) are skipped instead of throwing. Return how many were cached.
  size_t hits(std::span<const BlockKey> keys, bool ignore_missing = false);
  size_t pins(std::span<const BlockKey> keys, bool ignore_missing = false);
  size_t unpins(std::span<const BlockKey> keys, bool ignore_missing = false);

  // The owner dropped `key` (a failed store, an outside deletion): it and its descendants
  // leave, each told to the policy as Removal::kDropped (no victim, no ghost); their pins and
  // the open request's holds on them go too. Returns the keys removed, descendants first.
  // Throws Error if it is not cached. A pending key is committed.
  std::vector<BlockKey> remove(BlockKey key);
  // remove() for each key; `ignore_missing` skips keys not cached. Returns blocks removed.
  size_t remove_all(std::span<const BlockKey> keys, bool ignore_missing = false);

  // Evicts up to `n` unpinned leaves in the policy's order; returns their keys, in that order.
  std::vector<BlockKey> evict(size_t n, const EvictOptions& options = {});
  // How many blocks evict(n, {exclude}) could free now: those with no pinned, pending or
  // excluded block at or below them. O(|exclude|) when flat, O(cached blocks) as a prefix tree.
  size_t evictable(std::span<const BlockKey> exclude = {}) const;
  // Two-phase eviction, for owners that confirm deletions later: up to n victims in the
  // policy's order (excluded keys spared), each told to the policy as evicted but kept cached
  // and pinned as pending, so they cannot be named twice. Their parents become candidates only
  // at commit, so as a prefix tree a call names at most the current leaves.
  std::vector<BlockKey> victims(size_t n, std::span<const BlockKey> exclude = {});
  // Pending keys the owner deleted leave the tree; others are ignored. Returns how many left.
  size_t commit(std::span<const BlockKey> keys);
  // Pending keys the owner kept go back, told to the policy as newly inserted (what it knew of
  // them is lost). Others are ignored. Returns how many went back.
  size_t cancel(std::span<const BlockKey> keys);
  // Drops every block and starts the policy afresh (an engine's cache reset); counters stay.
  // Throws Error while a request is open.
  void clear();

  size_t size() const { return tree_->size(); }
  size_t capacity() const { return capacity_; }
  uint32_t block_tokens() const { return block_tokens_; }
  PolicyTreeStats stats() const;
  // The policy's own counters (Policy::stats()).
  PolicyStats policy_stats() const { return policy_->stats(); }
  const PrefixTree& tree() const { return *tree_; }
  const std::string& policy_label() const { return label_; }
  // Entries the held-blocks bookkeeping wrote, looked up or released so far (HeldBlocks).
  uint64_t held_steps() const { return held_.steps(); }

 private:
  NodeId require(BlockKey key, const char* what) const;
  NodeId find_live(BlockKey key) const;  // cached and not pending, else kNoNode
  void build();                          // the driver, for the constructor and clear()
  void drop_subtree(NodeId n, std::vector<BlockKey>& gone);
  void forget_request_holds(NodeId n);  // the open request's holds and path entries of n
  void hold_excluded(std::span<const BlockKey> exclude, std::vector<NodeId>& held);
  void release_all(const std::vector<NodeId>& held);
  void hold(NodeId n);
  void hold_for_request(NodeId n);  // held until end_request
  void release(NodeId n);
  void reserve_ids();
  std::optional<BlockKey> evict_one();  // the key it dropped
  AccessInfo access_info(NodeId n, AccessKind kind);

  PolicySpec spec_;
  uint64_t seed_;
  TreeShape shape_;
  std::unique_ptr<PolicyDriver> driver_;  // the tree, its policy, holds and eviction
  PrefixTree* tree_ = nullptr;            // driver_'s
  Policy* policy_ = nullptr;              // driver_'s
  std::string label_;
  size_t capacity_;
  uint32_t block_tokens_;
  std::vector<uint32_t> external_;  // per node: pins by the owner (holds: pins + the request's)
  std::vector<uint8_t> pending_;    // per node: named by victims(), not yet committed
  size_t pending_count_ = 0;

  // The open request cycle.
  bool open_ = false;
  RequestView view_;
  RequestInfo info_;
  std::vector<NodeId> path_;  // blocks it accessed, in order
  HeldBlocks held_;           // blocks it holds (path_ and parents it inserted under)
  Time now_ = 0;
  uint64_t next_access_ = 0;
  PolicyTreeStats counts_;

  friend class ImplicitRequest;
};

}  // namespace kvpolicy
