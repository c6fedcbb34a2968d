// Shared machinery of the learned policies LARU, FPB and HF (ALGORITHMS.md section 2): the
// recency-ordered treap of evictable leaves holding each block's predicted next access P, the
// predictor plumbing, and their common parameters. Internal to src/policy.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/error.h"
#include "kvpolicy/order/indexed_heap.h"
#include "kvpolicy/order/os_treap.h"
#include "kvpolicy/policy.h"
#include "kvpolicy/predictor.h"

namespace kvpolicy::learned {

inline std::vector<ParamSpec> common_params() { return predictor_param_specs(); }

inline std::vector<ParamSpec> with(std::vector<ParamSpec> a, std::vector<ParamSpec> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// LARU's E: a set of block keys cleared once per phase, with an insert on nearly every
// eviction and a lookup on every miss. A phase can evict far more blocks than the cache holds,
// so the exact set (open addressing; a 4-byte tag per slot, generation in the low byte, and the
// full key) outgrows the caches. A blocked Bloom filter (8 bits per key, 3 bits in one word)
// sits in front: lookups that it rejects, nearly all when predictions are good, never touch the
// table, and inserts are buffered and applied in batches, whose cache misses overlap. Clearing
// bumps the generation (the table) and wipes the filter, which is resized to the last phase.
class GenerationKeySet {
 public:
  GenerationKeySet() {
    rehash(64);
    bloom_.assign(64, 0);
  }
  void clear() {
    if (++gen_ == 256) {  // the byte wrapped: really empty the table
      std::fill(tags_.begin(), tags_.end(), 0);
      gen_ = 1;
    }
    buffer_.clear();
    size_t words = bloom_words(size_);
    if (words < bloom_.size() / 4) bloom_.resize(words);  // shrink after a long phase
    std::fill(bloom_.begin(), bloom_.end(), 0);
    size_ = table_size_ = 0;
  }
  bool contains(BlockKey k) {
    uint64_t h = mix64(k);
    if ((bloom_[bloom_index(h)] & bloom_bits(h)) != bloom_bits(h)) return false;
    apply_buffer();
    return table_contains(k, h);
  }
  void insert(BlockKey k) {
    uint64_t h = mix64(k);
    if (bloom_words(size_ + 1) > bloom_.size()) grow_bloom();
    bloom_[bloom_index(h)] |= bloom_bits(h);
    buffer_.push_back(k);
    ++size_;  // may count a key twice until the buffer is applied; only sizes depend on it
    if (buffer_.size() >= 64) apply_buffer();
  }
  size_t memory_bytes() const {
    return tags_.capacity() * (sizeof(uint32_t) + sizeof(BlockKey)) + bloom_.capacity() * 8;
  }

 private:
  static size_t bloom_words(size_t keys) { return std::bit_ceil(std::max<size_t>(64, keys / 8)); }
  size_t bloom_index(uint64_t h) const { return h & (bloom_.size() - 1); }
  static uint64_t bloom_bits(uint64_t h) {
    return (uint64_t{1} << ((h >> 40) & 63)) | (uint64_t{1} << ((h >> 46) & 63)) |
           (uint64_t{1} << ((h >> 52) & 63));
  }
  void grow_bloom() {
    apply_buffer();
    bloom_.assign(bloom_.size() * 2, 0);
    for (size_t i = 0; i < tags_.size(); ++i)
      if ((tags_[i] & 0xff) == gen_) {
        uint64_t h = mix64(keys_[i]);
        bloom_[bloom_index(h)] |= bloom_bits(h);
      }
  }
  void apply_buffer() {
    for (BlockKey k : buffer_) table_insert(k, mix64(k));
    buffer_.clear();
  }
  uint32_t tag(uint64_t h) const { return uint32_t(h >> 40) << 8 | gen_; }
  bool table_contains(BlockKey k, uint64_t h) const {
    uint32_t want = tag(h);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      uint32_t t = tags_[i];
      if ((t & 0xff) != gen_) return false;
      if (t == want && keys_[i] == k) return true;
    }
  }
  void table_insert(BlockKey k, uint64_t h) {
    if ((table_size_ + 1) * 2 > tags_.size()) rehash(tags_.size() * 2);
    uint32_t want = tag(h);
    size_t i = h & mask_;
    for (; (tags_[i] & 0xff) == gen_; i = (i + 1) & mask_)
      if (tags_[i] == want && keys_[i] == k) return;
    tags_[i] = want;
    keys_[i] = k;
    ++table_size_;
  }
  void rehash(size_t slots) {
    std::vector<uint32_t> old_tags = std::move(tags_);
    std::vector<BlockKey> old_keys = std::move(keys_);
    uint32_t g = gen_;
    tags_.assign(slots, 0);
    keys_.assign(slots, 0);
    mask_ = slots - 1;
    gen_ = 1;  // fresh table: generation 1, zero = empty
    table_size_ = 0;
    for (size_t i = 0; i < old_tags.size(); ++i)
      if ((old_tags[i] & 0xff) == g) table_insert(old_keys[i], mix64(old_keys[i]));
  }
  std::vector<uint32_t> tags_;
  std::vector<BlockKey> keys_;
  std::vector<uint64_t> bloom_;
  std::vector<BlockKey> buffer_;
  size_t mask_ = 0;
  uint32_t gen_ = 1;
  size_t size_ = 0, table_size_ = 0;
};

// Eviction order among evictable leaves: the larger P first, then the older (smaller recency
// key), the same rule as OsTreap's maxima.
struct Rank {
  Time p;
  uint64_t key;
};
struct RankFirst {
  bool operator()(const Rank& a, const Rank& b) const {
    return a.p != b.p ? a.p > b.p : a.key < b.key;
  }
};

// The part LARU, FPB and HF share. Every block has a recency key in LRU's exact order (a
// request's blocks are newer than everything before it; within a request the deeper block is
// older, as lru.cc places a path deepest-first) and a predicted next access P. Each block is
// predicted once after each access (in one batch per request, at its end) and every cached
// block again when the predictor's model changes; see predictor.h for why this equals
// predicting the candidates at each eviction.
//
// Evictable leaves are indexed two ways, each only when a policy needs it: an indexed heap
// answers "the largest P of all" (FPB, and LARU while lambda = 1) cheaply, and the
// order-statistic treap answers "the largest P among the l oldest" and "the oldest" (HF, and
// LARU once lambda < 1). LARU builds its treap from the heap's members when it first needs it
// in a phase and drops it when lambda returns to 1, so with good predictions it pays heap
// costs only.
class LearnedPolicy : public Policy {
 public:
  enum Index : unsigned { kHeap = 1, kTreap = 2, kLazyTreap = 4 };

  LearnedPolicy(const PolicyContext& ctx, const Params& params, unsigned indexes)
      : tree_(*ctx.tree),
        use_heap_(indexes & kHeap),
        lazy_treap_(indexes & kLazyTreap),
        treap_active_(indexes & kTreap),
        treap_(ctx.seed) {
    PredictorContext pc;
    pc.block_tokens = ctx.block_tokens;
    pc.seed = ctx.seed;
    pc.trace = ctx.trace;
    pc.oracle = ctx.oracle;
    predictor_ = make_predictor(predictor_config(params), pc);
    seen_version_ = predictor_->version();
  }

  void on_request_begin(const RequestView& r) override {
    ++request_seq_;
    blocks_ = r.blocks;
    next_pos_ = 0;
  }

  void on_access(NodeId n, const AccessInfo& info) override {
    grow(n);
    key_[n] = (request_seq_ << 32) | (0xffffffffu - info.position);
    predictor_->on_access(n, info);
    if (!pending_flag_[n]) {
      pending_flag_[n] = 1;
      pending_.push_back(n);
    }
    next_pos_ = info.position + 1;
    note_access(n, info.hit);
  }

  void on_request_end(const RequestView&, std::span<const NodeId>) override { flush(); }

  void on_evictable(NodeId n) override {
    grow(n);
    if (pending_flag_[n]) flush();  // only when driven outside PrefixCache's request cycle
    if (leaf_[n]) return;
    leaf_[n] = 1;
    ++leaves_;
    if (use_heap_) heap_.push(n, Rank{p_[n], key_[n]});
    if (treap_active_) treap_insert(n);
  }
  void on_unevictable(NodeId n) override { leave(n); }
  void on_removed(NodeId n) override {
    leave(n);
    pending_flag_[n] = 0;
    predictor_->on_removed(n);
    note_removed(n);
  }

  size_t memory_bytes() const override {
    return treap_.memory_bytes() + heap_.memory_bytes() +
           key_.capacity() * (sizeof(uint64_t) + sizeof(Time) + 2);
  }

  PolicyStats stats() const override {
    PolicyStats s{{"predictor_calls", double(candidates_scored_)},
                  {"predictor_invocations", double(prediction_decisions_)},
                  {"evictions", double(evictions_)},
                  {"treap_builds", double(treap_builds_)}};
    add_stats(s);
    for (auto& kv : predictor_->stats()) s.push_back(kv);
    return s;
  }

 protected:
  // Key of the block the cache is inserting when it asks for a victim (PrefixCache calls
  // victim() before inserting the missing block at position next_pos_). False outside a request.
  bool incoming(BlockKey* key) const {
    if (next_pos_ >= blocks_.size()) return false;
    *key = blocks_[next_pos_];
    return true;
  }
  // The victim with the largest P among the l least recently used evictable leaves. Counts
  // l predictions requested: what the paper's sync mode would ask its predictor for.
  NodeId choose(size_t l) {
    if (predictor_->version() != seen_version_) flush();  // a new model: re-predict all
    ++prediction_decisions_;
    candidates_scored_ += std::min(l, leaves_);
    if (l >= leaves_ && use_heap_) return heap_.top();
    ensure_treap();
    return treap_.max_among_oldest(l);
  }
  NodeId lru() {
    ensure_treap();
    return treap_.oldest();
  }
  size_t evictable() const { return leaves_; }
  void count_eviction() { ++evictions_; }
  // LARU: lambda is back to 1, so the treap is not needed until it drops again.
  void release_treap() {
    if (lazy_treap_) treap_active_ = false;
  }

  virtual void note_access(NodeId, bool /*hit*/) {}
  virtual void note_removed(NodeId) {}
  virtual void add_stats(PolicyStats&) const {}

  const PrefixTree& tree_;

 private:
  void grow(NodeId n) {
    if (n < leaf_.size()) return;
    size_t ids = std::max<size_t>(tree_.id_limit(), size_t{n} + 1);
    leaf_.resize(ids, 0);
    pending_flag_.resize(ids, 0);
    key_.resize(ids, 0);
    p_.resize(ids, 0);
    if (use_heap_) heap_.resize(ids);
    if (treap_active_ || lazy_treap_) treap_.resize(ids);
  }

  void leave(NodeId n) {
    if (!leaf_[n]) return;
    leaf_[n] = 0;
    --leaves_;
    if (use_heap_) heap_.erase(n);
    if (treap_active_) treap_.erase(n);
  }

  void treap_insert(NodeId n) {
    treap_.set_key(n, key_[n]);
    treap_.set_p(n, p_[n]);
    treap_.insert(n);
  }

  // Builds the treap from the heap's members (LARU's lazy treap).
  void ensure_treap() {
    if (treap_active_) return;
    treap_.clear();
    heap_.for_each([&](NodeId n, const Rank&) { treap_insert(n); });
    treap_active_ = true;
    ++treap_builds_;
  }

  void set_p(NodeId n, Time p) {
    p_[n] = p;
    if (!leaf_[n]) return;
    if (use_heap_) heap_.set(n, Rank{p, key_[n]});
    if (treap_active_) treap_.set_p(n, p);
  }

  // Predicts the blocks accessed since the last flush, or every cached block after a model
  // change.
  void flush() {
    uint64_t v = predictor_->version();
    if (v != seen_version_) {
      seen_version_ = v;
      batch_.clear();
      for (NodeId n = 0; n < tree_.id_limit(); ++n)
        if (tree_.contains(n)) batch_.push_back(n);
    } else {
      if (pending_.empty()) return;
      batch_.clear();
      for (NodeId n : pending_)
        if (pending_flag_[n]) batch_.push_back(n);
    }
    for (NodeId n : pending_) pending_flag_[n] = 0;
    pending_.clear();
    out_.resize(batch_.size());
    predictor_->predict(batch_, out_);
    for (size_t i = 0; i < batch_.size(); ++i) set_p(batch_[i], out_[i]);
  }

  bool use_heap_, lazy_treap_, treap_active_;
  OsTreap treap_;
  IndexedHeap<Rank, RankFirst> heap_;
  std::vector<uint64_t> key_;  // recency
  std::vector<Time> p_;        // predicted next access
  std::vector<uint8_t> leaf_;  // evictable leaf (in the indexes)
  size_t leaves_ = 0;
  std::unique_ptr<NextAccessPredictor> predictor_;
  uint64_t seen_version_ = 0;
  uint64_t request_seq_ = 0;
  std::span<const BlockKey> blocks_;
  size_t next_pos_ = 0;
  std::vector<uint8_t> pending_flag_;
  std::vector<NodeId> pending_, batch_;
  std::vector<Time> out_;
  uint64_t candidates_scored_ = 0, prediction_decisions_ = 0, evictions_ = 0, treap_builds_ = 0;
};

}  // namespace kvpolicy::learned
