// Meta's locality statistics of its DLRM embedding-lookup dataset (the reuse-count histograms
// the generator is calibrated to), and the same statistics measured on a trace.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <fstream>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/input_file.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/embed/workload.h"

namespace kvpolicy::embed {
namespace {

bool parse_double(std::string_view s, double& v) {
  s = trim(s);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(v);
}

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
           fmt::format("{}", col) +
               " disagrees with indices / unique cols = " + fmt::format("{}", h_.avg_reuse));
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
    if (std::abs(sum - 1) > 0.01)
      fail(title_line, title, "shares sum to " + fmt::format("{}", sum) + ", not 1");
    return shares;
  }

  StatsReader& r_;
  ReuseHistogram h_;
};

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
  require_regular_file(path, "statistics");  // /dev/zero is one endless line; a FIFO blocks
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

}  // namespace kvpolicy::embed
