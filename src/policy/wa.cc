// WA: evicts the evictable block least likely to be reused within its category's lifespan,
// ReuseProb_w(t) = pi_w (e^{-lambda_w t} - e^{-lambda_w (t + Life_w)}), deeper first on ties.
// Source: Wang et al., "KVCache Cache in the Wild" (USENIX ATC'25), section 4.2 (ALGORITHMS.md 4).
// Cost: O(1) amortized per access (the reuse fit reads a block's stamp; a hash map of departed
// keys only on evictions and misses); O(W) per eviction, W = categories; O(W * 64) per refit.
#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <utility>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/order/grouped_lru.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"

namespace kvpolicy {
namespace {

using Group = GroupedLru::Group;

// Entries for consecutive request counters [first, end): appended at the end, dropped at the
// front, kept in one vector that is compacted when half of it is dropped.
template <typename T>
class SeqLog {
 public:
  explicit SeqLog(uint32_t first) : first_(first) {}
  uint32_t first() const { return first_; }
  uint32_t end() const { return first_ + static_cast<uint32_t>(v_.size() - off_); }
  size_t size() const { return v_.size() - off_; }
  bool empty() const { return off_ == v_.size(); }
  T& operator[](uint32_t seq) { return v_[off_ + (seq - first_)]; }
  const T& operator[](uint32_t seq) const { return v_[off_ + (seq - first_)]; }
  T& front() { return v_[off_]; }
  void push_back(const T& x) { v_.push_back(x); }
  void pop_front() {
    ++off_;
    ++first_;
    if (off_ >= 1024 && off_ * 2 >= v_.size()) {
      v_.erase(v_.begin(), v_.begin() + static_cast<std::ptrdiff_t>(off_));
      off_ = 0;
    }
  }
  size_t memory_bytes() const { return v_.capacity() * sizeof(T); }

 private:
  std::vector<T> v_;
  size_t off_ = 0;
  uint32_t first_;
};

// The time and category of each request from the oldest one a block is still stamped with: a
// ring indexed by the request counter (power-of-two size), so a block's last access time is
// one array read. 10 bytes a request.
class StampTable {
 public:
  StampTable() : time_(64), group_(64) {}
  Time time(uint32_t seq) const { return time_[seq & mask_]; }
  GroupedLru::Group group(uint32_t seq) const { return group_[seq & mask_]; }
  uint32_t first() const { return first_; }
  size_t size() const { return end_ - first_; }
  size_t capacity() const { return time_.size(); }
  // Appends the next counter; the caller makes room first (size() < capacity()).
  void push_back(Time t, GroupedLru::Group g) {
    time_[end_ & mask_] = t;
    group_[end_ & mask_] = g;
    ++end_;
  }
  // Forgets the counters below `seq`.
  void drop_before(uint32_t seq) { first_ = std::max(first_, std::min(seq, end_)); }
  // Doubles the ring, keeping every entry at its counter.
  void grow(size_t at_least) {
    size_t cap = std::bit_ceil(std::max(at_least, 2 * time_.size()));
    std::vector<Time> t(cap);
    std::vector<GroupedLru::Group> g(cap);
    for (uint32_t s = first_; s != end_; ++s) {
      t[s & (cap - 1)] = time(s);
      g[s & (cap - 1)] = group(s);
    }
    time_ = std::move(t);
    group_ = std::move(g);
    mask_ = cap - 1;
  }
  size_t memory_bytes() const {
    return time_.capacity() * sizeof(Time) + group_.capacity() * sizeof(GroupedLru::Group);
  }

 private:
  std::vector<Time> time_;
  std::vector<GroupedLru::Group> group_;
  size_t mask_ = 63;
  uint32_t first_ = 1, end_ = 1;  // request counters start at 1 (0 = none)
};

// Exact nearest-rank quantiles of the reuse times in the window, per category and over all,
// kept incrementally instead of sorting every reuse time at every refit.
//
// Each reuse time is counted in a histogram of log-scale bins (64 per octave, one per
// microsecond below 64 us) with per-octave sums, so the bin holding the k-th smallest and the
// rank inside it cost O(octaves + 64). The answer is the k-th among that bin's reuse times:
// the bins asked for are "watched", their reuse times filed by bin as they come (a bin is
// gathered from all reuse times the first time it is asked for; the percentile drifts slowly,
// so this is rare). Reuse times leave the window with the access they reuse, so they are all
// filed by the refit epoch of that access, in chunks: a refit drops whole epochs and scans
// only the boundary one to update the counts (the watched files drop them lazily).
class ReuseQuantiles {
 public:
  static constexpr size_t kAll = 0;  // the histogram over every category; category g is g + 1

  // Histograms 0 .. n - 1 may be used.
  void ensure_hists(size_t n) {
    if (n > hists_.size()) hists_.resize(n);
  }

  // A reuse, after `value` us, of an access made by request `seq` (refit epoch `epoch`) into
  // histograms `h` and kAll.
  void add(uint32_t seq, uint32_t epoch, size_t h, Time value) {
    uint64_t u = static_cast<uint64_t>(value);
    uint16_t b = bin(u);
    Event e{seq, compress(u), b, static_cast<uint16_t>(h)};
    if (epoch - first_epoch_ >= epochs_.size() - epoch_off_) grow_epochs(epoch);
    push(epochs_[epoch_off_ + (epoch - first_epoch_)], e);
    if (watched_[b]) {
      by_bin_[b].push_back(e);
      ++filed_;
      ++live_watched_;
    }
    count(kAll, b);
    if (h != kAll) count(h, b);
  }

  // The reuses of accesses by requests below `first` leave the window; `first_live_epoch` is
  // the epoch of request `first` (the epochs below it are wholly gone).
  void expire(uint32_t first, uint32_t first_live_epoch) {
    if (first == first_live_) return;
    first_live_ = first;
    while (epoch_off_ < epochs_.size() && first_epoch_ < first_live_epoch) {
      Epoch& ep = epochs_[epoch_off_];
      for (size_t c = 0; c < ep.chunks.size(); ++c)
        for (size_t i = 0, n = chunk_size(ep, c); i < n; ++i) uncount(ep.chunks[c]->ev[i]);
      release(ep, 0);
      ++epoch_off_;
      ++first_epoch_;
    }
    if (epoch_off_ == epochs_.size()) {
      first_epoch_ = first_live_epoch;
    } else {
      // The boundary epoch: keep its live reuses, packed from the start.
      Epoch& ep = epochs_[epoch_off_];
      size_t kept = 0;
      for (size_t c = 0; c < ep.chunks.size(); ++c) {
        for (size_t i = 0, n = chunk_size(ep, c); i < n; ++i) {
          const Event e = ep.chunks[c]->ev[i];
          if (e.seq < first) {
            uncount(e);
          } else {
            ep.chunks[kept / kChunk]->ev[kept % kChunk] = e;
            ++kept;
          }
        }
      }
      release(ep, (kept + kChunk - 1) / kChunk);
      ep.last = kept % kChunk == 0 && kept > 0 ? kChunk : kept % kChunk;
    }
    // The watched files hold at most twice their live reuse times plus a constant (amortized
    // O(1) per reuse).
    if (filed_ > 2 * live_watched_ + 4096) {
      filed_ = 0;
      for (size_t b : watched_list_) filed_ += compact(by_bin_[b]);
    }
  }

  // The k-th smallest (0-based) reuse time of histogram h; k must be below its count.
  Time select(size_t h, uint64_t k) {
    const Hist& x = hists_[h];
    uint64_t before = 0;
    size_t o = 0;
    while (before + x.octave[o] <= k) before += x.octave[o++];
    size_t b = o * kPerOctave;
    while (before + x.fine[b] <= k) before += x.fine[b++];
    if (!watched_[b]) watch(b);
    std::vector<Event>& f = by_bin_[b];
    filed_ -= f.size();
    filed_ += compact(f);
    scratch_.clear();
    for (const Event& e : f)
      if (h == kAll || e.hist == h) scratch_.push_back(decompress(e));
    auto at = scratch_.begin() + static_cast<std::ptrdiff_t>(k - before);
    std::nth_element(scratch_.begin(), at, scratch_.end());
    return static_cast<Time>(*at);
  }

  uint64_t gathers() const { return gathers_; }
  size_t memory_bytes() const {
    size_t chunks = free_.size();
    for (const Epoch& ep : epochs_) chunks += ep.chunks.size();
    size_t bytes = chunks * sizeof(Chunk) + scratch_.capacity() * sizeof(uint64_t);
    for (size_t b : watched_list_) bytes += by_bin_[b].capacity() * sizeof(Event);
    for (const Hist& x : hists_)
      if (x.fine) bytes += kBins * 4 + sizeof(x.octave);
    return bytes;
  }

 private:
  static constexpr size_t kPerOctave = 64;
  static constexpr size_t kOctaves = 58;  // values below 2^63
  static constexpr size_t kBins = kPerOctave * kOctaves;
  static constexpr size_t kChunk = 4096;

  // One reuse time in 12 bytes: the value's bits below the 7 its bin gives are kept in 32 bits,
  // so every value below 2^39 us (6 days) is exact; larger ones lose their lowest bits.
  struct Event {
    uint32_t seq;  // the request whose access was reused
    uint32_t low;
    uint16_t bin, hist;
  };
  struct Chunk {
    Event ev[kChunk];
  };
  struct Epoch {
    std::vector<std::unique_ptr<Chunk>> chunks;
    size_t last = 0;  // events in the last chunk
  };
  struct Hist {
    std::unique_ptr<uint32_t[]> fine;  // per bin; allocated on first use
    std::array<uint32_t, kOctaves> octave{};
  };

  // Bins are monotone in the value: exact below 64, then 64 per octave (relative width 1/64).
  static uint16_t bin(uint64_t u) {
    if (u < kPerOctave) return static_cast<uint16_t>(u);
    int e = std::bit_width(u) - 1;  // >= 6
    return static_cast<uint16_t>((e - 5) * kPerOctave + ((u >> (e - 6)) & (kPerOctave - 1)));
  }
  static uint32_t compress(uint64_t u) {
    if (u >> 32 == 0) return static_cast<uint32_t>(u);
    int e = std::bit_width(u) - 1;
    return static_cast<uint32_t>(u >> std::max(0, e - 38));
  }
  static uint64_t decompress(const Event& ev) {
    if (ev.bin < kPerOctave) return ev.bin;
    int e = ev.bin / kPerOctave + 5;
    if (e < 32) return ev.low;
    int shift = std::max(0, e - 38), t = e - shift - 6;  // the low t (26..32) bits are in `low`
    uint64_t top = (kPerOctave | (ev.bin % kPerOctave)) << t;
    uint64_t low = t == 32 ? ev.low : ev.low & ((uint64_t{1} << t) - 1);
    return (top | low) << shift;
  }

  // Makes room for epochs up to `epoch`; drops the vector's dead front when it is half of it.
  void grow_epochs(uint32_t epoch) {
    if (epoch_off_ > 0 && epoch_off_ * 2 >= epochs_.size()) {
      epochs_.erase(epochs_.begin(), epochs_.begin() + static_cast<std::ptrdiff_t>(epoch_off_));
      epoch_off_ = 0;
    }
    while (epoch - first_epoch_ >= epochs_.size() - epoch_off_) epochs_.emplace_back();
  }
  size_t chunk_size(const Epoch& ep, size_t c) const {
    return c + 1 == ep.chunks.size() ? ep.last : kChunk;
  }
  void push(Epoch& ep, const Event& e) {
    if (ep.last == kChunk || ep.chunks.empty()) {
      if (free_.empty()) {
        ep.chunks.push_back(std::make_unique_for_overwrite<Chunk>());
      } else {
        ep.chunks.push_back(std::move(free_.back()));
        free_.pop_back();
      }
      ep.last = 0;
    }
    ep.chunks.back()->ev[ep.last++] = e;
  }
  // Returns the epoch's chunks from `keep` on to the pool.
  void release(Epoch& ep, size_t keep) {
    while (ep.chunks.size() > keep) {
      free_.push_back(std::move(ep.chunks.back()));
      ep.chunks.pop_back();
    }
    ep.last = 0;
  }

  void count(size_t h, uint16_t b) {
    Hist& x = hists_[h];
    if (!x.fine) x.fine = std::make_unique<uint32_t[]>(kBins);
    ++x.fine[b];
    ++x.octave[b / kPerOctave];
  }
  void uncount(const Event& e) {
    uncount(kAll, e.bin);
    if (e.hist != kAll) uncount(e.hist, e.bin);
    if (watched_[e.bin]) --live_watched_;
  }
  void uncount(size_t h, uint16_t b) {
    Hist& x = hists_[h];
    --x.fine[b];
    --x.octave[b / kPerOctave];
  }
  // Starts filing bin b and its unwatched neighbours (the percentile drifts) in one pass over
  // every live reuse time.
  void watch(size_t b) {
    ++gathers_;
    constexpr size_t kAround = 16;
    size_t lo = b > kAround ? b - kAround : 0, hi = std::min(kBins - 1, b + kAround);
    std::array<bool, 2 * kAround + 1> fresh{};
    for (size_t x = lo; x <= hi; ++x) {
      if (watched_[x]) continue;
      fresh[x - lo] = true;
      watched_[x] = 1;
      watched_list_.push_back(x);
      live_watched_ += hists_[kAll].fine ? hists_[kAll].fine[x] : 0;
    }
    for (size_t i = epoch_off_; i < epochs_.size(); ++i) {
      const Epoch& ep = epochs_[i];
      for (size_t c = 0; c < ep.chunks.size(); ++c) {
        for (size_t j = 0, n = chunk_size(ep, c); j < n; ++j) {
          const Event& e = ep.chunks[c]->ev[j];
          if (e.bin >= lo && e.bin <= hi && fresh[e.bin - lo]) {
            by_bin_[e.bin].push_back(e);
            ++filed_;
          }
        }
      }
    }
  }
  // Drops the filed reuse times that left the window; returns how many are left.
  size_t compact(std::vector<Event>& f) const {
    size_t kept = 0;
    for (const Event& e : f)
      if (e.seq >= first_live_) f[kept++] = e;
    f.resize(kept);
    return kept;
  }

  std::vector<Epoch> epochs_;  // [epoch_off_ + i]: reuses of accesses in epoch first_epoch_ + i
  size_t epoch_off_ = 0;
  uint32_t first_epoch_ = 0;
  uint32_t first_live_ = 0;  // requests below have left the window
  std::vector<std::unique_ptr<Chunk>> free_;
  std::vector<Hist> hists_ = std::vector<Hist>(1);
  std::vector<uint8_t> watched_ = std::vector<uint8_t>(kBins);
  std::vector<size_t> watched_list_;
  std::vector<std::vector<Event>> by_bin_ = std::vector<std::vector<Event>>(kBins);
  size_t filed_ = 0, live_watched_ = 0;
  std::vector<uint64_t> scratch_;
  uint64_t gathers_ = 0;
};

// Zeroed memory for large tables: fresh anonymous pages (the kernel zeroes each page when it is
// first touched), so a new table costs no pass of its own, and none of its cache traffic.
template <typename T>
class ZeroedArray {
 public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t n)
      : p_(static_cast<T*>(map_pages(n * sizeof(T)))), n_(n), bytes_(n * sizeof(T)) {}
  ZeroedArray(ZeroedArray&& o) noexcept { *this = std::move(o); }
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~ZeroedArray() {
    if (p_) unmap_pages(p_, bytes_);
  }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0, bytes_ = 0;
};

// Block key -> the request counter of the key's latest access, for the keys an instance does not
// hold in its lists (evicted, never cached, or in the other tier). Two hash tables of 64-byte
// buckets, five entries each, so that an operation touches one cache line: writes go to the
// newer table, lookups try it first. Once every entry of the older one is out of the window, it
// is emptied and becomes the newer one, so entries expire a table at a time, with no rehashing
// of live ones. Emptying costs nothing: an entry is empty when its counter is below the table's
// `base`, so raising `base` past every entry empties them all.
class GhostMap {
 public:
  // The counter of `key`, 0 if absent.
  uint32_t find(BlockKey key) const {
    uint32_t s = tables_[cur_].find(key);
    return s != 0 ? s : tables_[1 - cur_].find(key);
  }
  // Sets the counter of `key` (at least the table's base: counters only grow).
  void assign(BlockKey key, uint32_t seq) { tables_[cur_].assign(key, seq); }
  // Entries below `live_from` are out of the window: swaps the tables once the older one holds
  // nothing else.
  void expire(uint32_t live_from) {
    Table& old = tables_[1 - cur_];
    if (old.max_seq < live_from && tables_[cur_].size > 0) {
      old.empty(live_from);
      cur_ = 1 - cur_;
    }
  }
  // always_inline: GCC 12 otherwise deems a function that only prefetches pure and drops calls.
  [[gnu::always_inline]] void prefetch_for_write(BlockKey key) const {
    tables_[cur_].prefetch(key);
  }
  [[gnu::always_inline]] void prefetch_for_find(BlockKey key) const {
    tables_[0].prefetch(key);
    tables_[1].prefetch(key);
  }
  size_t memory_bytes() const {
    return (tables_[0].buckets.size() + tables_[1].buckets.size()) * sizeof(Bucket);
  }

 private:
  static constexpr int kWays = 5;
  // Keys in two halves and their counters: five entries in one cache line.
  struct alignas(64) Bucket {
    uint32_t lo[kWays], hi[kWays], seq[kWays];
  };
  static_assert(sizeof(Bucket) == 64);
  struct Table {
    ZeroedArray<Bucket> buckets{1024};
    size_t size = 0;
    int shift = 64 - 10;
    uint32_t base = 1;  // entries with a lower counter are empty
    uint32_t max_seq = 0;

    size_t mask() const { return buckets.size() - 1; }
    // Fibonacci hashing: the top bits of key * 2^64/phi.
    size_t home(BlockKey key) const { return (key * 0x9e3779b97f4a7c15ULL) >> shift; }
    // A key sits in the first bucket from its home with room when it was written (nothing is
    // ever removed but by emptying the whole table), so a bucket with room ends the search.
    uint32_t find(BlockKey key) const {
      const uint32_t lo = static_cast<uint32_t>(key), hi = static_cast<uint32_t>(key >> 32);
      for (size_t b = home(key);; b = (b + 1) & mask()) {
        const Bucket& x = buckets[b];
        bool room = false;
        for (int w = 0; w < kWays; ++w) {
          if (x.seq[w] < base) {
            room = true;
          } else if (x.lo[w] == lo && x.hi[w] == hi) {
            return x.seq[w];
          }
        }
        if (room) return 0;
      }
    }
    void assign(BlockKey key, uint32_t seq) {
      if ((size + 1) * 5 > buckets.size() * kWays * 4) grow();  // load at most 4/5
      if (put(key, seq)) ++size;
      max_seq = std::max(max_seq, seq);
    }
    // Writes the entry; returns whether the key is new.
    bool put(BlockKey key, uint32_t seq) {
      const uint32_t lo = static_cast<uint32_t>(key), hi = static_cast<uint32_t>(key >> 32);
      for (size_t b = home(key);; b = (b + 1) & mask()) {
        Bucket& x = buckets[b];
        int free = -1;
        for (int w = 0; w < kWays; ++w) {
          if (x.seq[w] < base) {
            if (free < 0) free = w;
          } else if (x.lo[w] == lo && x.hi[w] == hi) {
            x.seq[w] = seq;
            return false;
          }
        }
        if (free >= 0) {
          x.lo[free] = lo;
          x.hi[free] = hi;
          x.seq[free] = seq;
          return true;
        }
      }
    }
    [[gnu::always_inline]] void prefetch(BlockKey key) const {
      __builtin_prefetch(&buckets[home(key)]);
    }
    // Doubles the table; the live entries are reinserted with their buckets fetched ahead.
    void grow() {
      ZeroedArray<Bucket> old = std::move(buckets);
      buckets = ZeroedArray<Bucket>(old.size() * 2);
      --shift;
      constexpr size_t kAhead = 8;
      for (size_t b = 0; b < old.size(); ++b) {
        if (b + kAhead < old.size()) {
          const Bucket& y = old[b + kAhead];
          if (y.seq[0] >= base) prefetch((uint64_t{y.hi[0]} << 32) | y.lo[0]);
        }
        const Bucket& x = old[b];
        for (int w = 0; w < kWays; ++w)
          if (x.seq[w] >= base) put((uint64_t{x.hi[w]} << 32) | x.lo[w], x.seq[w]);
      }
    }
    void empty(uint32_t new_base) {  // keeps the capacity: the next window needs about as much
      base = new_base;
      size = 0;
      max_seq = 0;
    }
  };
  Table tables_[2];
  int cur_ = 0;
};

// The fitted reuse model of one category: log ReuseProb(t) = log_const - lambda * t (seconds).
struct Fit {
  bool valid = false;
  double pi = 0;         // share of the category's block accesses reused later in the window
  double lambda = 0;     // 1 / mean reuse time, per second
  double life_s = 0;     // Life_w in seconds (infinite when life=none)
  double log_const = 0;  // log pi + log(1 - e^{-lambda Life})
  uint64_t samples = 0;
};

// Order of blocks inside a category: older last access first, then deeper first. `seq` counts
// requests, so it refines the trace's timestamps (which can tie between requests) by arrival.
struct Key {
  uint32_t seq;
  uint32_t depth;
  bool operator<(const Key& o) const { return seq != o.seq ? seq < o.seq : depth > o.depth; }
};

class Wa final : public InlinedPolicy<Wa> {
 public:
  static constexpr PolicyHooks kHooks{};
  Wa(const PolicyContext& ctx, const Params& p) : tree_(*ctx.tree) {
    window_ = seconds_param(p, "window_s");
    refit_ = seconds_param(p, "refit_s");
    if (window_ <= 0 || refit_ <= 0) throw ConfigError("wa: window_s and refit_s must be > 0");
    std::string life = p.get_string("life");
    if (life == "p90") {
      life_mode_ = LifeMode::kP90;
    } else if (life == "p90_all") {
      life_mode_ = LifeMode::kP90All;
    } else if (life == "none") {
      life_mode_ = LifeMode::kNone;
    } else {
      char* end = nullptr;
      life_fixed_s_ = std::strtod(life.c_str(), &end);
      if (end != life.c_str() + life.size() || !(life_fixed_s_ > 0) ||
          !std::isfinite(life_fixed_s_))
        throw ConfigError(
            "wa: life must be p90, p90_all, none or a positive number of seconds, not '" + life +
            "'");
      life_mode_ = LifeMode::kFixed;
    }
    int64_t buckets = p.get_int("turn_buckets");
    if (buckets < 1 || buckets > 64) throw ConfigError("wa: turn_buckets must be in 1..64");
    turn_buckets_ = static_cast<uint32_t>(buckets);
    std::string cats = p.get_string("categories");
    if (cats == "typed") {
      typed_ = true;
    } else if (cats != "single") {
      throw ConfigError("wa: categories must be typed or single, not '" + cats + "'");
    }
    int64_t min_samples = p.get_int("min_samples");
    if (min_samples < 1) throw ConfigError("wa: min_samples must be >= 1");
    min_samples_ = static_cast<uint64_t>(min_samples);
    double sample = p.get_double("sample");
    if (!(sample > 0 && sample <= 1)) throw ConfigError("wa: sample must be in (0, 1]");
    // Keys whose hash falls below the threshold are tracked (a spatial sample, as in SHARDS):
    // the fits see every access of a sampled key and none of the others.
    sample_threshold_ = sample >= 1 ? UINT64_MAX : static_cast<uint64_t>(sample * 0x1p64);
    ensure_groups(1);
  }

  // ---- the access stream ---------------------------------------------------------------------
  //
  // Every block access closes the key's previous access (its "instance": a reuse of the
  // category that made it, if still in the window) and opens a new one. The previous access of
  // a block this instance holds in its lists is its stamp; of any other key, the ghost map's
  // entry (written when the block left the lists, or at each access while it was elsewhere).
  // Accesses come in prompt order, and a key's last access is never later than its parent's
  // (every request holding a block holds its prefix): once one has no instance in the window,
  // no later block of the request has one, and the ghost map is not asked again.

  void reserve_ids(size_t ids) override { lists_.resize(ids); }

  void on_request_begin(const RequestView& r) override {
    cur_time_ = advance(r.time);
    ++seq_;
    cur_group_ = group_of(r.category, r.turn);
    ensure_groups(cur_group_ + 1);
    dead_ = false;
    if (times_.size() == times_.capacity()) make_room_for_stamps();
    times_.push_back(cur_time_, cur_group_);
    uint32_t n = static_cast<uint32_t>(r.blocks.size());
    if (sample_threshold_ != UINT64_MAX) {
      n = 0;
      for (BlockKey k : r.blocks) n += sampled(k);
    }
    win_.push_back({cur_time_, 0, n, 0, epoch_, cur_group_});
    counts_[cur_group_].n += n;
  }

  void on_access(NodeId n, const AccessInfo& info) override {
    BlockKey key = tree_.key(n);
    // A block of the current prompt, or (two tiers, DRAM policy) one demoted to us.
    if (info.kind != AccessKind::kDemoted) {
      // A block of the current request: it becomes the newest of the request's category.
      if (lists_.contains(n)) {
        uint32_t prev = lists_.stamp(n);
        unlink(n);
        if (sampled(key)) close_instance(prev);
      } else if (sampled(key)) {
        close_ghost_instance(key);
      }
      lists_.set_stamp(n, seq_);
      place(n, cur_group_);
    } else {
      // A block demoted from the tier above (we are the DRAM policy): it keeps the last access
      // recorded in on_request_end, so it goes to its place by age, not to the tail.
      if (lists_.contains(n)) unlink(n);
      place(n);
    }
  }

  // Every request's path (both tiers): the accesses of blocks this instance did not see through
  // on_access (two tiers: the other tier's, and DRAM hits left unpromoted), then the prompt's
  // blocks that stayed uncached (all else pinned).
  void on_request_end(const RequestView& r, std::span<const NodeId> path) override {
    for (NodeId n : path) {
      if (lists_.stamp(n) == seq_) continue;  // seen in on_access
      BlockKey key = tree_.key(n);
      bool s = sampled(key);
      if (lists_.contains(n)) {
        uint32_t prev = lists_.stamp(n);
        unlink(n);
        if (s) close_instance(prev);
        lists_.set_stamp(n, seq_);
        place(n, cur_group_);
      } else {
        if (s) {
          close_ghost_instance(key);
          add_ghost(key, seq_);
        }
        lists_.set_stamp(n, seq_);  // for its place if it is demoted to us
      }
    }
    for (size_t j = path.size(); j < r.blocks.size(); ++j) {
      BlockKey key = r.blocks[j];
      if (!sampled(key)) continue;
      close_ghost_instance(key);
      add_ghost(key, seq_);
    }
  }

  // ---- the evictable set ---------------------------------------------------------------------

  void on_evictable(NodeId n) override {
    if (!lists_.contains(n)) return;
    Group g = group_of_node(n);
    NodeId& hint = heads_[g].hint;
    if (hint == kNoNode || key(n) < key(hint)) hint = n;
  }
  void on_unevictable(NodeId n) override {
    if (!lists_.contains(n)) return;
    Head& h = heads_[group_of_node(n)];
    if (h.first == n) h.first = kNoNode;
  }
  // The block leaves this tier: its last access goes to the ghost map while in the window.
  void on_removed(NodeId n, Removal) override {
    if (!lists_.contains(n)) return;
    prefetch_next_victims(tree_, lists_, n);  // the category's next blocks
    uint32_t prev = lists_.stamp(n);
    unlink(n);
    BlockKey key = tree_.key(n);
    if (prev >= win_.first() && sampled(key)) add_ghost(key, prev);
  }

  // The minimum of (ReuseProb, last access order, -offset) over every category's oldest
  // evictable block. Within a category log ReuseProb = log_const - lambda t falls (weakly,
  // also in floating point, as every operation rounds monotonically) with age, and the list is
  // kept by age, so its first evictable block is its minimum under that order.
  NodeId victim(Time now) override {
    now = std::max(now, now_);
    // Per category, its first evictable block is remembered until it is unlinked, made
    // unevictable (on_unevictable) or passed by the hint (on_evictable of an older block), and
    // its score while the time and the fits stay: within a request only the category that lost
    // its victim usually needs the tree or a new score.
    if (now != vcache_now_) {
      vcache_now_ = now;
      ++vcache_gen_;
    }
    NodeId best = kNoNode;
    double best_score = 0;
    ++victim_calls_;
    for (Group g = lists_.first_nonempty(); g != GroupedLru::kNoGroup;
         g = lists_.next_nonempty(size_t{g} + 1)) {
      Head& h = heads_[g];
      NodeId x = h.hint;
      if (x == kNoNode || h.first != x) {
        x = first_evictable(g);
        if (x == kNoNode) continue;
        h.first = x;
        h.gen = 0;
      }
      assert(tree_.is_evictable(x));
      if (h.gen != vcache_gen_) {
        h.score = score(g, now - times_.time(lists_.stamp(x)));
        h.gen = vcache_gen_;
      }
      double s = h.score;
      if (best == kNoNode || s < best_score || (s == best_score && key(x) < key(best))) {
        best = x;
        best_score = s;
      }
    }
    return best;
  }

  // Per block: links and stamp (12 bytes); per request still stamped on a cached block: its
  // time and category. The fit's window statistics are reported apart (stats: fit_bytes).
  size_t memory_bytes() const override {
    return lists_.memory_bytes() + times_.memory_bytes() + heads_.capacity() * sizeof(Head) +
           counts_.capacity() * sizeof(Counts) + fits_.capacity() * sizeof(Fit);
  }

  PolicyStats stats() const override {
    size_t used = 0;
    uint64_t accesses = 0;
    for (const Counts& c : counts_) used += c.n > 0, accesses += c.n;
    size_t fit_bytes = win_.memory_bytes() + ghosts_.memory_bytes() + quantiles_.memory_bytes() +
                       ops_.capacity() * sizeof(GhostOp);
    return {{"refits", double(refits_)},
            {"categories_in_window", double(used)},
            {"window_accesses", double(accesses)},
            {"scan_steps_per_victim", victim_calls_ ? double(scan_steps_) / victim_calls_ : 0},
            {"fit_bytes", double(fit_bytes)},
            {"stamp_table_capacity", double(times_.capacity())},
            {"stamp_table_span", double(times_.size())},
            {"p90_bins_gathered", double(quantiles_.gathers())}};
  }

  // ---- test support --------------------------------------------------------------------------

  bool node_state(NodeId n, Time* last, uint32_t* seq, uint32_t* group) const {
    if (!lists_.contains(n)) return false;
    *seq = lists_.stamp(n);
    *last = times_.time(*seq);
    *group = times_.group(*seq);
    return true;
  }
  const Fit* fit(uint32_t g) const { return g < fits_.size() ? &fits_[g] : nullptr; }
  bool fitted() const { return fitted_; }
  uint32_t group_of(CategoryId type, uint32_t turn) const {
    if (!typed_) return 0;
    uint32_t bucket = std::min(std::max(turn, 1u), turn_buckets_) - 1;
    // Fold absurd type ids so that a group id always fits (types are a handful in practice).
    uint32_t types = static_cast<uint32_t>(GroupedLru::kMaxGroups) / turn_buckets_;
    return (type % types) * turn_buckets_ + bucket;
  }

 private:
  enum class LifeMode { kP90, kP90All, kNone, kFixed };
  bool needs_reuse_times() const {
    return life_mode_ == LifeMode::kP90 || life_mode_ == LifeMode::kP90All;
  }
  // A request in the fit's window: its block accesses (sampled), how many of them were reused
  // since, and the sum of those reuse times.
  struct Window {
    Time time;
    int64_t reuse_sum;  // microseconds
    uint32_t n, reused;
    uint32_t epoch;  // refits before it
    Group group;
  };
  struct GhostOp {
    enum Kind : uint8_t { kWrite, kLookup };
    BlockKey key;
    uint32_t seq;  // lookup: the accessing request; write: the access to remember
    Kind kind;
  };
  struct Counts {
    uint64_t n = 0, reused = 0;
    int64_t reuse_sum = 0;  // microseconds
  };

  static Time seconds_param(const Params& p, const std::string& name) {
    double s = p.get_double(name);
    if (!std::isfinite(s)) throw ConfigError("wa: " + name + " must be finite");
    return static_cast<Time>(std::llround(s * kMicrosPerSecond));
  }

  bool sampled(BlockKey key) const {
    return sample_threshold_ == UINT64_MAX || mix64(key ^ 0x5a17) < sample_threshold_;
  }
  Key key(NodeId n) const { return {lists_.stamp(n), tree_.depth(n)}; }
  // The category of the list a block is in: its stamp's (stamps change only off the lists).
  Group group_of_node(NodeId n) const { return times_.group(lists_.stamp(n)); }

  double score(Group g, Time age) const {
    const Fit& f = fits_[g];
    if (!f.valid) return 0;  // no fit yet: every block scores alike, so the order is LRU
    return f.log_const - f.lambda * (double(age) / kMicrosPerSecond);
  }

  // Time never runs backwards for the policy: ages stay >= 0 and agree with the list order.
  Time advance(Time t) {
    if (t > now_) now_ = t;
    if (!started_) {
      started_ = true;
      next_refit_ = now_ + refit_;
    } else if (now_ >= next_refit_) {
      refit(now_);
      next_refit_ = now_ + refit_;
    }
    return now_;
  }

  void ensure_groups(size_t groups) {
    if (groups <= heads_.size()) return;
    lists_.ensure_groups(groups);
    heads_.resize(groups);
    fits_.resize(groups, pooled_);  // a category first seen since the last refit
    counts_.resize(groups);
    quantiles_.ensure_hists(groups + 1);
  }

  // The stamp table is full: forget the requests no cached block is stamped with any more, and
  // grow it if that frees less than a quarter. With one tier every cached block is in the lists,
  // sorted by stamp, so the oldest stamp is a list head's: O(W). Otherwise (two tiers: the
  // other tier's blocks are stamped too) scan every block; the table is then kept at least a
  // sixteenth of the ids, so the scans cost O(1) amortized per request.
  void make_room_for_stamps() {
    uint32_t oldest = seq_;
    size_t ids = std::min(tree_.id_limit(), lists_.ids());
    if (lists_.size() == tree_.size()) {
      for (Group g = lists_.first_nonempty(); g != GroupedLru::kNoGroup;
           g = lists_.next_nonempty(size_t{g} + 1))
        oldest = std::min(oldest, lists_.stamp(lists_.front(g)));
    } else {
      for (NodeId n = 0; n < ids; ++n)
        if (tree_.contains(n)) oldest = std::min(oldest, lists_.stamp(n));
      if (times_.capacity() < ids / 16) times_.grow(ids / 16);
    }
    times_.drop_before(oldest);
    if (times_.size() * 4 > times_.capacity() * 3) times_.grow(0);
  }

  // Erases n from its list; every block before the hint stays non-evictable.
  void unlink(NodeId n) {
    Group g = group_of_node(n);
    Head& h = heads_[g];
    if (h.hint == n) h.hint = lists_.next(n);
    if (h.first == n) h.first = kNoNode;
    lists_.erase(g, n);
  }

  // Inserts n into its category's list at its place by Key. The common case, a block accessed
  // right after its parent in the same request, goes just before the parent (as in lru.cc);
  // otherwise scan back from the tail (short: demoted blocks arrive roughly in age order).
  void place(NodeId n) { place(n, times_.group(lists_.stamp(n))); }
  void place(NodeId n, Group g) {
    uint32_t s = lists_.stamp(n);
    NodeId parent = tree_.parent(n);
    if (parent != kNoNode && lists_.contains(parent) && lists_.stamp(parent) == s) {
      lists_.insert_before(g, n, parent);
      return;
    }
    Key k = key(n);
    NodeId at = lists_.back(g);
    while (at != kNoNode && k < key(at)) at = lists_.prev(at);
    if (at == kNoNode) {
      lists_.push_front(g, n);
    } else {
      lists_.insert_after(g, n, at);
    }
    // A block placed before the hint must not be evictable (on_evictable fixes the hint when
    // it becomes so); a demoted evictable block is announced by on_evictable right after.
  }

  NodeId first_evictable(Group g) {
    NodeId x = heads_[g].hint;
    while (x != kNoNode && !tree_.is_evictable(x)) {
      x = lists_.next(x);
      ++scan_steps_;
    }
    heads_[g].hint = x;
    return x;
  }

  // ---- the sliding-window reuse statistics ---------------------------------------------------

  // The current request reuses the instance made by request `prev` (0: none), if it is still
  // in the window; if it is not, no later block of the request has one in the window either.
  void close_instance(uint32_t prev) {
    if (prev < win_.first()) {
      dead_ = true;
      return;
    }
    count_reuse(prev, cur_time_);
  }
  void count_reuse(uint32_t prev, Time now) {
    Window& w = win_[prev];
    Time reuse = now - w.time;
    ++w.reused;
    w.reuse_sum += reuse;
    Counts& c = counts_[w.group];
    ++c.reused;
    c.reuse_sum += reuse;
    if (needs_reuse_times())
      quantiles_.add(prev, w.epoch,
                     life_mode_ == LifeMode::kP90 ? w.group + 1 : ReuseQuantiles::kAll, reuse);
  }

  // The ghost map is read and written through a log, applied in access order in batches (and
  // before each refit, the only reader of the counts): the table is large and each operation
  // a cache miss, so the batch fetches slots ahead and their misses overlap.
  //
  // The current request accesses `key`, which is not in the lists: a reuse of its ghost entry.
  void close_ghost_instance(BlockKey key) {
    if (dead_) return;
    ops_.push_back({key, seq_, GhostOp::kLookup});
  }
  void add_ghost(BlockKey key, uint32_t seq) {
    ops_.push_back({key, seq, GhostOp::kWrite});
    if (ops_.size() >= kGhostBatch) flush_ghosts();
  }
  void flush_ghosts() {
    constexpr size_t kAhead = 16;
    const uint32_t live = win_.first();
    ghosts_.expire(live);
    uint32_t dead_seq = 0;  // a request whose later lookups find nothing in the window
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (i + kAhead < ops_.size()) {
        const GhostOp& ahead = ops_[i + kAhead];
        if (ahead.kind == GhostOp::kWrite) {
          ghosts_.prefetch_for_write(ahead.key);
        } else {
          ghosts_.prefetch_for_find(ahead.key);
        }
      }
      const GhostOp& op = ops_[i];
      if (op.kind == GhostOp::kWrite) {
        if (op.seq >= live) ghosts_.assign(op.key, op.seq);
      } else if (op.seq != dead_seq) {
        uint32_t prev = ghosts_.find(op.key);
        if (prev < live) {
          dead_seq = op.seq;
        } else {
          count_reuse(prev, win_[op.seq].time);
        }
      }
    }
    ops_.clear();
  }

  // Drops the requests older than the window, then fits every category on what is left: the
  // block accesses of the last window_s, each reused or not by now.
  void refit(Time now) {
    flush_ghosts();
    while (!win_.empty() && win_.front().time <= now - window_) {
      const Window& w = win_.front();
      Counts& c = counts_[w.group];
      c.n -= w.n;
      c.reused -= w.reused;
      c.reuse_sum -= w.reuse_sum;
      win_.pop_front();
    }

    const size_t groups = fits_.size();
    if (needs_reuse_times())
      quantiles_.expire(win_.first(), win_.empty() ? epoch_ : win_.front().epoch);
    Counts all;
    for (const Counts& c : counts_) {
      all.n += c.n;
      all.reused += c.reused;
      all.reuse_sum += c.reuse_sum;
    }
    // life=p90_all: one Life for every category, the percentile of all reuse times.
    if (life_mode_ == LifeMode::kP90All)
      life_all_s_ = p90_seconds(ReuseQuantiles::kAll, all.reused);
    size_t with_data = 0, last = 0;
    for (size_t g = 0; g < groups; ++g)
      if (counts_[g].n > 0) ++with_data, last = g;
    for (size_t g = 0; g < groups; ++g)
      if (counts_[g].n >= min_samples_) fits_[g] = make_fit(counts_[g], g + 1);
    // With one category the pooled fit is that category's (and needs no second percentile).
    pooled_ = with_data == 1 && counts_[last].n >= min_samples_
                  ? fits_[last]
                  : make_fit(all, ReuseQuantiles::kAll);
    for (size_t g = 0; g < groups; ++g)
      if (counts_[g].n < min_samples_) fits_[g] = pooled_;
    fitted_ = true;
    ++refits_;
    ++epoch_;
    ++vcache_gen_;
  }

  // The fit of counts c, whose reuse times are quantile histogram `hist`.
  Fit make_fit(const Counts& c, size_t hist) {
    Fit f;
    if (c.n == 0) return f;  // nothing seen in the window: stay with LRU order
    f.valid = true;
    f.samples = c.n;
    f.pi = double(c.reused) / double(c.n);
    if (c.reused == 0) {
      f.log_const = -std::numeric_limits<double>::infinity();
      return f;
    }
    // Timestamps are whole microseconds; a mean below one would make the rate infinite.
    double mean_s =
        std::max<double>(double(c.reuse_sum) / double(c.reused), 1.0) / kMicrosPerSecond;
    f.lambda = 1.0 / mean_s;
    if (life_mode_ == LifeMode::kNone) {
      f.life_s = std::numeric_limits<double>::infinity();
      f.log_const = std::log(f.pi);
      return f;
    }
    if (life_mode_ == LifeMode::kFixed) {
      f.life_s = life_fixed_s_;
    } else if (life_mode_ == LifeMode::kP90All) {
      f.life_s = life_all_s_;
    } else {
      f.life_s = p90_seconds(hist, c.reused);
    }
    f.log_const = std::log(f.pi) + std::log1p(-std::exp(-f.lambda * f.life_s));
    return f;
  }

  // Nearest-rank 90th percentile of the n reuse times of histogram `hist`: the smallest time
  // >= 90 % of them.
  double p90_seconds(size_t hist, uint64_t n) {
    if (n == 0) return 0;
    uint64_t k = static_cast<uint64_t>(std::ceil(0.9 * double(n))) - 1;
    return double(quantiles_.select(hist, k)) / kMicrosPerSecond;
  }

  const PrefixTree& tree_;
  Time window_ = 0, refit_ = 0;
  LifeMode life_mode_ = LifeMode::kP90;
  double life_fixed_s_ = 0;
  double life_all_s_ = 0;  // life=p90_all, refitted
  uint32_t turn_buckets_ = 5;
  bool typed_ = false;
  uint64_t min_samples_ = 10;
  uint64_t sample_threshold_ = UINT64_MAX;

  // Per block: every block of this tier in its category's list, oldest first, each stamped
  // with the counter of the request that last accessed it (any block the requests' paths
  // touched: also the other tier's, for their place when demoted to us).
  GroupedLru lists_;
  // Per category, in one record: every block before `hint` in its list is non-evictable
  // (kNoNode = the end); victim() remembers the category's first evictable block (kNoNode:
  // unknown) and, if gen is vcache_gen_, that block's score at vcache_now_.
  struct Head {
    NodeId hint = kNoNode;
    NodeId first = kNoNode;
    uint64_t gen = 0;
    double score = 0;
  };
  std::vector<Head> heads_;
  // Per request counter, from the oldest one a cached block is stamped with.
  StampTable times_;
  Time vcache_now_ = -1;
  uint64_t vcache_gen_ = 1;

  // The current request. Its time is the last access of every block it touches, so along the
  // request counter last-access times never decrease.
  Time now_ = 0, cur_time_ = 0;
  uint32_t seq_ = 0;
  Group cur_group_ = 0;
  bool dead_ = false;  // no later block of the current request has an instance in the window

  // Reuse statistics.
  bool started_ = false, fitted_ = false;
  Time next_refit_ = 0;
  SeqLog<Window> win_{1};  // the requests of the window (first() = the oldest in it)
  GhostMap ghosts_;        // key -> last access, for keys not in the lists
  static constexpr size_t kGhostBatch = 1024;
  std::vector<GhostOp> ops_;  // ghost lookups and writes not yet applied, in access order
  ReuseQuantiles quantiles_;  // the window's reuse times (life=p90, p90_all)
  uint32_t epoch_ = 0;        // refits so far
  std::vector<Counts> counts_;
  std::vector<Fit> fits_;
  Fit pooled_;  // all categories together: for categories with too few samples
  uint64_t refits_ = 0, victim_calls_ = 0, scan_steps_ = 0;
};

const bool registered = register_policy<Wa>({
    .name = "wa",
    .summary = "lowest reuse probability within the category's lifespan (request type x turn), "
               "fitted online; deeper first on ties",
    .paper = "Wang et al., KVCache Cache in the Wild, USENIX ATC'25 (section 4.2)",
    .params =
        {
            {"window_s", "1800", "history the reuse fits use, seconds of trace time"},
            {"refit_s", "60", "refit every this many seconds of trace time"},
            {"life", "p90",
             "Life_w: p90 = 90th percentile of the category's reuse times, p90_all = of all "
             "categories' (one Life for all), none = no limit, or seconds"},
            {"turn_buckets", "5", "turn buckets of a category: 1, 2, ..., n+ (typed only)"},
            {"categories", "typed", "typed = request type x turn bucket, single = one category"},
            {"min_samples", "10",
             "a category with fewer block accesses in the window uses the pooled fit"},
            {"sample", "1",
             "share of block keys the fits track (a hash sample; below 1 is faster, approximate)"},
        },
});

}  // namespace

// Test support: the state the brute-force reference needs (tests/policy/wa_test.cc).
namespace wa_testing {

bool node_state(const Policy& p, NodeId n, Time* last, uint32_t* seq, uint32_t* group) {
  auto* wa = dynamic_cast<const Wa*>(&p);
  return wa && wa->node_state(n, last, seq, group);
}

bool fit(const Policy& p, uint32_t group, double* pi, double* lambda, double* life_s) {
  auto* wa = dynamic_cast<const Wa*>(&p);
  const Fit* f = wa ? wa->fit(group) : nullptr;
  if (!f || !f->valid) return false;
  *pi = f->pi;
  *lambda = f->lambda;
  *life_s = f->life_s;
  return true;
}

uint32_t group_of(const Policy& p, CategoryId type, uint32_t turn) {
  return dynamic_cast<const Wa&>(p).group_of(type, turn);
}

}  // namespace wa_testing
}  // namespace kvpolicy
