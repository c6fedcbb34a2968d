// Embedding-lookup workloads: Meta's reuse histograms, the DLRM and Zipf generators, the CSV
// format.
//
// generate_dlrm's model. Meta's files give, for one batch, the share of distinct indices per
// reuse-count bin (key_share), the share of lookups per bin (lookup_share) and the mean reuse.
// - Key counts: N = samples * pooling / E[r] keys. Bin b gets N * share[b] keys, rounded up or
//   down by systematic sampling (one random offset for all bins): every bin is within one key of
//   its expectation and the total is exactly N, so key_share matches to 1/N, not just on average.
// - Counts within a bin: its integers weighted r^-gamma, gamma from the key shares' slope around
//   the bin ((32768+ is taken as (32768, 65536]). Uniform counts, the obvious choice, put a bin's
//   mean at its middle while real counts crowd its low end: they overshoot the mean reuse by 5 %
//   on the first 2021 block and 11 % on the 2022 ones; the slope brings that to 1 % and 6 %.
// - share[b] is key_share[b] except in two kinds of bin, whose share comes from lookup_share *
//   avg_reuse / (the bin's mean count): bins printed as 0.000 although their lookup share is
//   positive (rounded away: below 0.05 % of keys, yet the bins above 512 take a quarter of the
//   lookups; without them the mean reuse falls 20 % short), and bins whose mean count is above
//   avg_reuse, where the printed lookup share pins the key share (to +-0.0005 * avg / mean) more
//   tightly than the printed key share (+-0.0005: 0.001 may be 0.0006). The result is clamped to
//   the printed key share +-0.0005, so key_share still matches to the files' precision.
// - Checked, not fitted: the lookup shares of the cold bins (mean count <= avg_reuse, most
//   keys) and avg_reuse follow from the key shares and the within-bin shape. Which keys are used
//   together, and per-table structure, are not in the files and not modelled. The histogram is
//   one of a batch of ~10^9 lookups; at a smaller scale the top bins hold a fraction of a key, so
//   the rounding gives them zero or one key and their lookup share is matched only over seeds.
// - Time: every use of a key gets a position in [0, 1): uniform over the whole trace, or, for a
//   share `drift` of the keys chosen at random (independently of their reuse), uniform within a
//   window of half the trace placed at random (starts uniform in [-1/4, 3/4), clipped to the
//   trace). The uses sorted by position fill the samples in order. Such a transient key used in
//   the first tenth cannot be used in the last, so about `drift` of the early hot set is gone by
//   the end, while the reuse counts, and so the histogram, do not depend on drift.
// - Samples: each has 1 lookup plus its share of the remaining L - samples, dealt to samples at
//   random (multinomial: about 1 + Poisson(pooling - 1)), so none is empty; pooling near 1 adds
//   single-use keys until there is a lookup per sample. Key i (in a random order) is
//   make_key(i % tables, i / tables). Sample s is in batch s / batch, whose time stamp is
//   batch * (s / batch) / samples_per_second seconds.
// Deterministic for its options: a splitmix64 stream over kvpolicy::mix64, no std::
// distribution (std::pow and std::log2 shape the bins; a last-bit difference between C libraries
// would move a draw only if it fell within an ulp of a boundary).
#include "kvpolicy/embed/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "kvpolicy/core/error.h"

namespace kvpolicy::embed {
namespace {

// splitmix64: the state steps by the golden ratio and mix64 whitens it.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream) : state_(mix64(seed ^ mix64(stream + 0x5eed))) {}
  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix64(state_);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  // [0, n): multiply-high, no modulo bias worth the name for n far below 2^64.
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

 private:
  uint64_t state_;
};

// Meta's files print shares to three decimals.
constexpr double kPrintedHalfUnit = 0.0005;

uint64_t bin_low(size_t b) { return b == 0 ? 1 : (uint64_t{1} << (b - 1)) + 1; }
uint64_t bin_high(size_t b) { return uint64_t{1} << b; }  // the open bin: (32768, 65536]

// Reuse counts within each bin: the integers of the bin weighted r^-gamma, gamma from the slope
// of the key shares around the bin (shares halving from bin to bin is gamma = 2), so a bin's
// counts crowd its low end as the histogram says they do overall.
class BinShapes {
 public:
  explicit BinShapes(const std::vector<double>& key_share) {
    size_t n = key_share.size();
    // slope[a]: the exponent that takes bin a's share to bin a + 1's, S(a+1)/S(a) = 2^(1-gamma).
    std::vector<std::optional<double>> slope(n);
    for (size_t a = 1; a + 1 < n; ++a)
      if (key_share[a] > 0 && key_share[a + 1] > 0)
        slope[a] = 1 - std::log2(key_share[a + 1] / key_share[a]);
    for (size_t b = 0; b < n; ++b) {
      double gamma = 0;  // uniform when the histogram has no slope anywhere
      if (b >= 2) {
        // The slopes on both sides of the bin, else the nearest one (bins printed as 0.000).
        for (size_t d = 0; d < n; ++d) {
          double sum = 0;
          int count = 0;
          for (size_t a : {b - 1 - d, b + d})  // b - 1 - d wraps past 0 to a huge index
            if (a >= 1 && a < n && slope[a]) sum += *slope[a], ++count;
          if (count) {
            gamma = std::clamp(sum / count, -4.0, 4.0);
            break;
          }
        }
      }
      std::vector<double> cdf;
      double total = 0, moment = 0;
      for (uint64_t r = bin_low(b); r <= bin_high(b); ++r) {
        double w = std::pow(static_cast<double>(r), -gamma);
        total += w;
        moment += w * static_cast<double>(r);
        cdf.push_back(total);
      }
      mean_.push_back(moment / total);
      cdf_.push_back(std::move(cdf));
    }
  }
  double mean(size_t b) const { return mean_[b]; }
  // A count of bin b for u uniform in [0, 1).
  uint64_t draw(size_t b, double u) const {
    const std::vector<double>& cdf = cdf_[b];
    size_t i = std::upper_bound(cdf.begin(), cdf.end(), u * cdf.back()) - cdf.begin();
    return bin_low(b) + std::min(i, cdf.size() - 1);
  }

 private:
  std::vector<double> mean_;
  std::vector<std::vector<double>> cdf_;
};

void check_common(uint64_t samples, double pooling, uint32_t tables) {
  if (samples == 0) throw ConfigError("samples must be at least 1");
  if (!(pooling >= 1) || !std::isfinite(pooling))
    throw ConfigError("pooling must be a finite number >= 1, got " + fmt::format("{}", pooling));
  if (tables == 0 || tables > (uint32_t{1} << 24))
    throw ConfigError("tables must be in [1, 2^24], got " + std::to_string(tables));
}

// Lookups per sample: one each, the rest dealt at random. lookups >= samples.
std::vector<uint64_t> deal_sizes(uint64_t lookups, uint64_t samples, Rng& rng) {
  std::vector<uint64_t> sizes(samples, 1);
  for (uint64_t i = samples; i < lookups; ++i) ++sizes[rng.below(samples)];
  return sizes;
}

// Fills sample offsets and batch time stamps for `sizes` (keys already in trace.keys).
void lay_out_samples(EmbeddingTrace& t, const std::vector<uint64_t>& sizes, uint32_t batch,
                     double samples_per_second) {
  t.sample_offset.assign(1, 0);
  t.sample_offset.reserve(sizes.size() + 1);
  t.sample_time.reserve(sizes.size());
  double micros_per_batch = batch * (kMicrosPerSecond / samples_per_second);
  for (size_t s = 0; s < sizes.size(); ++s) {
    t.sample_offset.push_back(t.sample_offset.back() + sizes[s]);
    double when = static_cast<double>(s / batch) * micros_per_batch;
    t.sample_time.push_back(static_cast<Time>(when + 0.5));
  }
}

}  // namespace

EmbeddingTrace generate_dlrm(const DlrmOptions& opts) {
  check_common(opts.samples, opts.pooling, opts.tables);
  if (opts.batch == 0) throw ConfigError("batch must be at least 1");
  if (!(opts.drift >= 0 && opts.drift <= 1))
    throw ConfigError("drift must be in [0, 1], got " + fmt::format("{}", opts.drift));
  if (!(opts.samples_per_second > 0) || !std::isfinite(opts.samples_per_second))
    throw ConfigError("samples_per_second must be positive, got " +
                      fmt::format("{}", opts.samples_per_second));
  if (static_cast<double>(opts.samples) / opts.samples_per_second * kMicrosPerSecond > 9e18)
    throw ConfigError("samples / samples_per_second overflows the microsecond clock");
  const ReuseHistogram& target = opts.target;
  if (target.key_share.empty() || target.key_share.size() > kReuseBins)
    throw ConfigError("target '" + target.source + "': key_share needs 1 to " +
                      std::to_string(kReuseBins) + " bins, got " +
                      std::to_string(target.key_share.size()));

  std::vector<double> share = target.key_share;
  for (size_t b = 0; b < share.size(); ++b)
    if (!(share[b] >= 0) || !std::isfinite(share[b]))
      throw ConfigError("target '" + target.source + "': key_share " + reuse_bin_label(b) + " is " +
                        fmt::format("{}", share[b]));
  BinShapes shapes(share);
  bool rebuild = target.lookup_share.size() == share.size() && target.avg_reuse > 0;
  double total = 0;
  for (size_t b = 0; b < share.size(); ++b) {
    // Where a bin's keys are used more often than the average key, its printed lookup share
    // (+-0.0005) pins its key share to +-0.0005 * avg / mean, tighter than the printed key share
    // does; that estimate is kept within the key share's own rounding, as the within-bin shape
    // behind `mean` is a model.
    if (rebuild && target.lookup_share[b] > 0 &&
        (share[b] == 0 || shapes.mean(b) > target.avg_reuse)) {
      double implied = target.lookup_share[b] * target.avg_reuse / shapes.mean(b);
      share[b] = std::clamp(implied, std::max(0.0, share[b] - kPrintedHalfUnit),
                            share[b] + kPrintedHalfUnit);
    }
    total += share[b];
  }
  if (!(total > 0)) throw ConfigError("target '" + target.source + "': key_share sums to 0");
  double mean_reuse = 0;
  for (size_t b = 0; b < share.size(); ++b) {
    share[b] /= total;
    mean_reuse += share[b] * shapes.mean(b);
  }

  Rng rng(opts.seed, 1);
  double wanted = static_cast<double>(opts.samples) * opts.pooling / mean_reuse;
  uint64_t n_keys = std::max<uint64_t>(1, static_cast<uint64_t>(wanted + 0.5));

  // Systematic sampling: points u, u + 1, ..., u + N - 1 fall into the bins' cumulative spans.
  std::vector<uint64_t> reuse;
  reuse.reserve(n_keys);
  double offset = rng.uniform();
  double cumulative = 0;
  uint64_t before = 0;
  for (size_t b = 0; b < share.size(); ++b) {
    cumulative += share[b] * static_cast<double>(n_keys);
    uint64_t upto =
        b + 1 == share.size()
            ? n_keys
            : std::min<uint64_t>(
                  n_keys, static_cast<uint64_t>(std::max(0.0, std::ceil(cumulative - offset))));
    upto = std::max(upto, before);
    for (; before < upto; ++before) reuse.push_back(shapes.draw(b, rng.uniform()));
  }
  uint64_t lookups = 0;
  for (uint64_t r : reuse) lookups += r;
  // Only when pooling is near 1: every sample needs a lookup, single-use keys make up the rest.
  while (lookups < opts.samples) {
    reuse.push_back(1);
    ++lookups;
  }
  if (reuse.size() > std::numeric_limits<uint32_t>::max())
    throw ConfigError("samples * pooling asks for more than 2^32 keys");
  // Ids in random order, so neither table nor index says anything about popularity.
  for (size_t i = reuse.size(); i > 1; --i) std::swap(reuse[i - 1], reuse[rng.below(i)]);

  struct Use {
    double at;
    uint32_t key;
  };
  std::vector<Use> uses;
  uses.reserve(lookups);
  constexpr double kWindow = 0.5;
  for (uint32_t k = 0; k < reuse.size(); ++k) {
    // Drawn for every key so that drift changes which keys are transient and nothing else.
    double pick = rng.uniform();
    double start = -kWindow / 2 + rng.uniform();
    double lo = 0, width = 1;
    if (pick < opts.drift) {
      lo = std::max(0.0, start);
      width = std::min(1.0, start + kWindow) - lo;
    }
    for (uint64_t i = 0; i < reuse[k]; ++i) uses.push_back({lo + width * rng.uniform(), k});
  }
  std::sort(uses.begin(), uses.end(),
            [](const Use& a, const Use& b) { return a.at != b.at ? a.at < b.at : a.key < b.key; });

  EmbeddingTrace t;
  t.name = target.source.empty() ? "dlrm" : "dlrm:" + target.source;
  t.keys.reserve(lookups);
  for (const Use& u : uses) t.keys.push_back(make_key(u.key % opts.tables, u.key / opts.tables));
  lay_out_samples(t, deal_sizes(lookups, opts.samples, rng), opts.batch, opts.samples_per_second);
  return t;
}

EmbeddingTrace generate_zipf(uint64_t keys, double alpha, uint64_t samples, double pooling,
                             uint32_t tables, uint64_t seed) {
  check_common(samples, pooling, tables);
  if (keys == 0 || keys > (uint64_t{1} << 28))
    throw ConfigError("keys must be in [1, 2^28], got " + std::to_string(keys));
  if (!(alpha >= 0) || !std::isfinite(alpha))
    throw ConfigError("alpha must be a finite number >= 0, got " + fmt::format("{}", alpha));
  // std::pow may differ in the last bit between C libraries; that moves a draw only when it
  // lands within an ulp of a boundary.
  std::vector<double> cdf(keys);
  double sum = 0;
  for (uint64_t i = 0; i < keys; ++i) cdf[i] = sum += std::pow(static_cast<double>(i + 1), -alpha);
  Rng rng(seed, 2);
  uint64_t lookups =
      std::max(samples, static_cast<uint64_t>(static_cast<double>(samples) * pooling + 0.5));
  EmbeddingTrace t;
  t.name = "zipf";
  t.keys.reserve(lookups);
  for (uint64_t i = 0; i < lookups; ++i) {
    double u = rng.uniform() * sum;
    uint64_t rank = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
    rank = std::min(rank, keys - 1);
    t.keys.push_back(make_key(static_cast<uint32_t>(rank % tables), rank / tables));
  }
  DlrmOptions defaults;
  lay_out_samples(t, deal_sizes(lookups, samples, rng), defaults.batch,
                  defaults.samples_per_second);
  return t;
}

}  // namespace kvpolicy::embed
