// S3-FIFO's ghost queue (see GhostFifo); internal to src/policy, in a header for its tests.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy::s3fifo {

// The ghost: a FIFO of at most G keys (blocks evicted from small) with lookup-and-remove. Its
// rules, libCacheSim's: adding to a full ghost drops the oldest entry; a taken entry (a ghost
// hit) leaves, freeing its place, so older entries then live longer.
//
// Exact keys would not fit the memory budget, so an entry is a 32-bit fingerprint of the key
// and a 32-bit sequence number (its place in the FIFO). Entries sit in a cuckoo table of
// 64-byte buckets of 8 ways, 70 % full when the ghost is: 11.4 bytes per entry. A key's first
// bucket comes from the other half of the hash its fingerprint comes from, and its second from the
// first and the fingerprint (partial-key cuckoo hashing, an involution so that an entry can move
// between the two without its key), so the fingerprints sharing a bucket are independent of
// it: a lookup compares 16 fingerprints, and a key that is absent is taken for present with
// probability at most 16 / 2^32 whatever the table's size. (Two live keys of one fingerprint
// and bucket pair are one entry to the ghost.) An entry that finds no place after many moves
// waits in a small stash, looked at only while it is not empty.
//
// Order without a queue: entries numbered in [oldest_, next_) are live unless taken, and a bit
// per number (a ring of ring_ bits) marks the taken ones, so dropping the oldest live entry just
// advances oldest_ past taken numbers. A way whose number is below oldest_ is free: a dropped
// entry is never looked for. If many takes stretch the live span over the ring, live entries
// are renumbered 0, 1, ...; and ways are swept every ring_ adds so that no number ages past
// 2^31 (both amortized over many adds).
class GhostFifo {
 public:
  explicit GhostFifo(size_t capacity) : capacity_(capacity) {
    if (capacity_ == 0) return;
    if (capacity_ > (size_t{1} << 28)) throw ConfigError("s3fifo: ghost of over 2^28 keys");
    size_t buckets =
        std::max<size_t>(2, (capacity_ * 100 + kWays * kLoadPercent - 1) / (kWays * kLoadPercent));
    ring_ = std::bit_ceil(static_cast<uint32_t>(capacity_ + capacity_ / 2 + 64));
    taken_.assign(ring_ / 64, 0);
    table_.resize(buckets);
    for (Bucket& k : table_)
      for (int w = 0; w < kWays; ++w) free_way(k, w);
  }

  // Starts loading the buckets take(key) will read (the caller knows its next keys).
  // always_inline: GCC 12 deems a const function that only prefetches pure and drops calls.
  [[gnu::always_inline]] void prefetch(BlockKey key) const {
    if (capacity_ == 0) return;
    Entry e = entry_of(key, 0);
    __builtin_prefetch(&table_[e.bucket[0]]);
    __builtin_prefetch(&table_[e.bucket[1]]);
  }

  // Removes `key` if present and says whether it was. Both buckets are compared at once; the
  // common answer, absent, then costs no branch on their contents.
  [[gnu::always_inline]] bool take(BlockKey key) {
    if (capacity_ == 0) return false;
    Entry want = entry_of(key, 0);
    if (pending_.fp == want.fp && same_key(pending_, want)) [[unlikely]] {
      forget(pending_.seq);
      pending_.fp = 0;
      return true;
    }
    Bucket& first = table_[want.bucket[0]];
    Bucket& second = table_[want.bucket[1]];
    uint32_t in_first = matches(first, want.fp), in_second = matches(second, want.fp);
    if ((in_first | in_second) != 0 && (take_live(first, in_first) || take_live(second, in_second)))
      return true;
    return !stash_.empty() && take_from_stash(want);
  }
  // Appends `key` as the newest entry, dropping the oldest when full. The key must be absent
  // (a block is only evicted while cached, and inserting it took it out of the ghost).
  [[gnu::always_inline]] void add(BlockKey key) {
    if (capacity_ == 0) return;
    if (live_ == capacity_) {  // drop the oldest live entry (the one at oldest_)
      ++oldest_;
      --live_;
      skip_taken();
    }
    if (next_ - oldest_ >= ring_) renumber();
    if (++adds_since_sweep_ >= ring_) sweep();
    uint32_t seq = next_++;
    taken_[(seq & (ring_ - 1)) / 64] &= ~(uint64_t{1} << (seq % 64));
    ++live_;
    // The entry is placed at the next add, its buckets loading meanwhile.
    Entry e = entry_of(key, seq);
    __builtin_prefetch(&table_[e.bucket[0]]);
    __builtin_prefetch(&table_[e.bucket[1]]);
    place_pending();
    pending_ = e;
  }
  size_t size() const { return live_; }
  uint64_t renumbers() const { return renumbers_; }    // test support
  size_t stashed() const { return stash_.size(); }     // test support
  std::array<size_t, 2> buckets(BlockKey key) const {  // test support
    Entry e = entry_of(key, 0);
    return {e.bucket[0], e.bucket[1]};
  }
  size_t memory_bytes() const {
    return table_.capacity() * sizeof(Bucket) + taken_.capacity() * sizeof(uint64_t) +
           stash_.capacity() * sizeof(Entry);
  }

 private:
  static constexpr int kWays = 8;
  static constexpr int kMaxKicks = 500;
  // Full ghost: 70 % of the ways hold live entries. Fuller tables need many more cuckoo moves,
  // each a miss on a bucket nobody fetched ahead (measured at 85 % and 70 %: docs/experiments.md,
  // S3-FIFO).
  static constexpr size_t kLoadPercent = 70;
  // A way without an entry holds fingerprint 0 (never a key's) and a number below oldest_.
  struct alignas(64) Bucket {
    uint32_t fp[kWays];
    uint32_t seq[kWays];
  };
  static_assert(sizeof(Bucket) == 64);
  struct Entry {
    uint32_t fp = 0, seq = 0;  // fp 0: none
    size_t bucket[2] = {0, 0};
  };

  // One multiply of the key, xor-folded so that both halves of the product depend on all its
  // bits: the high half is the fingerprint (nonzero), the low half picks the first bucket.
  Entry entry_of(BlockKey key, uint32_t seq) const {
    uint64_t h = (key ^ (key >> 32)) * 0x9e3779b97f4a7c15ULL;
    uint32_t fp = static_cast<uint32_t>(h >> 32);
    if (fp == 0) fp = 1;
    size_t first = scaled(static_cast<uint32_t>(h));
    return Entry{fp, seq, {first, other_bucket(first, fp)}};
  }
  // (c - b) mod n with c the fingerprint scaled to n: applied twice, it gives b back. Rarely it
  // is b itself, and that entry has one bucket.
  size_t other_bucket(size_t b, uint32_t fp) const {
    size_t c = scaled(fp), n = table_.size();
    return c >= b ? c - b : c + n - b;
  }
  // A uniform 32-bit value mapped onto the buckets by multiply-shift.
  size_t scaled(uint32_t x) const {
    return static_cast<size_t>((uint64_t{x} * table_.size()) >> 32);
  }
  // Numbers in [oldest_, next_) are in the live span; ages are below 2^31 (see sweep).
  bool live(uint32_t seq) const { return next_ - 1 - seq < next_ - oldest_; }
  // Whether e is a live entry of want's key (one fingerprint and bucket pair).
  bool same_key(const Entry& e, const Entry& want) const {
    bool same_buckets = e.bucket[0] == want.bucket[0] || e.bucket[0] == want.bucket[1];
    return e.fp == want.fp && same_buckets && live(e.seq);
  }
  void free_way(Bucket& k, int w) const {
    k.fp[w] = 0;
    k.seq[w] = oldest_ - 1;  // below oldest_: free (see free_ways)
  }
  // Bit w set when way w of bucket k holds fingerprint fp.
  static uint32_t matches(const Bucket& k, uint32_t fp) {
#ifdef __SSE2__
    __m128i f = _mm_set1_epi32(static_cast<int>(fp));
    auto four = [&](const uint32_t* at) {
      __m128i eq = _mm_cmpeq_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(at)), f);
      return static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(eq)));
    };
    return four(k.fp) | four(k.fp + 4) << 4;
#else
    uint32_t r = 0;
    for (int w = 0; w < kWays; ++w) r |= static_cast<uint32_t>(k.fp[w] == fp) << w;
    return r;
#endif
  }
  // Bit w set when way w of bucket k is free: its number is below oldest_, i.e. its age is at
  // least the live span.
  uint32_t free_ways(const Bucket& k) const {
    uint32_t top = next_ - 1, span = next_ - oldest_;
#ifdef __SSE2__
    __m128i t = _mm_set1_epi32(static_cast<int>(top));
    __m128i below = _mm_set1_epi32(static_cast<int>(span) - 1);
    auto four = [&](const uint32_t* at) {
      __m128i age = _mm_sub_epi32(t, _mm_load_si128(reinterpret_cast<const __m128i*>(at)));
      return static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(age, below))));
    };
    return four(k.seq) | four(k.seq + 4) << 4;
#else
    uint32_t r = 0;
    for (int w = 0; w < kWays; ++w) r |= static_cast<uint32_t>(top - k.seq[w] >= span) << w;
    return r;
#endif
  }
  // Takes out live entry number seq (already out of the table): marks it taken.
  void forget(uint32_t seq) {
    taken_[(seq & (ring_ - 1)) / 64] |= uint64_t{1} << (seq % 64);
    --live_;
    skip_taken();
  }
  // Takes the live entry among the ways of k in `ways`, if any.
  bool take_live(Bucket& k, uint32_t ways) {
    for (; ways != 0; ways &= ways - 1) {
      int w = std::countr_zero(ways);
      if (live(k.seq[w])) {
        forget(k.seq[w]);
        free_way(k, w);
        return true;
      }
    }
    return false;
  }
  bool taken(uint32_t seq) const { return taken_[(seq & (ring_ - 1)) / 64] >> (seq % 64) & 1; }
  void skip_taken() {
    while (oldest_ != next_ && taken(oldest_)) ++oldest_;
  }
  [[gnu::noinline]] bool take_from_stash(const Entry& want) {
    for (Entry& e : stash_) {
      if (same_key(e, want)) {
        forget(e.seq);
        e = stash_.back();
        stash_.pop_back();
        return true;
      }
    }
    return false;
  }
  [[gnu::always_inline]] void place_pending() {
    if (pending_.fp != 0 && live(pending_.seq) && !put_free(pending_)) cuckoo(pending_);
    pending_.fp = 0;
  }
  // Puts an entry whose buckets are both full into one of them, moving entries to their other
  // bucket (cuckoo); into the stash if that fails.
  [[gnu::noinline, gnu::cold]] void cuckoo(Entry e) {
    // A rotating choice of way and first bucket keeps this deterministic.
    size_t b = e.bucket[rotor_ & 1];
    for (int kick = 0; kick < kMaxKicks; ++kick) {
      int w = static_cast<int>(rotor_++ % kWays);
      Bucket& k = table_[b];
      Entry out{k.fp[w], k.seq[w], {b, other_bucket(b, k.fp[w])}};
      k.fp[w] = e.fp;
      k.seq[w] = e.seq;
      e = out;
      b = e.bucket[1];
      if (put_free(b, e)) return;
    }
    stash_.push_back(e);
  }
  bool put_free(const Entry& e) { return put_free(e.bucket[0], e) || put_free(e.bucket[1], e); }
  bool put_free(size_t b, const Entry& e) {
    Bucket& k = table_[b];
    uint32_t m = free_ways(k);
    if (m == 0) return false;
    int w = std::countr_zero(m);
    k.fp[w] = e.fp;
    k.seq[w] = e.seq;
    return true;
  }
  // Marks the ways of dropped entries free afresh, before their age could pass 2^31, and
  // moves what it can from the stash to the table.
  [[gnu::noinline, gnu::cold]] void sweep() {
    place_pending();
    adds_since_sweep_ = 0;
    for (Bucket& k : table_)
      for (uint32_t m = free_ways(k); m != 0; m &= m - 1) free_way(k, std::countr_zero(m));
    std::erase_if(stash_, [&](const Entry& e) { return !live(e.seq) || put_free(e); });
  }
  // Numbers live entries 0, 1, ... in order: the span shrinks to the live count.
  [[gnu::noinline, gnu::cold]] void renumber() {
    place_pending();
    ++renumbers_;
    uint32_t span = next_ - oldest_;
    std::vector<uint32_t> before(span / 64 + 2, 0);  // taken numbers below each word
    for (uint32_t s = 0, c = 0; s < span; ++s) {
      if (s % 64 == 0) before[s / 64] = c;
      c += taken(oldest_ + s);
    }
    auto renumbered = [&](uint32_t seq) {
      uint32_t off = seq - oldest_, taken_below = before[off / 64];
      for (uint32_t s = off / 64 * 64; s < off; ++s) taken_below += taken(oldest_ + s);
      return off - taken_below;
    };
    for (Bucket& k : table_)
      for (int w = 0; w < kWays; ++w) {
        if (k.fp[w] != 0 && live(k.seq[w])) {
          k.seq[w] = renumbered(k.seq[w]);
        } else {
          k.fp[w] = 0;
          k.seq[w] = ~uint32_t{0};  // below the new oldest_, 0
        }
      }
    std::erase_if(stash_, [&](const Entry& e) { return !live(e.seq); });
    for (Entry& e : stash_) e.seq = renumbered(e.seq);
    std::fill(taken_.begin(), taken_.end(), 0);
    oldest_ = 0;
    next_ = static_cast<uint32_t>(live_);
    adds_since_sweep_ = 0;
  }

  size_t capacity_;
  BlockVector<Bucket> table_;
  std::vector<uint64_t> taken_;  // ring of ring_ bits by sequence number
  std::vector<Entry> stash_;     // entries the table had no place for
  uint32_t ring_ = 64;
  uint32_t next_ = 0, oldest_ = 0;  // next sequence number; every one below oldest_ is gone
  size_t live_ = 0;
  uint32_t adds_since_sweep_ = 0;
  uint64_t rotor_ = 0;
  uint64_t renumbers_ = 0;
  Entry pending_;  // added, not yet placed
};

}  // namespace kvpolicy::s3fifo
