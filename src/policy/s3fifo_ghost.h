// S3-FIFO's ghost queue (see GhostFifo); internal to src/policy, in a header for its tests.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "kvpolicy/error.h"
#include "kvpolicy/huge_pages.h"
#include "kvpolicy/types.h"

namespace kvpolicy::s3fifo {

// The ghost: a FIFO of at most G keys (blocks evicted from small) with lookup-and-remove. Its
// rules, libCacheSim's: adding to a full ghost drops the oldest entry; a taken entry (a ghost
// hit) leaves, freeing its place, so older entries then live longer.
//
// Exact 8-byte keys cannot fit the memory budget (0.9 entries per cached block beside the
// tree's 48 bytes and the queues' 8), so an entry is 7 bytes: a fingerprint of the key and its
// add sequence number modulo 2^seq_bits_. Entries sit in a cuckoo table of 64-byte buckets of
// 9 ways (two candidate buckets, both derived from the fingerprint so that an entry can be
// moved), 90 % full when the ghost is: 7.9 bytes per entry. A lookup checks 18 ways, so a
// false ghost hit has a probability of at most 18 / 2^fp_bits_ per insertion, with
// fp_bits_ = 56 - seq_bits_: 40 bits up to 21 k keys, 36 up to 349 k (1 in 4 billion
// insertions), 34 up to 1.4 M, 26 at the 2^28 maximum.
//
// Order without a queue: entries with sequence numbers in [oldest_, next_) are live unless
// taken, and a bit per sequence number (a ring of span_bits_ bits) marks the taken ones, so
// dropping the oldest live entry just advances oldest_ past taken numbers. A dropped entry is
// not looked for: its age (next_ - 1 - seq) now reaches the live span, so the table treats its
// way as free. Ages are computed modulo 2^seq_bits_, so ways are swept before a dropped
// entry's age could wrap, and if many takes stretch the live span beyond the ring, live entries
// are renumbered (both amortized over many adds).
class GhostFifo {
 public:
  explicit GhostFifo(size_t capacity) : capacity_(capacity) {
    if (capacity_ == 0) return;
    if (capacity_ > (size_t{1} << 28)) throw ConfigError("s3fifo: ghost of over 2^28 keys");
    size_t buckets =
        std::max<size_t>(2, (capacity_ * 100 + kWays * kLoadPercent - 1) / (kWays * kLoadPercent));
    span_bits_ = std::bit_ceil(capacity_ + capacity_ / 2 + 64);
    taken_.assign(span_bits_ / 64, 0);
    seq_bits_ = std::countr_zero(span_bits_) + 1;  // ages up to twice the ring
    seq_mask_ = (uint64_t{1} << seq_bits_) - 1;
    fp_bits_ = 56 - seq_bits_;
    fp_mask_ = kEntryMask & ~seq_mask_;
    table_.resize(buckets);
    clear_table();
  }

  // Starts loading the buckets take(key) will read (the caller knows its next keys).
  // always_inline: GCC 12 deems a const function that only prefetches pure and drops calls.
  [[gnu::always_inline]] void prefetch(BlockKey key) const {
    if (capacity_ == 0) return;
    size_t b[2];
    buckets_of(fingerprint(key), b);
    __builtin_prefetch(&table_[b[0]]);
    __builtin_prefetch(&table_[b[1]]);
  }

  // Removes `key` if present and says whether it was.
  bool take(BlockKey key) {
    if (capacity_ == 0) return false;
    uint64_t fp = fingerprint(key), want = fp << seq_bits_;
    size_t b[2];
    buckets_of(fp, b);
    __builtin_prefetch(&table_[b[1]]);
    // Pending entries first (pending_fps_ says which fingerprints may be among them), then
    // the two buckets, whose candidate ways are checked in full.
    if (pending_fps_ >> (fp % 64) & 1) {
      for (uint64_t& v : pending_) {
        if (((v ^ want) & fp_mask_) == 0 && live(v)) {
          forget(v);
          v = 0;
          return true;
        }
      }
    }
    for (size_t i : b) {
      for (uint32_t m = candidates(i, want); m != 0; m &= m - 1) {
        int w = std::countr_zero(m);
        uint64_t v = get(i, w);
        if (((v ^ want) & fp_mask_) == 0 && live(v)) {
          forget(v);
          put(i, w, no_entry());
          return true;
        }
      }
    }
    return false;
  }
  // Appends `key` as the newest entry, dropping the oldest when full. The key must be absent
  // (a block is only evicted while cached, and inserting it took it out of the ghost).
  void add(BlockKey key) {
    if (capacity_ == 0) return;
    if (live_ == capacity_) {  // drop the oldest live entry (the one at oldest_)
      ++oldest_;
      --live_;
      skip_taken();
    }
    if (next_ + 1 - oldest_ > span_bits_) renumber();
    if (++adds_since_sweep_ >= span_bits_ / 2) sweep();
    uint64_t seq = next_++;
    taken_[(seq & (span_bits_ - 1)) / 64] &= ~(uint64_t{1} << (seq % 64));
    ++live_;
    // The entry waits kPending adds before it is placed (in the slot of sequence number
    // seq - kPending, whose entry is placed now), its buckets loading meanwhile.
    uint64_t fp = fingerprint(key);
    size_t b[2];
    buckets_of(fp, b);
    __builtin_prefetch(&table_[b[0]]);
    __builtin_prefetch(&table_[b[1]]);
    uint64_t& slot = pending_[seq % kPending];
    if (live(slot)) place(slot);
    slot = fp << seq_bits_ | (seq & seq_mask_);
    if (seq % kPending == 0) {  // forget the bits of entries placed since the last time
      pending_fps_ = 0;
      for (uint64_t v : pending_) pending_fps_ |= uint64_t{1} << ((v >> seq_bits_) % 64);
    }
    pending_fps_ |= uint64_t{1} << (fp % 64);
  }
  size_t size() const { return live_; }
  uint64_t renumbers() const { return renumbers_; }  // test support
  size_t memory_bytes() const {
    return table_.capacity() * sizeof(Bucket) + taken_.capacity() * sizeof(uint64_t);
  }

 private:
  static constexpr int kWays = 9;  // 56-bit entries in a 64-byte bucket
  static constexpr int kMaxKicks = 500;
  // Full ghost: 90 % of the ways hold live entries. Fuller tables need many more cuckoo moves
  // (0.9 per add at 93 %, 0.46 at 90 %, 0.19 at 85 %).
  static constexpr size_t kLoadPercent = 90;
  static constexpr int kPending = 8;
  // An entry's 56 bits split in two: the lower 32 (the sequence number and the fingerprint's
  // low bits) in low[w], so that one SSE2 instruction tests four ways at a time, and the upper
  // 24 in bytes 3w .. 3w + 2 of high. A way without an entry holds fingerprint 0 (never a
  // key's) and a sequence number so old that the way reads as a dropped entry: free.
  struct alignas(64) Bucket {
    uint32_t low[kWays];
    unsigned char high[28];  // 27 used
  };
  static_assert(sizeof(Bucket) == 64);
  static constexpr uint64_t kEntryMask = (uint64_t{1} << 56) - 1;

  uint64_t get(size_t b, int w) const {
    uint32_t high;
    std::memcpy(&high, table_[b].high + 3 * w, 4);  // way 8 ends at the bucket's last byte
    return uint64_t{high & 0xffffff} << 32 | table_[b].low[w];
  }
  void put(size_t b, int w, uint64_t v) {
    Bucket& k = table_[b];
    k.low[w] = static_cast<uint32_t>(v);
    uint32_t high;
    std::memcpy(&high, k.high + 3 * w, 4);
    high = (high & 0xff000000u) | static_cast<uint32_t>(v >> 32);
    std::memcpy(k.high + 3 * w, &high, 4);
  }
  // What a way without an entry holds (see Bucket); valid until the next sweep.
  uint64_t no_entry() const { return (next_ - 1 - span_bits_) & seq_mask_; }
  void clear_table() {
    uint64_t e = no_entry();
    for (size_t i = 0; i < table_.size(); ++i)
      for (int w = 0; w < kWays; ++w) put(i, w, e);
  }
  // Nonzero, so that no entry matches a way without one.
  uint64_t fingerprint(BlockKey key) const {
    uint64_t f = (key * 0x9e3779b97f4a7c15ULL) >> (64 - fp_bits_);
    return f == 0 ? 1 : f;
  }
  // Bit w set when way w of bucket i may hold want's fingerprint: the fingerprint bits among
  // its lower 32 agree (the caller checks the rest).
  uint32_t candidates(size_t i, uint64_t want) const {
    const uint32_t* low = table_[i].low;
    uint32_t key = static_cast<uint32_t>(want), mask = static_cast<uint32_t>(fp_mask_);
#ifdef __SSE2__
    __m128i k = _mm_set1_epi32(static_cast<int>(key)), m = _mm_set1_epi32(static_cast<int>(mask));
    auto four = [&](const uint32_t* at) {
      __m128i x = _mm_xor_si128(_mm_load_si128(reinterpret_cast<const __m128i*>(at)), k);
      __m128i eq = _mm_cmpeq_epi32(_mm_and_si128(x, m), _mm_setzero_si128());
      return static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(eq)));
    };
    uint32_t r = four(low) | four(low + 4) << 4;
#else
    uint32_t r = 0;
    for (int w = 0; w < 8; ++w) r |= static_cast<uint32_t>(((low[w] ^ key) & mask) == 0) << w;
#endif
    return r | static_cast<uint32_t>(((low[8] ^ key) & mask) == 0) << 8;
  }
  // Bit w set when way w of bucket i is free: its age is at least the live span.
  uint32_t free_ways(size_t i) const {
    const uint32_t* low = table_[i].low;
    uint32_t top = static_cast<uint32_t>(next_ - 1), mask = static_cast<uint32_t>(seq_mask_);
    uint32_t span = static_cast<uint32_t>(next_ - oldest_);  // ages and spans are below 2^31
#ifdef __SSE2__
    __m128i t = _mm_set1_epi32(static_cast<int>(top)), m = _mm_set1_epi32(static_cast<int>(mask));
    __m128i below = _mm_set1_epi32(static_cast<int>(span) - 1);
    auto four = [&](const uint32_t* at) {
      __m128i age =
          _mm_and_si128(_mm_sub_epi32(t, _mm_load_si128(reinterpret_cast<const __m128i*>(at))), m);
      return static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(age, below))));
    };
    uint32_t r = four(low) | four(low + 4) << 4;
#else
    uint32_t r = 0;
    for (int w = 0; w < 8; ++w) r |= static_cast<uint32_t>(((top - low[w]) & mask) >= span) << w;
#endif
    return r | static_cast<uint32_t>(((top - low[8]) & mask) >= span) << 8;
  }
  // Two multiply-shifts of the fingerprint (itself a hash) onto the table.
  void buckets_of(uint64_t fp, size_t b[2]) const {
    uint64_t n = table_.size();
    b[0] = (((fp * 0x9e3779b97f4a7c15ULL) >> 32) * n) >> 32;
    b[1] = (((fp * 0xc2b2ae3d27d4eb4fULL) >> 32) * n) >> 32;
    if (b[1] == b[0]) b[1] = b[0] + 1 == n ? 0 : b[0] + 1;
  }
  uint64_t age(uint64_t v) const { return (next_ - 1 - v) & seq_mask_; }
  bool live(uint64_t v) const { return v != 0 && age(v) < next_ - oldest_; }
  // Takes out live entry v (already out of the table): marks its number taken.
  void forget(uint64_t v) {
    uint64_t seq = next_ - 1 - age(v);
    taken_[(seq & (span_bits_ - 1)) / 64] |= uint64_t{1} << (seq % 64);
    --live_;
    skip_taken();
  }
  void place_pending() {
    for (uint64_t& v : pending_) {
      if (live(v)) place(v);
      v = 0;
    }
    pending_fps_ = 0;
  }
  bool taken(uint64_t seq) const { return taken_[(seq & (span_bits_ - 1)) / 64] >> (seq % 64) & 1; }
  void skip_taken() {
    while (oldest_ < next_ && taken(oldest_)) ++oldest_;
  }
  // Puts an entry into a free way of one of its buckets, moving entries to their other bucket
  // (cuckoo) when both are full.
  void place(uint64_t v) {
    size_t b[2];
    buckets_of(v >> seq_bits_, b);
    for (size_t i : b)
      if (put_free(i, v)) return;
    // Both full: displace an entry to its other bucket, and so on (a rotating choice of way
    // and first bucket keeps this deterministic).
    size_t i = b[rotor_ & 1];
    for (int kick = 0; kick < kMaxKicks; ++kick) {
      int w = static_cast<int>(rotor_++ % kWays);
      uint64_t out = get(i, w);
      put(i, w, v);
      v = out;
      buckets_of(v >> seq_bits_, b);
      i = b[0] == i ? b[1] : b[0];
      if (put_free(i, v)) return;
    }
    // Never seen at this load; a larger table takes everything.
    std::vector<uint64_t> all{v};
    for (size_t i = 0; i < table_.size(); ++i)
      for (int w = 0; w < kWays; ++w)
        if (live(get(i, w))) all.push_back(get(i, w));
    BlockVector<Bucket>(table_.size() + table_.size() / 4 + 1).swap(table_);
    clear_table();
    for (uint64_t e : all) place(e);
  }
  bool put_free(size_t i, uint64_t v) {
    uint32_t m = free_ways(i);
    if (m == 0) return false;
    put(i, std::countr_zero(m), v);
    return true;
  }
  // Empties the ways of dropped entries before their age could wrap around seq_mask_.
  void sweep() {
    place_pending();
    adds_since_sweep_ = 0;
    uint64_t e = no_entry();
    for (size_t i = 0; i < table_.size(); ++i)
      for (uint32_t m = free_ways(i); m != 0; m &= m - 1) put(i, std::countr_zero(m), e);
  }
  // Numbers live entries 0, 1, ... in order: the span shrinks to the live count.
  void renumber() {
    place_pending();
    ++renumbers_;
    uint64_t span = next_ - oldest_;
    std::vector<uint32_t> before(span / 64 + 2, 0);  // taken numbers below each word
    for (uint64_t s = oldest_, c = 0; s < next_; ++s) {
      if ((s - oldest_) % 64 == 0) before[(s - oldest_) / 64] = static_cast<uint32_t>(c);
      c += taken(s);
    }
    uint64_t e = (live_ - 1 - span_bits_) & seq_mask_;  // no_entry() once next_ = live_
    for (size_t i = 0; i < table_.size(); ++i)
      for (int w = 0; w < kWays; ++w) {
        uint64_t v = get(i, w);
        if (!live(v)) {
          put(i, w, e);
          continue;
        }
        uint64_t off = next_ - 1 - age(v) - oldest_, taken_below = before[off / 64];
        for (uint64_t s = oldest_ + off / 64 * 64; s < oldest_ + off; ++s) taken_below += taken(s);
        put(i, w, (v & ~seq_mask_) | ((off - taken_below) & seq_mask_));
      }
    std::fill(taken_.begin(), taken_.end(), 0);
    oldest_ = 0;
    next_ = live_;
    adds_since_sweep_ = 0;
  }

  size_t capacity_;
  BlockVector<Bucket> table_;
  std::vector<uint64_t> taken_;  // ring of span_bits_ bits by sequence number
  uint64_t span_bits_ = 64, seq_mask_ = 0, fp_mask_ = 0;
  int seq_bits_ = 0, fp_bits_ = 0;
  uint64_t next_ = 0, oldest_ = 0;  // next sequence number; every one below oldest_ is gone
  size_t live_ = 0;
  uint64_t adds_since_sweep_ = 0;
  uint64_t rotor_ = 0;
  uint64_t renumbers_ = 0;
  uint64_t pending_[kPending] = {};  // added, not yet placed, by sequence number mod kPending
  uint64_t pending_fps_ = 0;         // bit fp % 64 of each pending entry (or of an old one)
};

}  // namespace kvpolicy::s3fifo
