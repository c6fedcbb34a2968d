// The native format streamed: a reader that reads each column's range for a chunk of requests
// (pread, so memory is one chunk), and a writer that places each request's values at their
// columns' offsets as they come (`trace generate` of traces too large to hold).
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "kvpolicy/trace/trace_io.h"
#include "kvpolicy/trace/trace_stream.h"
#include "native_layout.h"

namespace kvpolicy {

using namespace native;

namespace {

// Byte offsets of the columns, in file order.
struct ColumnOffsets {
  uint64_t time, session, turn, category, user, prompt, output, offset, blocks, continuation;
  ColumnOffsets(uint64_t start, uint64_t n, uint64_t nb) {
    time = start;
    session = time + n * sizeof(Time);
    turn = session + n * 4;
    category = turn + n * 4;
    user = category + n * sizeof(CategoryId);
    prompt = user + n * 4;
    output = prompt + n * 4;
    offset = output + n * 4;
    blocks = offset + (n + 1) * 8;
    continuation = blocks + nb * 8;
  }
};

// Whole-file checks (the checksum) need a pass over every column; a stream checks each chunk's
// structure instead, which catches what a truncated or foreign file breaks.
class NativeStream final : public TraceStream {
 public:
  NativeStream(const std::string& path, const ReadOptions& opts) : path_(path), opts_(opts) {
    uint64_t size;
    f_ = open_binary_trace(path, size);
    Reader in(f_.get(), path_, size);
    NativeHeader head = read_native_header(in, path_, header_);
    n_ = head.requests;
    nb_ = head.blocks;
    with_continuation_ = head.with_continuation;
    cols_.emplace(size - in.left(), n_, nb_);
    if (opts.block_tokens) header_.block_tokens = opts.block_tokens;
    if (header_.name.empty()) header_.name = path;
    end_ = opts.max_requests ? std::min<uint64_t>(opts.max_requests, n_) : n_;
    report_.lines = n_;
  }

  bool next(Trace& chunk, size_t max_requests) override {
    chunk.clear_requests();
    chunk.name = header_.name;
    chunk.block_tokens = header_.block_tokens;
    if (chunk.category_names.size() != header_.category_names.size())
      chunk.category_names = header_.category_names;
    if (chunk.assumptions != header_.assumptions) chunk.assumptions = header_.assumptions;
    uint64_t k = std::min<uint64_t>(max_requests, end_ - done_);
    if (k == 0) return false;
    const ColumnOffsets& c = *cols_;
    read(chunk.time, c.time, k, "time");
    read(chunk.session, c.session, k, "session");
    read(chunk.turn, c.turn, k, "turn");
    read(chunk.category, c.category, k, "category");
    read(chunk.user, c.user, k, "user");
    read(chunk.prompt_tokens, c.prompt, k, "prompt_tokens");
    read(chunk.output_tokens, c.output, k, "output_tokens");
    read(chunk.block_offset, c.offset, k + 1, "block_offset");
    if (with_continuation_) read(chunk.continuation, c.continuation, k, "continuation");
    uint64_t first = chunk.block_offset[0], last = chunk.block_offset[k];
    if ((done_ == 0 && first != 0) || first != next_block_ || last < first || last > nb_ ||
        (done_ + k == n_ && last != nb_))
      fail("block_offset", "corrupt native trace: offsets do not cover blocks");
    chunk.blocks.resize(last - first);
    pread_all(chunk.blocks.data(), (last - first) * 8, c.blocks + first * 8, "blocks");
    for (uint64_t& o : chunk.block_offset) o -= first;  // a wrapped one fails the check below
    for (uint64_t r = 0; r < k; ++r) {
      check_request(path_, chunk, r, last_time_, n_, with_continuation_, done_ + r);
      last_time_ = chunk.time[r];
    }
    next_block_ = last;
    done_ += k;
    return true;
  }
  const ReadReport& report() const override { return report_; }

 private:
  [[noreturn]] void fail(const char* field, const std::string& what) const {
    throw InputError(path_, 0, field, what);
  }
  void pread_all(void* out, uint64_t bytes, uint64_t at, const char* field) {
    char* p = static_cast<char*>(out);
    while (bytes) {
      ssize_t got = ::pread(fileno(f_.get()), p, bytes, static_cast<off_t>(at));
      if (got <= 0) fail(field, "truncated native trace");
      p += got;
      at += got;
      bytes -= got;
    }
  }
  template <typename T>
  void read(std::vector<T>& col, uint64_t column_at, uint64_t count, const char* field) {
    col.resize(count);
    pread_all(col.data(), count * sizeof(T), column_at + done_ * sizeof(T), field);
  }

  std::string path_;
  ReadOptions opts_;
  File f_;
  Trace header_;  // name, block size, categories and assumptions
  uint64_t n_ = 0, nb_ = 0, end_ = 0, done_ = 0, next_block_ = 0;
  bool with_continuation_ = false;
  std::optional<ColumnOffsets> cols_;
  Time last_time_ = 0;
  ReadReport report_;
};

}  // namespace

std::unique_ptr<TraceStream> native::open_stream(const std::string& path, const ReadOptions& opts) {
  return std::make_unique<NativeStream>(path, opts);
}

// Each column gets a buffer of kBuffered values, written at its place when full.
struct NativeTraceWriter::Columns {
  static constexpr size_t kBuffered = 1 << 15;
  std::vector<Time> time;
  std::vector<SessionId> session;
  std::vector<uint32_t> turn, user, prompt, output;
  std::vector<CategoryId> category;
  std::vector<uint64_t> offset, blocks;
  uint64_t rows_on_disk = 0, offsets_on_disk = 0, blocks_on_disk = 0;
};

NativeTraceWriter::NativeTraceWriter(const std::string& path, const std::string& name,
                                     uint32_t block_tokens, uint64_t requests,
                                     uint64_t block_accesses)
    : out_(std::make_unique<AtomicOutput>(path)),
      cols_(std::make_unique<Columns>()),
      name_(name),
      block_tokens_(block_tokens),
      n_(requests),
      nb_(block_accesses) {
  if (requests >= UINT32_MAX) throw ConfigError("native trace: too many requests");
  if (block_tokens == 0) throw ConfigError("native trace: block size 0");
  cols_->offset.push_back(0);
}

NativeTraceWriter::~NativeTraceWriter() = default;

namespace {
void pwrite_all(AtomicOutput& out, const void* data, uint64_t bytes, uint64_t at) {
  const char* p = static_cast<const char*>(data);
  while (bytes) {
    ssize_t put = ::pwrite(fileno(out.file()), p, bytes, static_cast<off_t>(at));
    if (put <= 0) throw Error("writing '" + out.path() + "' failed (disk full?)");
    p += put;
    at += static_cast<uint64_t>(put);
    bytes -= static_cast<uint64_t>(put);
  }
}
}  // namespace

void NativeTraceWriter::flush() {
  Columns& c = *cols_;
  const uint64_t base = kHeaderBytes + name_.size();
  ColumnOffsets at(base, n_, nb_);
  auto put_column = [&](auto& col, uint64_t column_at, uint64_t index) {
    using T = typename std::decay_t<decltype(col)>::value_type;
    pwrite_all(*out_, col.data(), col.size() * sizeof(T), column_at + index * sizeof(T));
    col.clear();
  };
  uint64_t rows = c.time.size();
  put_column(c.time, at.time, c.rows_on_disk);
  put_column(c.session, at.session, c.rows_on_disk);
  put_column(c.turn, at.turn, c.rows_on_disk);
  put_column(c.category, at.category, c.rows_on_disk);
  put_column(c.user, at.user, c.rows_on_disk);
  put_column(c.prompt, at.prompt, c.rows_on_disk);
  put_column(c.output, at.output, c.rows_on_disk);
  c.rows_on_disk += rows;
  uint64_t offsets = c.offset.size(), blocks = c.blocks.size();
  put_column(c.offset, at.offset, c.offsets_on_disk);
  put_column(c.blocks, at.blocks, c.blocks_on_disk);
  c.offsets_on_disk += offsets;
  c.blocks_on_disk += blocks;
}

void NativeTraceWriter::add_request_keys(Time t, std::span<const BlockKey> keys,
                                         uint32_t prompt_tok, uint32_t output_tok, SessionId s,
                                         uint32_t turn_no, CategoryId cat, uint32_t user_id) {
  if (requests_ == n_) throw Error("native trace writer: more requests than announced");
  if (t < last_time_) throw Error("native trace writer: a request goes back in time");
  if (blocks_ + keys.size() > nb_) throw Error("native trace writer: more blocks than announced");
  last_time_ = t;
  Columns& c = *cols_;
  c.time.push_back(t);
  c.session.push_back(s);
  c.turn.push_back(turn_no);
  c.category.push_back(cat);
  c.user.push_back(user_id);
  c.prompt.push_back(prompt_tok);
  c.output.push_back(output_tok);
  blocks_ += keys.size();
  c.offset.push_back(blocks_);
  c.blocks.insert(c.blocks.end(), keys.begin(), keys.end());
  ++requests_;
  if (c.time.size() >= Columns::kBuffered || c.blocks.size() >= Columns::kBuffered * 8) flush();
}

void NativeTraceWriter::finish() {
  if (requests_ != n_ || blocks_ != nb_)
    throw Error("native trace writer: " + std::to_string(requests_) + " requests and " +
                std::to_string(blocks_) + " blocks written, " + std::to_string(n_) + " and " +
                std::to_string(nb_) + " announced");
  flush();
  unsigned char h[kHeaderBytes] = {};
  std::memcpy(h, kMagic, sizeof kMagic);
  put<uint32_t>(h + 8, kVersion);
  put<uint32_t>(h + 12, block_tokens_);
  put<uint64_t>(h + 16, n_);
  put<uint64_t>(h + 24, nb_);
  put<uint32_t>(h + 32, static_cast<uint32_t>(name_.size()));
  put<uint32_t>(h + 36, 0);
  // The checksum runs over the columns in file order, one part per column as write_native adds
  // them: read them back in pieces.
  Checksum sum;
  sum.add(h, kChecksumOffset);
  sum.add(name_.data(), name_.size());
  const uint64_t base = kHeaderBytes + name_.size();
  ColumnOffsets at(base, n_, nb_);
  const uint64_t bounds[] = {at.time,   at.session, at.turn,   at.category, at.user,
                             at.prompt, at.output,  at.offset, at.blocks,   at.continuation};
  int fd = fileno(out_->file());
  std::vector<char> buf(size_t{8} << 20);
  for (size_t col = 0; col + 1 < std::size(bounds); ++col) {
    for (uint64_t pos = bounds[col]; pos < bounds[col + 1];) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), bounds[col + 1] - pos));
      ssize_t got = ::pread(fd, buf.data(), want, static_cast<off_t>(pos));
      if (got <= 0) throw Error("reading back '" + out_->path() + "' failed");
      sum.feed(buf.data(), static_cast<size_t>(got));
      pos += static_cast<uint64_t>(got);
    }
    sum.end_part();
  }
  put<uint64_t>(h + kChecksumOffset, sum.value());
  pwrite_all(*out_, h, kHeaderBytes, 0);
  pwrite_all(*out_, name_.data(), name_.size(), kHeaderBytes);
  out_->commit();
}

}  // namespace kvpolicy
