// Per-category reuse-time fits on a sliding window of block accesses, WA's model (docs/policies.md,
// wa): each category's reuse probability mass pi, exponential rate lambda = 1 / mean reuse
// time and lifespan Life, giving log ReuseProb(t) = log pi + log(1 - e^{-lambda Life}) - lambda t.
//
// ReuseQuantiles keeps the exact percentiles Life needs; ReuseFitter follows the accesses,
// detects their reuses (the caller's stamps, or its own map of departed keys) and refits.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/core/order/last_access_map.h"
#include "kvpolicy/core/order/seq_log.h"
#include "kvpolicy/core/params.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

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
//
// Values are exact below 2^39 us (6 days); larger ones lose their lowest bits (see Event).
class ReuseQuantiles {
 public:
  static constexpr size_t kAll = 0;  // the histogram over every category; category g is g + 1

  // Histograms 0 .. n - 1 may be used.
  void ensure_hists(size_t n) {
    if (n > hists_.size()) hists_.resize(n);
  }

  // A reuse, after `value` us (>= 0), of an access made by request `seq` (refit epoch `epoch`)
  // into histograms `h` and kAll. Epochs never decrease along seq.
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
  void expire(uint32_t first, uint32_t first_live_epoch);

  // The k-th smallest (0-based) reuse time of histogram h; k must be below its count.
  Time select(size_t h, uint64_t k);
  // How many reuse times of histogram h lie in bins above the bin of `value` (a count of the
  // reuse times above `value`, to the bins' relative width of 1/64).
  uint64_t count_above(size_t h, Time value) const;

  uint64_t gathers() const { return gathers_; }  // bins gathered from every reuse time
  size_t memory_bytes() const;

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
  static uint64_t decompress(const Event& ev);

  // Makes room for epochs up to `epoch`; drops the vector's dead front when it is half of it.
  void grow_epochs(uint32_t epoch);
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
  void release(Epoch& ep, size_t keep);

  void count(size_t h, uint16_t b) {
    Hist& x = hists_[h];
    if (!x.fine) x.fine = std::make_unique<uint32_t[]>(kBins);
    ++x.fine[b];
    ++x.octave[b / kPerOctave];
  }
  void uncount(const Event& e);
  void uncount(size_t h, uint16_t b);
  // Starts filing bin b and its unwatched neighbours (the percentile drifts) in one pass over
  // every live reuse time.
  void watch(size_t b);
  // Drops the filed reuse times that left the window; returns how many are left.
  size_t compact(std::vector<Event>& f) const;

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

// The fitted reuse model of one category: log ReuseProb(t) = log_const - lambda * t (seconds).
struct ReuseFit {
  bool valid = false;
  double pi = 0;         // share of the category's block accesses reused later in the window
  double lambda = 0;     // 1 / mean reuse time, per second
  double life_s = 0;     // Life in seconds (infinite when the lifespan is unlimited)
  double log_const = 0;  // log pi + log(1 - e^{-lambda Life})
  uint64_t samples = 0;

  // log ReuseProb of a block last accessed `age` us ago; 0 for every age without a fit, so
  // that blocks then rank by age alone.
  double log_reuse_prob(Time age) const {
    if (!valid) return 0;
    return log_const - lambda * (double(age) / kMicrosPerSecond);
  }
};

// How much the categories tell about reuse, among the window's block accesses that reached a
// given age without a reuse (docs/policies.md, wa, "When the categories carry no signal"): each
// category's residual reuse rate rho_w = (reused after that age) / (reached that age), and
// eta2 = sum_w m_w (rho_w - rho)^2 / (M rho (1 - rho)), the share of the variance of "reused
// later" that the category explains (m_w accesses of w reached the age, M in all, rho overall).
// `spread` subtracts eta2's expectation when the categories carry none, (K - 1) / M.
struct CategorySignal {
  double spread = 0;        // max(0, eta2 - (K - 1) / M); 0 with fewer than two trusted categories
  double eta2 = 0;          // before that correction
  double rate = 0;          // rho
  double survivors = 0;     // M
  uint32_t categories = 0;  // K: categories with at least the trusted number of survivors
};

// Fits every category's ReuseFit on the block accesses of the last `window` us of trace time,
// each reused or not by now, refitting every `refit_every` us.
//
// The caller numbers requests 1, 2, ... and tells of every block access, giving the request of
// the key's previous access when it holds it (its stamp) and otherwise leaving it to the
// fitter: the caller hands over the last access of every key it stops holding (depart), and
// the fitter keeps those in the window in a LastAccessMap. Keys come in prompt order, and a
// key's last access is never later than its parent's (every request holding a block holds its
// prefix): once one has no previous access in the window, no later block of the request has
// one, and the map is not asked again.
class ReuseFitter {
 public:
  using Category = uint16_t;
  // How Life is set: the 90th percentile of the category's reuse times, of all categories' (one
  // Life for all), no limit, or a fixed number of seconds.
  enum class Life { kP90, kP90All, kNone, kFixed };
  struct Options {
    Time window = 0, refit_every = 0;  // us, > 0
    Life life = Life::kP90;
    double life_fixed_s = 0;    // Life::kFixed
    uint64_t min_samples = 10;  // a category with fewer accesses in the window uses the pooled fit
    double sample = 1;          // share of keys tracked, (0, 1]: a hash sample, as in SHARDS
    // Measure CategorySignal at every refit, counting a category once this many of its accesses
    // reached the signal age (0: do not measure).
    uint64_t signal_samples = 0;
  };

  explicit ReuseFitter(const Options& options);

  // Categories 0 .. n - 1 may be used; a new one starts with the pooled fit.
  void ensure_categories(size_t n) {
    if (n <= fits_.size()) return;
    fits_.resize(n, pooled_);
    counts_.resize(n);
    quantiles_.ensure_hists(n + 1);
  }

  // Trace time reaches `now` (never decreasing): refits if refit_every has passed since the last
  // refit (or since the first call). Returns whether it refitted.
  bool advance(Time now) {
    if (!started_) {
      started_ = true;
      next_refit_ = now + refit_every_;
      return false;
    }
    if (now < next_refit_) return false;
    refit(now);
    next_refit_ = now + refit_every_;
    return true;
  }

  // Request `seq` (the one after the last) starts at time `now` (the last advance), in category
  // c, and accesses `blocks`; it is the current request until the next.
  void begin_request(uint32_t seq, Time now, Category c, std::span<const BlockKey> blocks) {
    assert(seq == win_.end());  // the window's requests are consecutive
    cur_seq_ = seq;
    cur_time_ = now;
    dead_ = false;
    uint32_t n = static_cast<uint32_t>(blocks.size());
    if (sample_threshold_ != UINT64_MAX) {
      n = 0;
      for (BlockKey k : blocks) n += tracks(k);
    }
    win_.push_back({now, 0, n, 0, epoch_, c});
    counts_[c].n += n;
  }

  // The current request accesses `key`, which the caller holds: its previous access was by
  // request `prev` (0: none).
  void reuse(BlockKey key, uint32_t prev) {
    if (tracks(key)) close_instance(prev);
  }
  // The current request accesses `key`, which the caller does not hold: the previous access is
  // the one it handed over in depart, if any.
  void reuse_departed(BlockKey key) {
    if (tracks(key) && !dead_) ops_.push_back({key, cur_seq_, MapOp::kLookup});
  }
  // The caller stops holding `key`, last accessed by request `seq` (or keeps not holding it
  // after an access by the current request `seq`).
  void depart(BlockKey key, uint32_t seq) {
    if (seq < win_.first() || !tracks(key)) return;
    ops_.push_back({key, seq, MapOp::kWrite});
    if (ops_.size() >= kMapBatch) apply_map_ops();
  }

  size_t categories() const { return fits_.size(); }
  const ReuseFit& fit(Category c) const { return fits_[c]; }
  const ReuseFit& pooled() const { return pooled_; }

  // The age (us) at which the next refits measure the signal: the caller's eviction age.
  void set_signal_age(Time age) { signal_age_ = std::max<Time>(age, 0); }
  const CategorySignal& signal() const { return signal_; }
  Time signal_age() const { return signal_age_; }
  // Per category, the accesses that reached the signal age and those reused after it.
  const std::vector<double>& signal_reached() const { return reached_; }
  const std::vector<double>& signal_later() const { return later_; }

  uint64_t refits() const { return refits_; }
  size_t categories_in_window() const;
  uint64_t accesses_in_window() const;
  uint64_t p90_bins_gathered() const { return quantiles_.gathers(); }
  // The fits and per-category counts, and apart the window's state (requests, departed keys,
  // reuse times).
  size_t fit_table_bytes() const {
    return counts_.capacity() * sizeof(Counts) + fits_.capacity() * sizeof(ReuseFit);
  }
  size_t window_bytes() const;

 private:
  // A request in the window: its block accesses (tracked), how many of them were reused since,
  // and the sum of those reuse times.
  struct Window {
    Time time;
    int64_t reuse_sum;  // microseconds
    uint32_t n, reused;
    uint32_t epoch;  // refits before it
    Category category;
  };
  struct Counts {
    uint64_t n = 0, reused = 0;
    int64_t reuse_sum = 0;  // microseconds
  };
  // The map of departed keys is read and written through a log, applied in access order in
  // batches (and before each refit, the only reader of the counts): the map is large and each
  // operation a cache miss, so the batch fetches slots ahead and their misses overlap.
  struct MapOp {
    enum Kind : uint8_t { kWrite, kLookup };
    BlockKey key;
    uint32_t seq;  // lookup: the accessing request; write: the access to remember
    Kind kind;
  };
  static constexpr size_t kMapBatch = 1024;

  bool tracks(BlockKey key) const {
    return sample_threshold_ == UINT64_MAX || mix64(key ^ 0x5a17) < sample_threshold_;
  }
  bool needs_reuse_times() const {
    return life_ == Life::kP90 || life_ == Life::kP90All || signal_samples_ > 0;
  }

  // The current request reuses the access made by request `prev` (0: none), if it is still in
  // the window; if it is not, no later block of the request has one in the window either.
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
    Counts& c = counts_[w.category];
    ++c.reused;
    c.reuse_sum += reuse;
    if (needs_reuse_times())
      quantiles_.add(
          prev, w.epoch,
          life_ == Life::kP90 || signal_samples_ > 0 ? w.category + 1 : ReuseQuantiles::kAll,
          reuse);
  }
  void apply_map_ops();

  // Drops the requests older than the window, then fits every category on what is left.
  void refit(Time now);
  // CategorySignal at signal_age_ on the window as it is at time `now`.
  void measure_signal(Time now);
  // The fit of counts c, whose reuse times are quantile histogram `hist`.
  ReuseFit make_fit(const Counts& c, size_t hist);
  // Nearest-rank 90th percentile of the n reuse times of histogram `hist`, in seconds.
  double p90_seconds(size_t hist, uint64_t n);

  Time window_, refit_every_;
  Life life_;
  double life_fixed_s_;
  double life_all_s_ = 0;  // Life::kP90All, refitted
  uint64_t min_samples_;
  uint64_t sample_threshold_;  // keys hashing below it are tracked
  uint64_t signal_samples_;
  Time signal_age_ = 0;
  CategorySignal signal_;
  std::vector<double> reached_, later_;  // measure_signal's per-category counts

  bool started_ = false;
  Time next_refit_ = 0;
  uint32_t cur_seq_ = 0;  // the current request (0: none yet)
  Time cur_time_ = 0;
  bool dead_ = false;         // no later block of the current request has an access in the window
  SeqLog<Window> win_{1};     // the requests of the window (first() = the oldest in it)
  LastAccessMap departed_;    // key -> last access, for keys the caller does not hold
  std::vector<MapOp> ops_;    // lookups and writes of departed_ not yet applied, in access order
  ReuseQuantiles quantiles_;  // the window's reuse times (Life::kP90, kP90All)
  uint32_t epoch_ = 0;        // refits so far
  std::vector<Counts> counts_;
  std::vector<ReuseFit> fits_;
  ReuseFit pooled_;  // all categories together: for categories with too few samples
  uint64_t refits_ = 0;
};

// The fitter's parameters as a policy declares them: window_s, refit_s, life, min_samples, sample.
std::vector<ParamSpec> reuse_fit_param_specs();
// Options from those parameters, as Params::parse checked them.
ReuseFitter::Options reuse_fit_options(const Params& p);

}  // namespace kvpolicy
