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

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "kvpolicy/core/atomic_file.h"
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

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool parse_double(std::string_view s, double& v) {
  s = trim(s);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(v);
}

std::string fmt(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// ---- locality_stats files ----

class StatsReader {
 public:
  explicit StatsReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw InputError(path, 0, "", "cannot open file");
  }
  // The next line, trimmed; nullopt at the end.
  std::optional<std::string> next() {
    std::string text;
    if (!std::getline(in_, text)) return std::nullopt;
    ++line_;
    return std::string(trim(text));
  }
  uint64_t line() const { return line_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ifstream in_;
  uint64_t line_ = 0;
};

class BlockParser {
 public:
  BlockParser(StatsReader& r, std::string source) : r_(r) { h_.source = std::move(source); }

  ReuseHistogram parse() {
    expect_prefix("Locality stats", "Locality stats after processing");
    double indices = expect_number("Avg # of indices");
    double unique = expect_number("Avg # of unique cols");
    if (unique <= 0) fail(r_.line(), "Avg # of unique cols", "must be positive");
    if (indices < unique) fail(r_.line(), "Avg # of unique cols", "more than the indices");
    double col = expect_number("Avg col size");
    h_.avg_reuse = indices / unique;
    // "Avg col size" is the same ratio printed to one decimal.
    if (std::abs(col - h_.avg_reuse) > 0.051)
      fail(r_.line(), "Avg col size",
           fmt(col) + " disagrees with indices / unique cols = " + fmt(h_.avg_reuse));
    h_.key_share = expect_bins("Histogram of col sizes");
    h_.lookup_share = expect_bins("Ratio of index distribution at different column sizes");
    return std::move(h_);
  }

 private:
  [[noreturn]] void fail(uint64_t line, const std::string& field, const std::string& what) {
    throw InputError(r_.path(), line, field, what);
  }

  // The next line of the block; the cumulative forms ("[0, 1, 2, ...]", "['0.000', ...]")
  // repeat the histograms and are skipped.
  std::string expect_line(const std::string& field) {
    for (;;) {
      auto text = r_.next();
      if (!text) fail(r_.line() + 1, field, "file ends inside the block of '" + h_.source + "'");
      if (text->empty())
        fail(r_.line(), field, "blank line: the block of '" + h_.source + "' ends early");
      if (text->front() != '[') return *text;
    }
  }

  void expect_prefix(const std::string& field, const std::string& prefix) {
    std::string text = expect_line(field);
    if (text.rfind(prefix, 0) != 0)
      fail(r_.line(), field, "expected a line starting '" + prefix + "', got '" + text + "'");
  }

  double expect_number(const std::string& field) {
    std::string text = expect_line(field);
    std::string prefix = field + ":";
    if (text.rfind(prefix, 0) != 0)
      fail(r_.line(), field, "expected '" + prefix + " NUMBER', got '" + text + "'");
    double v = 0;
    if (!parse_double(std::string_view(text).substr(prefix.size()), v) || v < 0)
      fail(r_.line(), field, "not a non-negative number: '" + text + "'");
    return v;
  }

  std::vector<double> expect_bins(const std::string& title) {
    std::string text = expect_line(title);
    if (text != title + ":")
      fail(r_.line(), title, "expected '" + title + ":', got '" + text + "'");
    uint64_t title_line = r_.line();
    std::vector<double> shares;
    double sum = 0;
    for (size_t b = 0; b < kReuseBins; ++b) {
      std::string label = reuse_bin_label(b);
      std::string field = title + " " + label;
      text = expect_line(field);
      if (text.rfind(label + ":", 0) != 0)
        fail(r_.line(), field, "expected '" + label + ": SHARE', got '" + text + "'");
      double v = 0;
      if (!parse_double(std::string_view(text).substr(label.size() + 1), v) || v < 0 || v > 1)
        fail(r_.line(), field, "not a share in [0, 1]: '" + text + "'");
      shares.push_back(v);
      sum += v;
    }
    // 17 values rounded to 0.001 each: their sum is within 0.0085 of 1.
    if (std::abs(sum - 1) > 0.01) fail(title_line, title, "shares sum to " + fmt(sum) + ", not 1");
    return shares;
  }

  StatsReader& r_;
  ReuseHistogram h_;
};

// ---- generators ----

void check_common(uint64_t samples, double pooling, uint32_t tables) {
  if (samples == 0) throw ConfigError("samples must be at least 1");
  if (!(pooling >= 1) || !std::isfinite(pooling))
    throw ConfigError("pooling must be a finite number >= 1, got " + fmt(pooling));
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

// ---- CSV ----

constexpr std::string_view kCsvHeader = "timestamp_us,table,index,sample";
constexpr const char* kCsvColumns[] = {"timestamp_us", "table", "index", "sample"};

uint64_t parse_csv_uint(std::string_view s, const std::string& path, uint64_t line,
                        const char* column, uint64_t limit, const char* limit_name) {
  s = trim(s);
  if (s.empty()) throw InputError(path, line, column, "empty");
  if (s.front() == '-')
    throw InputError(path, line, column, "negative number '" + std::string(s) + "'");
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range)
    throw InputError(path, line, column, "'" + std::string(s) + "' is out of range");
  if (ec != std::errc() || p != s.data() + s.size())
    throw InputError(path, line, column, "'" + std::string(s) + "' is not a non-negative integer");
  if (v > limit)
    throw InputError(path, line, column,
                     std::string(s) + " is out of range (must be below " + limit_name + ")");
  return v;
}

}  // namespace

size_t reuse_bin(uint64_t reuse) {
  if (reuse <= 1) return 0;
  return std::min<size_t>(kReuseBins - 1, std::bit_width(reuse - 1));
}

std::string reuse_bin_label(size_t b) {
  if (b == 0) return "(0, 1]";
  if (b + 1 >= kReuseBins) return "(" + std::to_string(uint64_t{1} << (kReuseBins - 2)) + "+";
  return "(" + std::to_string(uint64_t{1} << (b - 1)) + ", " + std::to_string(uint64_t{1} << b) +
         "]";
}

std::vector<ReuseHistogram> read_locality_stats(const std::string& path) {
  StatsReader r(path);
  std::vector<ReuseHistogram> blocks;
  while (auto text = r.next()) {
    // Between blocks: blank lines and the last block's cumulative lines.
    if (text->empty() || text->front() == '[') continue;
    if (text->find(':') != std::string::npos || text->front() == '(')
      throw InputError(path, r.line(), "source",
                       "expected a block's dataset file name, got '" + *text + "'");
    blocks.push_back(BlockParser(r, *text).parse());
  }
  if (blocks.empty()) throw InputError(path, 0, "", "no blocks: empty file?");
  return blocks;
}

ReuseHistogram reuse_histogram(const EmbeddingTrace& trace) {
  ReuseHistogram h;
  h.source = trace.name;
  h.key_share.assign(kReuseBins, 0);
  h.lookup_share.assign(kReuseBins, 0);
  if (trace.keys.empty()) return h;
  std::vector<EmbKey> keys = trace.keys;
  std::sort(keys.begin(), keys.end());
  uint64_t distinct = 0;
  for (size_t i = 0; i < keys.size();) {
    size_t j = i;
    while (j < keys.size() && keys[j] == keys[i]) ++j;
    size_t b = reuse_bin(j - i);
    h.key_share[b] += 1;
    h.lookup_share[b] += static_cast<double>(j - i);
    ++distinct;
    i = j;
  }
  for (size_t b = 0; b < kReuseBins; ++b) {
    h.key_share[b] /= static_cast<double>(distinct);
    h.lookup_share[b] /= static_cast<double>(keys.size());
  }
  h.avg_reuse = static_cast<double>(keys.size()) / static_cast<double>(distinct);
  return h;
}

EmbeddingTrace generate_dlrm(const DlrmOptions& opts) {
  check_common(opts.samples, opts.pooling, opts.tables);
  if (opts.batch == 0) throw ConfigError("batch must be at least 1");
  if (!(opts.drift >= 0 && opts.drift <= 1))
    throw ConfigError("drift must be in [0, 1], got " + fmt(opts.drift));
  if (!(opts.samples_per_second > 0) || !std::isfinite(opts.samples_per_second))
    throw ConfigError("samples_per_second must be positive, got " + fmt(opts.samples_per_second));
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
                        fmt(share[b]));
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
    throw ConfigError("alpha must be a finite number >= 0, got " + fmt(alpha));
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

EmbeddingTrace read_embedding_csv(const std::string& path, bool skip_bad_lines,
                                  EmbeddingCsvReport* report) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open file");
  EmbeddingCsvReport local;
  EmbeddingCsvReport& rep = report ? *report : local;
  rep = EmbeddingCsvReport{};

  std::string text;
  uint64_t line = 0;
  if (!std::getline(in, text)) throw InputError(path, 0, "", "empty file");
  ++line;
  if (trim(text) != kCsvHeader)
    throw InputError(
        path, line, "header",
        "expected '" + std::string(kCsvHeader) + "', got '" + std::string(trim(text)) + "'");

  EmbeddingTrace t;
  t.name = std::filesystem::path(path).stem().string();
  bool open = false;  // a sample has begun
  uint64_t sample_id = 0, sample_line = 0;
  std::unordered_set<uint64_t> finished;  // ids of samples already closed
  while (std::getline(in, text)) {
    ++line;
    std::string_view row = trim(text);
    if (row.empty()) continue;
    try {
      std::string_view field[4];
      size_t n = 0;
      for (size_t start = 0;;) {
        size_t comma = row.find(',', start);
        std::string_view piece = row.substr(
            start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        if (n == 4) throw InputError(path, line, "column 5", "more than 4 columns");
        field[n++] = piece;
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      if (n < 4) throw InputError(path, line, kCsvColumns[n], "missing");
      Time when = static_cast<Time>(parse_csv_uint(field[0], path, line, kCsvColumns[0],
                                                   std::numeric_limits<int64_t>::max(), "2^63"));
      uint32_t table = static_cast<uint32_t>(
          parse_csv_uint(field[1], path, line, kCsvColumns[1], (uint64_t{1} << 24) - 1, "2^24"));
      uint64_t index = parse_csv_uint(field[2], path, line, kCsvColumns[2],
                                      (uint64_t{1} << kIndexBits) - 1, "2^40");
      uint64_t id = parse_csv_uint(field[3], path, line, kCsvColumns[3],
                                   std::numeric_limits<uint64_t>::max(), "2^64");
      if (open && id == sample_id) {
        if (when != t.sample_time.back())
          throw InputError(path, line, "timestamp_us",
                           std::to_string(when) + " differs from sample " + std::to_string(id) +
                               "'s time stamp " + std::to_string(t.sample_time.back()) + " (line " +
                               std::to_string(sample_line) + ")");
      } else {
        if (finished.count(id))
          throw InputError(path, line, "sample",
                           "sample " + std::to_string(id) +
                               " appeared before: a sample's rows must be consecutive");
        if (open && when < t.sample_time.back())
          throw InputError(path, line, "timestamp_us",
                           "time goes back: " + std::to_string(when) + " after " +
                               std::to_string(t.sample_time.back()));
        if (open) {
          finished.insert(sample_id);
          t.sample_offset.push_back(t.keys.size());
        }
        open = true;
        sample_id = id;
        sample_line = line;
        t.sample_time.push_back(when);
      }
      t.keys.push_back(make_key(table, index));
      ++rep.rows;
    } catch (const InputError& e) {
      if (!skip_bad_lines) throw;
      if (rep.skipped_rows++ == 0) rep.first_skipped = e.what();
    }
  }
  if (in.bad()) throw InputError(path, line + 1, "", "read error");
  if (!open)
    throw InputError(path, 0, "", rep.skipped_rows ? "no valid rows" : "no rows after the header");
  t.sample_offset.push_back(t.keys.size());
  return t;
}

void write_embedding_csv(const EmbeddingTrace& trace, const std::string& path) {
  trace.validate();
  // Checked before the file is opened: a refused trace leaves no partial output behind.
  for (size_t s = 0; s < trace.samples(); ++s) {
    if (trace.sample_offset[s + 1] == trace.sample_offset[s])
      throw Error("'" + path + "': sample " + std::to_string(s) +
                  " has no lookups, which the CSV format cannot carry");
    if (trace.sample_time[s] < 0)
      throw Error("'" + path + "': sample " + std::to_string(s) + " has a negative time");
  }
  AtomicOutput out(path);
  std::string buf(kCsvHeader);
  buf += '\n';
  char num[24];
  auto append = [&](uint64_t v, char end) {
    auto r = std::to_chars(num, num + sizeof num, v);
    buf.append(num, r.ptr);
    buf += end;
  };
  for (size_t s = 0; s < trace.samples(); ++s) {
    for (EmbKey k : trace.sample(s)) {
      append(static_cast<uint64_t>(trace.sample_time[s]), ',');
      append(table_of(k), ',');
      append(index_of(k), ',');
      append(s, '\n');
    }
    if (buf.size() >= (1u << 20)) {
      out.write(buf);
      buf.clear();
    }
  }
  out.write(buf);
  out.commit();
}

}  // namespace kvpolicy::embed
