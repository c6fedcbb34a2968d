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
// hold it. Each worker's nodes form a prefix-closed set, kept in one order per worker by last
// touch, and within one touch deepest first: so its front is always a leaf of that worker, the
// one LRU (and the TTL) removes first. The order is a log of touches per worker: a touch appends
// a record and marks the holding's previous record dead, so that removals read the log in
// memory order and can fetch the next records' nodes ahead (a linked list's walk was a cache
// miss per removal, docs/results/bench.md); the log is compacted when dead records are most of
// it. O(prompt blocks) per insert and match, O(1) amortized per removed entry.
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
  // Records in w's log, live and dead (tests: the log stays within a constant of its blocks).
  size_t log_records(WorkerId w) const { return lists_[w].log.size(); }
  // "" if the logs, the holder masks and the sizes agree; otherwise what is broken (tests).
  std::string check_invariants() const;

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  struct Node {  // 16 bytes, four to a cache line: its key is in its records and index slot
    uint64_t holders = 0;
    uint32_t first_entry = kNil;  // chain of its holders' entries
  };
  // One (node, worker) holding: a link in the node's chain, and where its live record is.
  struct Entry {
    uint32_t node = kNil, worker = 0;
    uint32_t next_in_node = kNil;
    uint32_t record = 0;  // its live record's sequence number in its worker's log
  };
  // One touch of a holding; dead (entry == kNil) once the holding is touched again or removed.
  struct Record {
    uint32_t entry = kNil, node = kNil;
    BlockKey key = 0;  // its node's: removals find the index slot from it
    Time touched = 0;
  };
  struct WorkerList {
    std::vector<Record> log;  // [head, size) in touch order; before head: removed
    size_t head = 0;          // the front live record, or log.size()
    uint32_t base = 0;        // log[i]'s sequence number is base + i (mod 2^32)
    uint64_t blocks = 0;      // live records
    size_t dead = 0;          // dead records in [head, size)
  };

  void expire(Time now);
  uint32_t find_entry(const Node& node, WorkerId w) const;
  // A new live record of entry e (of node n, key `key`) at the end of w's log.
  void append(WorkerId w, uint32_t e, uint32_t n, BlockKey key, Time now);
  void compact(WorkerId w);       // drops w's removed records, and its dead ones if many
  void skip_dead(WorkerId w);     // moves w's head to its first live record
  void remove_front(WorkerId w);  // drops w's least recently touched leaf
  void shrink(WorkerId w);        // remove_front while w is over its size limit
  // Starts the loads that inserting `keys` for w will wait on (see insert).
  void prefetch_insert(WorkerId w, std::span<const BlockKey> keys);

  uint32_t block_tokens_;
  uint64_t max_tokens_;
  Time ttl_;
  Time last_now_ = 0;  // touches are clamped to be nondecreasing, which keeps logs ordered
  std::vector<WorkerList> lists_;
  std::vector<Node> nodes_;
  std::vector<Entry> entries_;
  std::vector<uint32_t> free_nodes_, free_entries_;
  std::vector<uint32_t> ahead_;  // prefetch_insert's scratch
  KeyIndex index_;               // key -> node
};

}  // namespace kvpolicy
