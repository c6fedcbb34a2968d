// LMCache LMBench trace-replayer JSONL: timestamp (absolute nanoseconds, a string, or an integer),
// input_length, output_length, hash_ids (raw block hashes, 32-bit in LMBench's traces; chained on
// load). The format fixes no block size, so it is inferred from input_length and the number of
// hash_ids (--block-tokens sets it); hash_ids are taken as they are.
#include <algorithm>
#include <bit>
#include <charconv>

#include "jsonl.h"

namespace kvpolicy {
namespace {

// The block sizes B for which every record so far has ceil(input_length / B) hash ids, as the
// interval [lo, hi], and the totals for when none fits.
struct BlockSizeFit {
  uint64_t lo = 1, hi = UINT32_MAX, tokens = 0, hashes = 0;

  void add(uint64_t input, uint64_t n) {
    tokens += input;
    hashes += n;
    if (n == 0 || input == 0) return;  // an empty prompt says nothing of the block size
    lo = std::max(lo, (input + n - 1) / n);
    if (n > 1) hi = std::min(hi, (input - 1) / (n - 1));
  }
  // The smallest power of two that fits every record (engines' block sizes are), else the
  // smallest size that does; when no size fits (LMBench's sample traces hold 18-36 tokens per
  // hash id), the mean tokens per hash id.
  uint32_t block_tokens() const {
    if (lo <= hi) {
      uint64_t pow2 = std::bit_ceil(lo);
      return static_cast<uint32_t>(pow2 <= hi ? pow2 : lo);
    }
    uint64_t mean = hashes ? (tokens + hashes / 2) / hashes : 1;
    return static_cast<uint32_t>(std::clamp<uint64_t>(mean, 1, UINT32_MAX));
  }
};

int64_t get_nanoseconds(jsonl::object& obj, const jsonl::Where& w) {
  auto v = jsonl::field(obj, "timestamp", w);
  int64_t ns = 0;
  std::string_view s;
  if (!v.get_string().get(s)) {
    auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), ns);
    if (s.empty() || err != std::errc() || end != s.data() + s.size())
      w.fail("timestamp",
             "expected a string of integer nanoseconds, got \"" + std::string(s) + "\"");
  } else if (v.get_int64().get(ns)) {
    w.fail("timestamp", "expected a string or an integer of nanoseconds");
  }
  if (ns < 0) w.fail("timestamp", "negative");
  return ns;
}

Trace read_lmbench(const std::string& path, const ReadOptions& opts, ReadReport& report) {
  Trace t;
  t.name = path;
  std::vector<uint64_t> ids;
  BlockSizeFit fit;
  std::vector<int64_t> ns_of;  // exact nanoseconds, converted once the first request is known
  jsonl::for_each_record(path, opts, report, [&](jsonl::object& obj, const jsonl::Where& w) {
    jsonl::reject_duplicate_keys(obj, w);
    int64_t ns = get_nanoseconds(obj, w);
    uint64_t input = jsonl::get_uint(obj, "input_length", w);
    if (input > UINT32_MAX) w.fail("input_length", "too large");
    uint64_t output = jsonl::get_uint(obj, "output_length", w);
    if (output > UINT32_MAX) w.fail("output_length", "too large");
    jsonl::get_uint_array(obj, "hash_ids", w, ids);
    if (!opts.sort_unsorted && !ns_of.empty() && ns < ns_of.back())
      w.fail("timestamp", "earlier than the line before");
    t.add_request(0, ids, static_cast<uint32_t>(input), static_cast<uint32_t>(output));
    ns_of.push_back(ns);
    fit.add(input, ids.size());
  });
  t.block_tokens = opts.block_tokens ? opts.block_tokens : fit.block_tokens();
  // Absolute times count from the first request; sort in nanoseconds, then round to
  // microseconds (monotone, so the order holds).
  int64_t first = *std::min_element(ns_of.begin(), ns_of.end());
  for (size_t r = 0; r < ns_of.size(); ++r) t.time[r] = ns_of[r] - first;
  report.sorted = t.sort_by_time();
  for (Time& x : t.time) x = (x + 500) / 1000;
  return t;
}

TraceFormatRegistrar registrar({"lmbench",
                                "LMCache LMBench JSONL (timestamp: string of ns, input_length, "
                                "output_length, hash_ids: raw 32-bit hashes; the block size "
                                "inferred from input_length and the hash_ids)",
                                read_lmbench});

}  // namespace
}  // namespace kvpolicy
