// The router's approximate prefix tree (SGLang router's radix tree, LBGR's global cache
// tracker, Dynamo's ApproxKvIndexer): what each worker was sent, not what it really holds.
// Shared by cache_aware, lbgr and dynamo:events=approx.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "key_index.h"
#include "kvpolicy/core/types.h"
#include "kvpolicy/route/router.h"

namespace kvpolicy {

// Nodes are block keys (chained: equal key = equal prefix), each with the set of workers that
// hold it. Each worker's nodes form a prefix-closed set, kept in one list per worker ordered
// by last touch, and within one touch deepest first: so the list's front is always a leaf of
// that worker, the one LRU (and the TTL) removes first. O(prompt blocks) per insert and match,
// O(1) per removed entry.
class ApproxTree {
 public:
  static constexpr uint32_t kMaxWorkers = 64;  // a node's holders are a 64-bit mask

  // A worker keeps at most max_tokens_per_worker tokens (blocks x block_tokens); with a ttl,
  // what it has not been sent for longer than ttl is dropped. Throws ConfigError beyond
  // kMaxWorkers.
  ApproxTree(uint32_t workers, uint32_t block_tokens, uint64_t max_tokens_per_worker,
             Time ttl = kNever);

  // out[w] = how many leading blocks of `blocks` worker w holds, as of `now`.
  void match(std::span<const BlockKey> blocks, Time now, std::vector<uint32_t>& out);
  // Worker w was sent this prompt at `now`: it holds every block of it, all touched now; then
  // its least recently touched leaves go while it is over its size limit.
  void insert(WorkerId w, std::span<const BlockKey> blocks, Time now);

  uint64_t tokens(WorkerId w) const { return lists_[w].blocks * block_tokens_; }
  uint64_t blocks(WorkerId w) const { return lists_[w].blocks; }
  size_t nodes() const { return index_.size(); }
  // "" if the lists, the holder masks and the sizes agree; otherwise what is broken (tests).
  std::string check_invariants() const;

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  struct Node {
    BlockKey key = 0;
    uint64_t holders = 0;
    uint32_t first_entry = kNil;  // chain of its holders' entries
  };
  // One (node, worker) holding: a link in the worker's LRU list and in the node's chain.
  struct Entry {
    uint32_t node = kNil, worker = 0;
    uint32_t prev = kNil, next = kNil, next_in_node = kNil;
    Time touched = 0;
    BlockKey key = 0;  // its node's, so that removing entries in a row can prefetch ahead
  };
  struct WorkerList {
    uint32_t head = kNil, tail = kNil;  // head = least recently touched
    uint64_t blocks = 0;
  };

  void expire(Time now);
  uint32_t find_entry(const Node& node, WorkerId w) const;
  void unlink(uint32_t e);
  void append(uint32_t e);
  void remove_front(WorkerId w);          // drops w's least recently touched leaf
  void prefetch_front(WorkerId w) const;  // what remove_front(w) will read

  uint32_t block_tokens_;
  uint64_t max_tokens_;
  Time ttl_;
  Time last_now_ = 0;  // touches are clamped to be nondecreasing, which keeps lists ordered
  std::vector<WorkerList> lists_;
  std::vector<Node> nodes_;
  std::vector<Entry> entries_;
  std::vector<uint32_t> free_nodes_, free_entries_;
  KeyIndex index_;  // key -> node
};

}  // namespace kvpolicy
