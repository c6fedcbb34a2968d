#include "kvpolicy/predict/reuse_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace kvpolicy {

// ---- ReuseQuantiles ------------------------------------------------------------------------

void ReuseQuantiles::expire(uint32_t first, uint32_t first_live_epoch) {
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

Time ReuseQuantiles::select(size_t h, uint64_t k) {
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

uint64_t ReuseQuantiles::count_above(size_t h, Time value) const {
  if (h >= hists_.size() || !hists_[h].fine) return 0;
  const Hist& x = hists_[h];
  size_t b = bin(static_cast<uint64_t>(std::max<Time>(value, 0)));
  size_t o = b / kPerOctave;
  uint64_t n = 0;
  for (size_t i = o + 1; i < kOctaves; ++i) n += x.octave[i];
  for (size_t i = b + 1; i < (o + 1) * kPerOctave; ++i) n += x.fine[i];
  return n;
}

size_t ReuseQuantiles::memory_bytes() const {
  size_t chunks = free_.size();
  for (const Epoch& ep : epochs_) chunks += ep.chunks.size();
  size_t bytes = chunks * sizeof(Chunk) + scratch_.capacity() * sizeof(uint64_t);
  for (size_t b : watched_list_) bytes += by_bin_[b].capacity() * sizeof(Event);
  for (const Hist& x : hists_)
    if (x.fine) bytes += kBins * 4 + sizeof(x.octave);
  return bytes;
}

uint64_t ReuseQuantiles::decompress(const Event& ev) {
  if (ev.bin < kPerOctave) return ev.bin;
  int e = ev.bin / kPerOctave + 5;
  if (e < 32) return ev.low;
  int shift = std::max(0, e - 38), t = e - shift - 6;  // the low t (26..32) bits are in `low`
  uint64_t top = (kPerOctave | (ev.bin % kPerOctave)) << t;
  uint64_t low = t == 32 ? ev.low : ev.low & ((uint64_t{1} << t) - 1);
  return (top | low) << shift;
}

void ReuseQuantiles::grow_epochs(uint32_t epoch) {
  if (epoch_off_ > 0 && epoch_off_ * 2 >= epochs_.size()) {
    epochs_.erase(epochs_.begin(), epochs_.begin() + static_cast<std::ptrdiff_t>(epoch_off_));
    epoch_off_ = 0;
  }
  while (epoch - first_epoch_ >= epochs_.size() - epoch_off_) epochs_.emplace_back();
}

void ReuseQuantiles::release(Epoch& ep, size_t keep) {
  while (ep.chunks.size() > keep) {
    free_.push_back(std::move(ep.chunks.back()));
    ep.chunks.pop_back();
  }
  ep.last = 0;
}

void ReuseQuantiles::uncount(const Event& e) {
  uncount(kAll, e.bin);
  if (e.hist != kAll) uncount(e.hist, e.bin);
  if (watched_[e.bin]) --live_watched_;
}

void ReuseQuantiles::uncount(size_t h, uint16_t b) {
  Hist& x = hists_[h];
  --x.fine[b];
  --x.octave[b / kPerOctave];
}

void ReuseQuantiles::watch(size_t b) {
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

size_t ReuseQuantiles::compact(std::vector<Event>& f) const {
  size_t kept = 0;
  for (const Event& e : f)
    if (e.seq >= first_live_) f[kept++] = e;
  f.resize(kept);
  return kept;
}

// ---- ReuseFitter ---------------------------------------------------------------------------

ReuseFitter::ReuseFitter(const Options& options)
    : window_(options.window),
      refit_every_(options.refit_every),
      life_(options.life),
      life_fixed_s_(options.life_fixed_s),
      min_samples_(options.min_samples),
      // Keys whose hash falls below the threshold are tracked (a spatial sample, as in SHARDS):
      // the fits see every access of a tracked key and none of the others.
      sample_threshold_(options.sample >= 1 ? UINT64_MAX
                                            : static_cast<uint64_t>(options.sample * 0x1p64)),
      signal_samples_(options.signal_samples) {
  assert(window_ > 0 && refit_every_ > 0 && min_samples_ >= 1);
  assert(options.sample > 0 && options.sample <= 1);
}

size_t ReuseFitter::categories_in_window() const {
  size_t used = 0;
  for (const Counts& c : counts_) used += c.n > 0;
  return used;
}

uint64_t ReuseFitter::accesses_in_window() const {
  uint64_t accesses = 0;
  for (const Counts& c : counts_) accesses += c.n;
  return accesses;
}

size_t ReuseFitter::window_bytes() const {
  return win_.memory_bytes() + departed_.memory_bytes() + quantiles_.memory_bytes() +
         ops_.capacity() * sizeof(MapOp);
}

void ReuseFitter::apply_map_ops() {
  constexpr size_t kAhead = 16;
  const uint32_t live = win_.first();
  departed_.expire(live);
  uint32_t dead_seq = 0;  // a request whose later lookups find nothing in the window
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (i + kAhead < ops_.size()) {
      const MapOp& ahead = ops_[i + kAhead];
      if (ahead.kind == MapOp::kWrite) {
        departed_.prefetch_for_write(ahead.key);
      } else {
        departed_.prefetch_for_find(ahead.key);
      }
    }
    const MapOp& op = ops_[i];
    if (op.kind == MapOp::kWrite) {
      if (op.seq >= live) departed_.assign(op.key, op.seq);
    } else if (op.seq != dead_seq) {
      uint32_t prev = departed_.find(op.key);
      if (prev < live) {
        dead_seq = op.seq;
      } else {
        count_reuse(prev, win_[op.seq].time);
      }
    }
  }
  ops_.clear();
}

void ReuseFitter::refit(Time now) {
  apply_map_ops();
  while (!win_.empty() && win_.front().time <= now - window_) {
    const Window& w = win_.front();
    Counts& c = counts_[w.category];
    c.n -= w.n;
    c.reused -= w.reused;
    c.reuse_sum -= w.reuse_sum;
    win_.pop_front();
  }

  const size_t categories = fits_.size();
  if (needs_reuse_times())
    quantiles_.expire(win_.first(), win_.empty() ? epoch_ : win_.front().epoch);
  Counts all;
  for (const Counts& c : counts_) {
    all.n += c.n;
    all.reused += c.reused;
    all.reuse_sum += c.reuse_sum;
  }
  // Life::kP90All: one Life for every category, the percentile of all reuse times.
  if (life_ == Life::kP90All) life_all_s_ = p90_seconds(ReuseQuantiles::kAll, all.reused);
  size_t with_data = 0, last = 0;
  for (size_t g = 0; g < categories; ++g)
    if (counts_[g].n > 0) ++with_data, last = g;
  for (size_t g = 0; g < categories; ++g)
    if (counts_[g].n >= min_samples_) fits_[g] = make_fit(counts_[g], g + 1);
  // With one category the pooled fit is that category's (and needs no second percentile).
  pooled_ = with_data == 1 && counts_[last].n >= min_samples_ ? fits_[last]
                                                              : make_fit(all, ReuseQuantiles::kAll);
  for (size_t g = 0; g < categories; ++g)
    if (counts_[g].n < min_samples_) fits_[g] = pooled_;
  // The signal needs two categories; with one (or none) in the window it is nil, unmeasured.
  if (signal_samples_ > 0 && with_data >= 2) {
    measure_signal(now);
  } else {
    signal_ = CategorySignal{};
    reached_.clear();
    later_.clear();
  }
  ++refits_;
  ++epoch_;
}

void ReuseFitter::measure_signal(Time now) {
  const size_t categories = counts_.size();
  reached_.assign(categories, 0);
  later_.assign(categories, 0);
  // Accesses not reused (yet) that are at least signal_age_ old, then those reused after it.
  for (uint32_t q = win_.first(); q < win_.end(); ++q) {
    const Window& w = win_[q];
    if (w.time > now - signal_age_) break;  // times never decrease along the window
    reached_[w.category] += w.n - w.reused;
  }
  double m = 0, s = 0;
  uint32_t k = 0;
  for (size_t g = 0; g < categories; ++g) {
    later_[g] = double(quantiles_.count_above(g + 1, signal_age_));
    reached_[g] += later_[g];
    if (reached_[g] < double(signal_samples_)) continue;
    m += reached_[g];
    s += later_[g];
    ++k;
  }
  signal_ = CategorySignal{};
  signal_.survivors = m;
  signal_.categories = k;
  if (k == 0) return;
  double rho = s / m;
  signal_.rate = rho;
  if (k < 2 || rho <= 0 || rho >= 1) return;
  double between = 0;
  for (size_t g = 0; g < categories; ++g) {
    if (reached_[g] < double(signal_samples_)) continue;
    double d = later_[g] / reached_[g] - rho;
    between += reached_[g] * d * d;
  }
  signal_.eta2 = between / (m * rho * (1 - rho));
  signal_.spread = std::max(0.0, signal_.eta2 - double(k - 1) / m);
}

ReuseFit ReuseFitter::make_fit(const Counts& c, size_t hist) {
  ReuseFit f;
  if (c.n == 0) return f;  // nothing seen in the window: no fit, blocks rank by age
  f.valid = true;
  f.samples = c.n;
  f.pi = double(c.reused) / double(c.n);
  if (c.reused == 0) {
    f.log_const = -std::numeric_limits<double>::infinity();
    return f;
  }
  // Timestamps are whole microseconds; a mean below one would make the rate infinite.
  double mean_s = std::max<double>(double(c.reuse_sum) / double(c.reused), 1.0) / kMicrosPerSecond;
  f.lambda = 1.0 / mean_s;
  if (life_ == Life::kNone) {
    f.life_s = std::numeric_limits<double>::infinity();
    f.log_const = std::log(f.pi);
    return f;
  }
  if (life_ == Life::kFixed) {
    f.life_s = life_fixed_s_;
  } else if (life_ == Life::kP90All) {
    f.life_s = life_all_s_;
  } else {
    f.life_s = p90_seconds(hist, c.reused);
  }
  f.log_const = std::log(f.pi) + std::log1p(-std::exp(-f.lambda * f.life_s));
  return f;
}

// The smallest time >= 90 % of them.
double ReuseFitter::p90_seconds(size_t hist, uint64_t n) {
  if (n == 0) return 0;
  uint64_t k = static_cast<uint64_t>(std::ceil(0.9 * double(n))) - 1;
  return double(quantiles_.select(hist, k)) / kMicrosPerSecond;
}

// ---- parameters ----------------------------------------------------------------------------

std::vector<ParamSpec> reuse_fit_param_specs() {
  return {
      // At least one microsecond, the trace's time unit (a shorter span rounds to none).
      param_double("window_s", 1800, {.min = 1e-6, .max = 1e9},
                   "history the reuse fits use, seconds of trace time"),
      param_double("refit_s", 60, {.min = 1e-6, .max = 1e9},
                   "refit every this many seconds of trace time"),
      param_choice("life", "p90", {"p90", "p90_all", "none"},
                   "Life_w: p90 = 90th percentile of the category's reuse times, p90_all = of "
                   "all categories' (one Life for all), none = no limit, or seconds",
                   ParamRange{.min = 0, .min_exclusive = true}),
      param_int("min_samples", 10, {.min = 1},
                "a category with fewer block accesses in the window uses the pooled fit"),
      param_double("sample", 1, {.min = 0, .max = 1, .min_exclusive = true},
                   "share of block keys the fits track (a hash sample; below 1 is faster, "
                   "approximate)"),
  };
}

ReuseFitter::Options reuse_fit_options(const Params& p) {
  auto seconds = [&](const std::string& name) {
    return static_cast<Time>(std::llround(p.get_double(name) * kMicrosPerSecond));
  };
  ReuseFitter::Options o;
  o.window = seconds("window_s");
  o.refit_every = seconds("refit_s");
  std::string life = p.get_string("life");
  if (life == "p90") {
    o.life = ReuseFitter::Life::kP90;
  } else if (life == "p90_all") {
    o.life = ReuseFitter::Life::kP90All;
  } else if (life == "none") {
    o.life = ReuseFitter::Life::kNone;
  } else {  // seconds, as the declaration accepts
    o.life_fixed_s = std::strtod(life.c_str(), nullptr);
    o.life = ReuseFitter::Life::kFixed;
  }
  o.min_samples = static_cast<uint64_t>(p.get_int("min_samples"));
  o.sample = p.get_double("sample");
  return o;
}

}  // namespace kvpolicy
