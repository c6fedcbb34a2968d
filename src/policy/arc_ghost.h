// ARC's ghost lists B1 and B2 (see arc.cc); internal to src/policy, in a header for its tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <utility>

#include "kvpolicy/core/types.h"

namespace kvpolicy::arc {

// An LRU list of block keys (no blocks: what was evicted), exact: lookup, removal of any key,
// and removal of the oldest. A removed key leaves a stale entry in the queue, skipped when it
// reaches the front; the queue is compacted when stale entries outnumber live ones.
class GhostList {
 public:
  bool contains(BlockKey k) const { return seq_of_.count(k) != 0; }
  size_t size() const { return seq_of_.size(); }
  bool empty() const { return seq_of_.empty(); }
  // Adds k as the newest; k must be absent.
  void push(BlockKey k) {
    seq_of_.emplace(k, next_);
    queue_.emplace_back(k, next_++);
  }
  // Removes k if present; says whether it was.
  bool erase(BlockKey k) {
    if (seq_of_.erase(k) == 0) return false;
    if (queue_.size() > 2 * seq_of_.size() + 64) compact();
    return true;
  }
  // Removes the oldest key; the list must not be empty.
  void pop_oldest() {
    for (;;) {
      auto [k, seq] = queue_.front();
      queue_.pop_front();
      auto it = seq_of_.find(k);
      if (it != seq_of_.end() && it->second == seq) {
        seq_of_.erase(it);
        return;
      }
    }
  }
  void clear() {
    seq_of_.clear();
    queue_.clear();
  }
  size_t memory_bytes() const {
    // Node-based map: a node of key, value and link per entry, plus a bucket pointer.
    return seq_of_.size() * (sizeof(BlockKey) + sizeof(uint64_t) + 2 * sizeof(void*)) +
           seq_of_.bucket_count() * sizeof(void*) + queue_.size() * sizeof(queue_.front());
  }

 private:
  void compact() {
    std::deque<std::pair<BlockKey, uint64_t>> live;
    for (auto& e : queue_) {
      auto it = seq_of_.find(e.first);
      if (it != seq_of_.end() && it->second == e.second) live.push_back(e);
    }
    queue_.swap(live);
  }
  std::unordered_map<BlockKey, uint64_t> seq_of_;  // live key -> its entry's number
  std::deque<std::pair<BlockKey, uint64_t>> queue_;
  uint64_t next_ = 0;
};

}  // namespace kvpolicy::arc
