// libCacheSim's oracleGeneral binary trace: packed little-endian 24-byte records
// {uint32 clock_time (s); uint64 obj_id; uint32 obj_size; int64 next_access_vtime}. Read: each
// record is a one-block request (a flat object cache). Write: one record per block access of a
// prefix trace, so libCacheSim can replay the same block stream.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <memory>

#include "binary_file.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/input_file.h"
#include "kvpolicy/core/key_map.h"
#include "kvpolicy/trace/trace_io.h"
#include "kvpolicy/trace/trace_stream.h"

namespace kvpolicy {

static_assert(std::endian::native == std::endian::little,
              "oracleGeneral records are read and written as raw little-endian bytes");

namespace {

template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

Trace read_oracle_general(const std::string& path, const ReadOptions& opts, ReadReport& report) {
  uint64_t size;
  File f = open_binary_trace(path, size);
  uint64_t records = size / kOracleGeneralRecordBytes;
  if (!opts.max_requests || opts.max_requests > records)
    require_memory_for_file(path, records * (kTraceBytesPerRequest + kTraceBytesPerBlock),
                            kStreamHint);
  if (uint64_t tail = size % kOracleGeneralRecordBytes) {
    // "Line" is the 1-based record number in binary formats.
    InputError e(path, records + 1, "",
                 "truncated record: " + std::to_string(tail) + " of " +
                     std::to_string(kOracleGeneralRecordBytes) + " bytes");
    if (!opts.skip_bad_lines || records == 0) throw e;
    report.skipped_lines = 1;
    report.first_skipped = e.what();
  }
  if (opts.max_requests && opts.max_requests < records) records = opts.max_requests;
  report.lines = records;

  Trace t;
  t.name = path;
  t.block_tokens = opts.block_tokens ? opts.block_tokens : 16;
  t.reserve(records, records);
  constexpr uint64_t kChunk = 1 << 16;  // records per read: bounded memory, few syscalls
  std::vector<unsigned char> buf(kChunk * kOracleGeneralRecordBytes);
  uint32_t last = 0;
  for (uint64_t done = 0; done < records;) {
    uint64_t count = std::min(kChunk, records - done);
    if (std::fread(buf.data(), kOracleGeneralRecordBytes, count, f.get()) != count)
      throw InputError(path, done + 1, "", "read failed");
    for (uint64_t i = 0; i < count; ++i) {
      const unsigned char* rec = buf.data() + i * kOracleGeneralRecordBytes;
      uint32_t clock = load<uint32_t>(rec);
      uint64_t obj = load<uint64_t>(rec + 4);
      if (!opts.sort_unsorted && clock < last)
        throw InputError(path, done + i + 1, "clock_time", "earlier than the record before");
      last = clock;
      t.add_request(static_cast<Time>(clock) * kMicrosPerSecond, {&obj, 1}, t.block_tokens, 0);
    }
    done += count;
  }
  // Time counts from the first request.
  Time first = *std::min_element(t.time.begin(), t.time.end());
  for (Time& x : t.time) x -= first;
  report.sorted = t.sort_by_time();
  return t;
}

// The same records a chunk at a time. The whole-trace reader sorts records out of time order;
// a stream cannot, so one is an error naming its record.
class OracleGeneralStream final : public TraceStream {
 public:
  OracleGeneralStream(const std::string& path, const ReadOptions& opts) : path_(path), opts_(opts) {
    uint64_t size;
    f_ = open_binary_trace(path, size);
    records_ = size / kOracleGeneralRecordBytes;
    if (uint64_t tail = size % kOracleGeneralRecordBytes) {
      InputError e(path, records_ + 1, "",
                   "truncated record: " + std::to_string(tail) + " of " +
                       std::to_string(kOracleGeneralRecordBytes) + " bytes");
      if (!opts.skip_bad_lines || records_ == 0) throw e;
      report_.skipped_lines = 1;
      report_.first_skipped = e.what();
    }
    if (opts.max_requests && opts.max_requests < records_) records_ = opts.max_requests;
    report_.lines = records_;
  }

  bool next(Trace& chunk, size_t max_requests) override {
    chunk.clear_requests();
    chunk.name = path_;
    chunk.block_tokens = opts_.block_tokens ? opts_.block_tokens : 16;
    uint64_t count = std::min<uint64_t>(max_requests, records_ - done_);
    if (count == 0) return false;
    buf_.resize(count * kOracleGeneralRecordBytes);
    if (std::fread(buf_.data(), kOracleGeneralRecordBytes, count, f_.get()) != count)
      throw InputError(path_, done_ + 1, "", "read failed");
    // Columns filled in place: every request is one block of block_tokens tokens, no session.
    chunk.time.resize(count);
    chunk.blocks.resize(count);
    chunk.block_offset.resize(count + 1);
    chunk.session.assign(count, kNoSession);
    chunk.turn.assign(count, 1);
    chunk.category.assign(count, 0);
    chunk.user.assign(count, 0);
    chunk.prompt_tokens.assign(count, chunk.block_tokens);
    chunk.output_tokens.assign(count, 0);
    for (uint64_t i = 0; i < count; ++i) {
      const unsigned char* rec = buf_.data() + i * kOracleGeneralRecordBytes;
      uint32_t clock = load<uint32_t>(rec);
      uint64_t obj = load<uint64_t>(rec + 4);
      if (done_ + i == 0) first_ = last_ = clock;
      if (clock < last_)
        throw InputError(path_, done_ + i + 1, "clock_time",
                         "earlier than the record before (a stream cannot sort: replay without "
                         "--stream)");
      last_ = clock;
      chunk.time[i] = static_cast<Time>(clock - first_) * kMicrosPerSecond;
      chunk.blocks[i] = chain_key(kRootKey, obj);
      chunk.block_offset[i + 1] = i + 1;
    }
    done_ += count;
    return true;
  }
  const ReadReport& report() const override { return report_; }

 private:
  std::string path_;
  ReadOptions opts_;
  File f_;
  ReadReport report_;
  uint64_t records_ = 0, done_ = 0;
  uint32_t first_ = 0, last_ = 0;
  std::vector<unsigned char> buf_;
};

TraceFormatRegistrar registrar({"oracle-general",
                                "libCacheSim oracleGeneral binary (24-byte records: clock_time s, "
                                "obj_id, obj_size, next_access_vtime); one block per record",
                                read_oracle_general,
                                [](const std::string& path, const ReadOptions& opts) {
                                  return std::unique_ptr<TraceStream>(
                                      new OracleGeneralStream(path, opts));
                                }});

}  // namespace

void write_oracle_general(const Trace& trace, const std::string& path, uint32_t obj_size) {
  const uint64_t n = trace.blocks.size();
  // Next access of every record, from a backward pass (record numbers are 1-based, as
  // libCacheSim's traceConv writes them).
  if (n >= UINT32_MAX) throw ConfigError("trace too large for oracleGeneral conversion");
  std::vector<int64_t> next(n, kOracleGeneralNever);
  KeyMap seen(n / 2 + 16);
  for (uint64_t a = n; a-- > 0;) {
    bool inserted;
    uint32_t& later = seen.get_or_insert(trace.blocks[a], static_cast<uint32_t>(a), &inserted);
    if (!inserted) {
      next[a] = static_cast<int64_t>(later) + 1;
      later = static_cast<uint32_t>(a);
    }
  }
  // Through a temporary: an interrupted conversion must not leave a shorter file, which would
  // read as a valid trace.
  AtomicOutput out(path);
  const Time first = trace.size() ? trace.time[0] : 0;
  std::vector<unsigned char> buf;
  buf.reserve(std::min<uint64_t>(n, 1 << 16) * kOracleGeneralRecordBytes);
  auto flush = [&] {
    out.write(buf.data(), buf.size());
    buf.clear();
  };
  for (size_t r = 0; r < trace.size(); ++r) {
    Time seconds = (trace.time[r] - first) / kMicrosPerSecond;
    if (seconds < 0 || seconds > UINT32_MAX)
      throw ConfigError("request " + std::to_string(r) +
                        ": time does not fit oracleGeneral's 32-bit seconds");
    uint32_t clock = static_cast<uint32_t>(seconds);
    for (uint64_t a = trace.block_offset[r]; a < trace.block_offset[r + 1]; ++a) {
      unsigned char rec[kOracleGeneralRecordBytes];
      std::memcpy(rec, &clock, 4);
      std::memcpy(rec + 4, &trace.blocks[a], 8);
      std::memcpy(rec + 12, &obj_size, 4);
      std::memcpy(rec + 16, &next[a], 8);
      buf.insert(buf.end(), rec, rec + sizeof rec);
      if (buf.size() >= (1 << 16) * kOracleGeneralRecordBytes) flush();
    }
  }
  flush();
  out.commit();
}

}  // namespace kvpolicy
