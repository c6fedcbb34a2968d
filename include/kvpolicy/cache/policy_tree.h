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
  uint64_t requests = 0;   // request cycles, explicit or implicit
  uint64_t hits = 0;       // blocks told as found cached
  uint64_t inserted = 0;   // blocks added
  uint64_t evictions = 0;  // blocks the policy chose and the tree dropped
  uint64_t refused = 0;    // inserts refused because every cached block was pinned
  size_t size = 0;         // cached blocks now
  size_t capacity = 0;
  size_t pinned = 0;  // cached blocks held by a pin or by the open request
};

class PolicyTree {
 public:
  // Builds the policy from its spec (registry name and parameters). Throws ConfigError on an
  // unknown policy, a bad parameter, a policy that reads the future (offline: Belady, oracle
  // predictors), or a capacity of zero.
  PolicyTree(const PolicySpec& spec, size_t capacity_blocks, uint32_t block_tokens = 16,
             uint64_t seed = 1);
  ~PolicyTree();
  PolicyTree(const PolicyTree&) = delete;
  PolicyTree& operator=(const PolicyTree&) = delete;

  // A request cycle groups the calls one request makes, as the policy expects (phases,
  // per-request predictions, end-of-request hooks); the blocks it touches stay pinned until
  // end_request. Calls outside an explicit cycle run each in a cycle of its own.
  void begin_request(const RequestInfo& info = {});
  void end_request();
  bool in_request() const { return open_; }

  bool contains(BlockKey key) const { return tree_->find(key) != kNoNode; }
  // The block was found cached by the current request: told to the policy as reused.
  // Throws Error if it is not cached.
  void hit(BlockKey key);
  // Adds `key` under `parent` (nullopt: a first block). When the cache is full it first evicts
  // the policy's victim if `make_room`, else (an owner that evicts through evict() itself) adds
  // nothing; false when nothing was added (also when every cached block is pinned). A key
  // already cached is a hit. Throws Error if the parent is not cached.
  bool insert(BlockKey key, std::optional<BlockKey> parent, bool make_room = false);
  // Held by a running request: never evicted until unpinned as often as pinned.
  void pin(BlockKey key);
  void unpin(BlockKey key);
  // Evicts up to `n` unpinned leaves in the policy's order; returns their keys, in that order.
  std::vector<BlockKey> evict(size_t n);

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
  void hold(NodeId n);
  void hold_for_request(NodeId n);  // held until end_request
  void release(NodeId n);
  void reserve_ids();
  std::optional<BlockKey> evict_one();  // the key it dropped
  AccessInfo access_info(NodeId n, AccessKind kind);

  std::unique_ptr<PolicyDriver> driver_;  // the tree, its policy, holds and eviction
  PrefixTree* tree_ = nullptr;            // driver_'s
  Policy* policy_ = nullptr;              // driver_'s
  std::string label_;
  size_t capacity_;
  uint32_t block_tokens_;
  std::vector<uint32_t> external_;  // per node: pins by the owner (holds: pins + the request's)

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
