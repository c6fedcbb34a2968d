// S3-FIFO: a small probationary FIFO, a main FIFO run as a 2-bit clock, and a ghost FIFO of
// recently evicted keys; evicts unpromoted blocks from small, cold blocks from main.
// Source: Yang et al., "FIFO queues are all you need for cache eviction", SOSP'23; rules as in
// libCacheSim's S3FIFO.c. Cost: O(1) per access; amortized O(1) per eviction.
#include <algorithm>
#include <bit>
#include <cmath>

#include "kvpolicy/error.h"
#include "kvpolicy/order/intrusive_list.h"
#include "kvpolicy/policy.h"

namespace kvpolicy {
namespace {

// Two FIFO queues over dense ids sharing one pair of link arrays (a block is in one queue).
class TwoQueues {
 public:
  static constexpr uint8_t kNone = 2;

  void resize(size_t ids) {
    if (ids > prev_.size()) {
      prev_.resize(ids, kNoNode);
      next_.resize(ids, kNoNode);
      which_.resize(ids, kNone);
    }
  }
  uint8_t which(NodeId n) const { return which_[n]; }
  size_t size(int q) const { return size_[q]; }
  NodeId front(int q) const { return head_[q]; }
  void push_back(int q, NodeId n) { link(q, n, tail_[q], kNoNode); }
  void insert_before(NodeId n, NodeId pos) { link(which_[pos], n, prev_[pos], pos); }
  void erase(NodeId n) {
    int q = which_[n];
    NodeId p = prev_[n], x = next_[n];
    (p == kNoNode ? head_[q] : next_[p]) = x;
    (x == kNoNode ? tail_[q] : prev_[x]) = p;
    which_[n] = kNone;
    --size_[q];
  }
  void move_to_back(int q, NodeId n) {
    erase(n);
    push_back(q, n);
  }
  size_t memory_bytes() const { return prev_.capacity() * 9; }

 private:
  void link(int q, NodeId n, NodeId p, NodeId x) {
    prev_[n] = p;
    next_[n] = x;
    (p == kNoNode ? head_[q] : next_[p]) = n;
    (x == kNoNode ? tail_[q] : prev_[x]) = n;
    which_[n] = static_cast<uint8_t>(q);
    ++size_[q];
  }
  std::vector<NodeId> prev_, next_;
  std::vector<uint8_t> which_;
  NodeId head_[2] = {kNoNode, kNoNode}, tail_[2] = {kNoNode, kNoNode};
  size_t size_[2] = {0, 0};
};

// FIFO of at most `capacity` block keys with O(1) lookup and removal; no allocation after
// construction. Every operation lands on a random cache line, so the layout is built to touch
// few of them:
// - entries live in fixed slots (keys_, in FIFO order through order_);
// - a hash table of 64-byte buckets of 8 ways maps keys to slots: a lookup reads one line and
//   compares 32-bit hashes before any key; entries never move, so removal just clears a way; a
//   bucket's `spill_` counts entries that passed it full, and only then do lookups go on;
// - most lookups are misses (a new block that was never in the ghost), and a counting filter of
//   one byte per four entries answers most of them without reading a bucket;
// - a new entry waits in a short pending list while its bucket is prefetched, and the oldest
//   entry's bucket is prefetched before it is dropped.
class GhostFifo {
 public:
  explicit GhostFifo(size_t capacity) : capacity_(capacity) {
    if (capacity_ == 0) return;
    if (capacity_ > (size_t{1} << 28)) throw ConfigError("s3fifo: ghost of over 2^28 keys");
    keys_.resize(capacity_);
    where_.resize(capacity_);
    order_.resize(capacity_);
    free_.reserve(capacity_);
    for (size_t i = capacity_; i-- > 0;) free_.push_back(static_cast<uint32_t>(i));
    // At most half the ways in use (4 of 8 on average): about 2 % of buckets spill.
    size_t buckets = std::max<size_t>(2, (capacity_ * 2 + kWays - 1) / kWays);
    buckets_.resize(buckets);
    spill_.assign(buckets, 0);
    filter_.assign(std::bit_ceil(capacity_ * 4), 0);
  }

  // Removes `key` if present and says whether it was.
  bool take(BlockKey key) {
    if (capacity_ == 0 || filter_[filter_slot(key)] == 0) return false;
    for (uint32_t i = 0; i < pending_size_; ++i) {
      if (keys_[pending_[i]] == key) {
        remove(pending_[i]);
        return true;
      }
    }
    uint32_t tag = hash(key);
    for (size_t b = home(tag);; b = next(b)) {
      const Bucket& k = buckets_[b];
      for (uint32_t m = match(k, tag); m != 0; m &= m - 1) {
        uint32_t id = k.id[std::countr_zero(m)];
        if (id != kEmpty && keys_[id] == key) {
          remove(id);
          return true;
        }
      }
      if (spill_[b] == 0) return false;
    }
  }
  // Appends `key` as the newest entry, dropping the oldest when full. The key must be absent
  // (a block is only evicted while cached, and inserting it took it out of the ghost).
  void add(BlockKey key) {
    if (capacity_ == 0) return;
    if (free_.empty()) remove(order_.front());
    uint32_t id = free_.back();
    free_.pop_back();
    keys_[id] = key;
    order_.push_back(id);
    uint8_t& count = filter_[filter_slot(key)];
    if (count != kSaturated) ++count;
    if (pending_size_ == kPending) {
      place(pending_[0]);
      drop_pending(0);
    }
    __builtin_prefetch(&buckets_[home(hash(key))]);
    where_[id] = kPendingMark;
    pending_[pending_size_++] = id;
    // The next add drops the then-oldest entry: start loading its bucket now.
    if (free_.empty() && where_[order_.front()] != kPendingMark)
      __builtin_prefetch(&buckets_[where_[order_.front()] / kWays]);
  }
  size_t size() const { return capacity_ - free_.size(); }
  size_t memory_bytes() const {
    return keys_.capacity() * 8 + where_.capacity() * 4 + order_.memory_bytes() +
           free_.capacity() * 4 + buckets_.capacity() * sizeof(Bucket) + spill_.capacity() * 4 +
           filter_.capacity();
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  static constexpr uint32_t kPendingMark = UINT32_MAX;  // where_ of a pending entry
  static constexpr int kWays = 8;
  static constexpr uint32_t kPending = 8;
  static constexpr uint8_t kSaturated = 255;  // a saturated count stays: only false positives
  struct alignas(64) Bucket {
    uint32_t tag[kWays] = {};
    uint32_t id[kWays] = {kEmpty, kEmpty, kEmpty, kEmpty, kEmpty, kEmpty, kEmpty, kEmpty};
  };
  static uint32_t hash(BlockKey key) { return (key * 0x9e3779b97f4a7c15ULL) >> 32; }
  size_t home(uint32_t tag) const { return (uint64_t{tag} * buckets_.size()) >> 32; }
  size_t next(size_t b) const { return b + 1 == buckets_.size() ? 0 : b + 1; }
  // Keys are already well mixed, and the buckets use the hash's high bits.
  size_t filter_slot(BlockKey key) const { return key & (filter_.size() - 1); }
  // Bit w set when way w's hash equals `tag` / way w is empty; written to vectorize.
  static uint32_t match(const Bucket& k, uint32_t tag) {
    uint32_t m = 0;
    for (int w = 0; w < kWays; ++w) m |= uint32_t{k.tag[w] == tag} << w;
    return m;
  }
  static uint32_t empty_ways(const Bucket& k) {
    uint32_t m = 0;
    for (int w = 0; w < kWays; ++w) m |= uint32_t{k.id[w] == kEmpty} << w;
    return m;
  }
  // Puts a pending entry into its bucket.
  void place(uint32_t id) {
    uint32_t tag = hash(keys_[id]);
    size_t b = home(tag);
    uint32_t m;
    while ((m = empty_ways(buckets_[b])) == 0) {
      ++spill_[b];
      b = next(b);
    }
    uint32_t w = std::countr_zero(m);
    buckets_[b].tag[w] = tag;
    buckets_[b].id[w] = id;
    where_[id] = static_cast<uint32_t>(b * kWays + w);
  }
  void drop_pending(uint32_t i) {
    for (--pending_size_; i < pending_size_; ++i) pending_[i] = pending_[i + 1];
  }
  // Takes entry `id` out of the table (or the pending list), the filter and the FIFO.
  void remove(uint32_t id) {
    if (where_[id] == kPendingMark) {
      uint32_t i = 0;
      while (pending_[i] != id) ++i;
      drop_pending(i);
    } else {
      size_t b = where_[id] / kWays, w = where_[id] % kWays;
      buckets_[b].id[w] = kEmpty;
      for (size_t h = home(buckets_[b].tag[w]); h != b; h = next(h)) --spill_[h];
    }
    uint8_t& count = filter_[filter_slot(keys_[id])];
    if (count != kSaturated) --count;
    order_.erase(id);
    free_.push_back(id);
  }

  size_t capacity_;
  std::vector<BlockKey> keys_;   // by slot
  std::vector<uint32_t> where_;  // by slot: bucket x kWays + way, or kPendingMark
  IntrusiveList order_;          // slots, oldest first
  std::vector<uint32_t> free_;
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> spill_;
  std::vector<uint8_t> filter_;  // per filter slot, ghost keys that fall on it
  uint32_t pending_[kPending] = {};
  uint32_t pending_size_ = 0;
};

// Applied over evictable leaves: both queues hold every cached block, and a block that is not
// evictable (interior or pinned) when it reaches a queue's head is passed to that queue's tail
// unchanged (frequency kept; it was no candidate), except that a small-queue block that earned
// promotion is promoted whatever its state. A request's new blocks enter deepest-first (each
// just before its parent when both are new), so a prompt's tail leaves before its head.
class S3Fifo final : public Policy {
 public:
  static constexpr int kSmall = 0, kMain = 1;

  S3Fifo(const PolicyContext& ctx, const Params& p)
      : tree_(ctx.tree),
        threshold_(static_cast<int>(p.get_int("move_threshold"))),
        ghost_(ghost_size(ctx, p)) {
    double small = p.get_double("small_ratio");
    if (!(small > 0 && small < 1)) throw ConfigError("s3fifo: small_ratio must be in (0, 1)");
    if (threshold_ < 1 || threshold_ > kMaxFreq)
      throw ConfigError("s3fifo: move_threshold must be in 1..3");
    // libCacheSim floors the small size; a cache of under ten blocks still needs one slot.
    small_cap_ = std::max<size_t>(1, static_cast<size_t>(ctx.capacity_blocks * small));
    main_cap_ = ctx.capacity_blocks > small_cap_ ? ctx.capacity_blocks - small_cap_ : 0;
  }

  void on_request_begin(const RequestView&) override { last_new_ = kNoNode; }
  void on_access(NodeId n, const AccessInfo& info) override {
    if (n >= freq_.size()) {
      freq_.resize(tree_->id_limit(), 0);
      queues_.resize(tree_->id_limit());
    }
    if (info.hit) {
      freq_[n] = static_cast<uint8_t>(std::min(freq_[n] + 1, kMaxFreq));
      return;
    }
    freq_[n] = 0;
    int q = kSmall;
    if (ghost_.take(tree_->key(n))) {
      q = kMain;  // evicted from small recently and back: it earned main directly
    } else if (!has_evicted_ && queues_.size(kSmall) >= small_cap_) {
      q = kMain;  // libCacheSim: fill main too before the first eviction
    }
    // Insert order only: the parent was the previous new block of this request.
    NodeId parent = tree_->parent(n);
    if (parent != kNoNode && parent == last_new_ && queues_.which(parent) == q) {
      queues_.insert_before(n, parent);
    } else {
      queues_.push_back(q, n);
    }
    last_new_ = n;
  }
  void on_evictable(NodeId n) override { ++evictable_[queues_.which(n)]; }
  void on_unevictable(NodeId n) override { --evictable_[queues_.which(n)]; }

  NodeId victim(Time) override {
    if (evictable_[kSmall] + evictable_[kMain] == 0) return kNoNode;
    for (;;) {
      bool main = queues_.size(kMain) > main_cap_ || queues_.size(kSmall) == 0;
      if (evictable_[main ? kMain : kSmall] == 0) main = !main;
      NodeId v = main ? scan_main() : scan_small();
      if (v != kNoNode) return v;  // else small promoted all its evictable blocks: try main
    }
  }
  // Only a victim is evictable when removed; a pinned DRAM block promoted to HBM leaves this
  // tier's policy without being evicted (no ghost entry).
  void on_removed(NodeId n) override {
    int q = queues_.which(n);
    queues_.erase(n);
    if (!tree_->is_evictable(n)) return;
    --evictable_[q];
    if (q == kSmall) ghost_.add(tree_->key(n));
    has_evicted_ = true;
  }
  size_t memory_bytes() const override {
    return freq_.capacity() + queues_.memory_bytes() + ghost_.memory_bytes();
  }

 private:
  static constexpr int kMaxFreq = 3;  // libCacheSim keeps a 2-bit counter in main

  static size_t ghost_size(const PolicyContext& ctx, const Params& p) {
    double ratio = p.get_double("ghost_ratio");
    if (ratio < 0 || ratio > 100) throw ConfigError("s3fifo: ghost_ratio must be in [0, 100]");
    return static_cast<size_t>(std::floor(double(ctx.capacity_blocks) * ratio));
  }

  void move(NodeId n, int to) {
    bool ev = tree_->is_evictable(n);
    if (ev) --evictable_[queues_.which(n)];
    queues_.move_to_back(to, n);
    if (ev) ++evictable_[to];
  }
  // Evicts the first unpromoted evictable block; returns kNoNode once small has no evictable
  // block left (all promoted). Each pass over an entry moves it, so this ends within |small|.
  NodeId scan_small() {
    while (evictable_[kSmall] > 0) {
      NodeId x = queues_.front(kSmall);
      if (freq_[x] >= threshold_) {
        freq_[x] = 0;  // libCacheSim: a promoted object starts afresh in main
        move(x, kMain);
      } else if (!tree_->is_evictable(x)) {
        move(x, kSmall);
      } else {
        return x;
      }
    }
    return kNoNode;
  }
  // Clock over main: reinserts evictable blocks with credit, spending one unit; needs
  // evictable_[kMain] > 0, and then ends within four laps.
  NodeId scan_main() {
    for (;;) {
      NodeId x = queues_.front(kMain);
      if (!tree_->is_evictable(x)) {
        move(x, kMain);
      } else if (freq_[x] > 0) {
        --freq_[x];
        move(x, kMain);
      } else {
        return x;
      }
    }
  }

  const PrefixTree* tree_;
  int threshold_;
  size_t small_cap_ = 1, main_cap_ = 0;
  bool has_evicted_ = false;
  NodeId last_new_ = kNoNode;
  size_t evictable_[2] = {0, 0};
  std::vector<uint8_t> freq_;
  TwoQueues queues_;
  GhostFifo ghost_;
};

PolicyRegistrar registrar({
    .name = "s3fifo",
    .summary = "small FIFO + main clock + ghost FIFO, over evictable leaves",
    .paper = "Yang et al., FIFO queues are all you need for cache eviction, SOSP'23",
    .params = {{"small_ratio", "0.1", "small FIFO's share of the capacity"},
               {"ghost_ratio", "0.9", "ghost FIFO's size as a share of the capacity (keys only)"},
               {"move_threshold", "2", "hits in small needed to be promoted to main (1..3)"}},
    .make = [](const PolicyContext& ctx, const Params& p) -> std::unique_ptr<Policy> {
      return std::make_unique<S3Fifo>(ctx, p);
    },
});

}  // namespace
}  // namespace kvpolicy
