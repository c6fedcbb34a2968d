// Mooncake JSONL: timestamp (ms), input_length, output_length, hash_ids (512-token blocks).
#include "jsonl.h"
#include "kvpolicy/trace/trace_stream.h"

namespace kvpolicy {
namespace {

// Parses one record into `t`; `last` is the latest time so far. `sorted_only`: a record earlier
// than the one before is an error (a stream cannot sort; the whole-trace reader sorts unless
// told not to).
void add_record(Trace& t, jsonl::object& obj, const jsonl::Where& w, std::vector<uint64_t>& ids,
                Time& last, bool sorted_only) {
  jsonl::reject_duplicate_keys(obj, w);
  double ms = jsonl::get_double(obj, "timestamp", w);
  if (ms < 0) w.fail("timestamp", "negative");
  uint64_t input = jsonl::get_uint(obj, "input_length", w);
  uint64_t output = jsonl::get_uint(obj, "output_length", w);
  jsonl::get_uint_array(obj, "hash_ids", w, ids);
  if (input > UINT32_MAX) w.fail("input_length", "too large");
  if (output > UINT32_MAX) w.fail("output_length", "too large");
  jsonl::check_block_count(ids.size(), input, t.block_tokens, w);
  thread_local std::vector<RetentionHint> hints;
  jsonl::get_hints(obj, w, t.block_tokens, hints);
  Time now = jsonl::to_micros(ms, 1000.0, w, "timestamp");
  if (now < last && sorted_only)
    w.fail("timestamp",
           "earlier than the line before (a stream cannot sort: replay without "
           "--stream)");
  last = std::max(last, now);
  t.add_request(now, ids, static_cast<uint32_t>(input), static_cast<uint32_t>(output));
  jsonl::append_request_hints(t, hints);
}

Trace read_mooncake(const std::string& path, const ReadOptions& opts, ReadReport& report) {
  Trace t;
  t.name = path;
  t.block_tokens = opts.block_tokens ? opts.block_tokens : 512;
  std::vector<uint64_t> ids;
  Time last = 0;
  jsonl::for_each_record(path, opts, report, [&](jsonl::object& obj, const jsonl::Where& w) {
    add_record(t, obj, w, ids, last, !opts.sort_unsorted);
  });
  report.sorted = t.sort_by_time();
  return t;
}

class MooncakeStream final : public TraceStream {
 public:
  MooncakeStream(const std::string& path, const ReadOptions& opts)
      : path_(path), opts_(opts), reader_(path, opts) {}
  bool next(Trace& chunk, size_t max_requests) override {
    chunk.clear_requests();
    chunk.name = path_;
    chunk.block_tokens = opts_.block_tokens ? opts_.block_tokens : 512;
    auto on_record = [&](jsonl::object& obj, const jsonl::Where& w) {
      add_record(chunk, obj, w, ids_, last_, true);
    };
    while (chunk.size() < max_requests && reader_.next(on_record)) {
    }
    return chunk.size() > 0;
  }
  const ReadReport& report() const override { return reader_.report(); }

 private:
  std::string path_;
  ReadOptions opts_;
  jsonl::RecordReader reader_;
  std::vector<uint64_t> ids_;
  Time last_ = 0;
};

TraceFormatRegistrar registrar({"mooncake",
                                "Mooncake JSONL (timestamp ms, input_length, output_length, "
                                "hash_ids; 512-token blocks)",
                                read_mooncake, [](const std::string& path, const ReadOptions& o) {
                                  return std::unique_ptr<TraceStream>(new MooncakeStream(path, o));
                                }});

}  // namespace
}  // namespace kvpolicy
