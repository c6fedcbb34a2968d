// Mooncake JSONL: timestamp (ms), input_length, output_length, hash_ids (512-token blocks).
#include "jsonl.h"

namespace kvpolicy {
namespace {

Trace read_mooncake(const std::string& path, const ReadOptions& opts, ReadReport& report) {
  Trace t;
  t.name = path;
  t.block_tokens = opts.block_tokens ? opts.block_tokens : 512;
  std::vector<uint64_t> ids;
  Time last = 0;
  jsonl::for_each_record(path, opts, report, [&](jsonl::object& obj, const jsonl::Where& w) {
    jsonl::reject_duplicate_keys(obj, w);
    double ms = jsonl::get_double(obj, "timestamp", w);
    if (ms < 0) w.fail("timestamp", "negative");
    uint64_t input = jsonl::get_uint(obj, "input_length", w);
    uint64_t output = jsonl::get_uint(obj, "output_length", w);
    jsonl::get_uint_array(obj, "hash_ids", w, ids);
    if (input > UINT32_MAX) w.fail("input_length", "too large");
    if (output > UINT32_MAX) w.fail("output_length", "too large");
    jsonl::check_block_count(ids.size(), input, t.block_tokens, w);
    Time now = jsonl::to_micros(ms, 1000.0, w, "timestamp");
    if (now < last && !opts.sort_unsorted) w.fail("timestamp", "earlier than the line before");
    last = std::max(last, now);
    t.add_request(now, ids, static_cast<uint32_t>(input), static_cast<uint32_t>(output));
  });
  report.sorted = t.sort_by_time();
  return t;
}

TraceFormatRegistrar registrar({"mooncake",
                                "Mooncake JSONL (timestamp ms, input_length, output_length, "
                                "hash_ids; 512-token blocks)",
                                read_mooncake});

}  // namespace
}  // namespace kvpolicy
