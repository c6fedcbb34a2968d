// The native binary cache of a parsed trace (.kvtrace). Layout, all little-endian:
//   header (48 bytes): magic "KVPTRACE", u32 version, u32 block_tokens, u64 requests,
//     u64 block accesses, u32 name bytes, u32 categories, u64 checksum of everything else;
//   the name; per category u32 length + bytes;
//   columns as raw arrays: time i64[n], session u32[n], turn u32[n], category u16[n], user u32[n],
//     prompt_tokens u32[n], output_tokens u32[n], block_offset u64[n+1], blocks u64[blocks];
//   version 2 only: continuation f32[n] (Trace::continuation, each in [0, 1]).
// A trace without the continuation column is written as version 1, byte for byte as before, so
// older builds still read it; version 2 is written only when the column is present.
// A load is one read per column; the checksum and the structural checks turn a truncated or
// corrupt file into an InputError.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy {

static_assert(std::endian::native == std::endian::little,
              "native traces are read and written as raw little-endian arrays");

namespace {

constexpr char kMagic[8] = {'K', 'V', 'P', 'T', 'R', 'A', 'C', 'E'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kVersionContinuation = 2;  // version 1 + the continuation column
constexpr size_t kHeaderBytes = 48;
constexpr size_t kChecksumOffset = kNativeChecksumOffset;
// Bytes per request over all per-request columns.
constexpr uint64_t kRequestBytes = sizeof(Time) + 4 + 4 + sizeof(CategoryId) + 4 + 4 + 4;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// A fast non-cryptographic checksum: four independent multiply-rotate lanes (several GB/s), so
// checking a load costs far less than reading it. It detects truncation and corruption, not
// tampering.
class Checksum {
 public:
  void add(const void* data, size_t n) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
      uint64_t w[4];
      std::memcpy(w, p + i, 32);
      for (int k = 0; k < 4; ++k) lane_[k] = rotl(lane_[k] ^ w[k], 31) * 0x9e3779b97f4a7c15ULL;
    }
    uint64_t tail = 0;
    for (; i < n; ++i) tail = tail * 257 + p[i] + 1;
    lane_[0] = mix64(lane_[0] ^ tail ^ n);
    length_ += n;
  }
  uint64_t value() const {
    return mix64(lane_[0] ^ rotl(lane_[1], 17) ^ rotl(lane_[2], 34) ^ rotl(lane_[3], 51) ^ length_);
  }

 private:
  uint64_t lane_[4] = {1, 2, 3, 4};
  uint64_t length_ = 0;
};

template <typename T>
void put(unsigned char* p, T v) {
  std::memcpy(p, &v, sizeof v);
}
template <typename T>
T get(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

class Writer {
 public:
  explicit Writer(AtomicOutput& out) : out_(out) {}
  void write(const void* data, size_t n, Checksum* sum) {
    out_.write(data, n);
    if (sum) sum->add(data, n);
  }
  template <typename T>
  void column(const std::vector<T>& v, Checksum& sum) {
    write(v.data(), v.size() * sizeof(T), &sum);
  }

 private:
  AtomicOutput& out_;
};

class Reader {
 public:
  Reader(std::FILE* f, const std::string& path, uint64_t size) : f_(f), path_(path), left_(size) {}
  void read(void* data, uint64_t n, const char* what, Checksum* sum) {
    if (n > left_) truncated(what);
    if (n && std::fread(data, 1, n, f_) != n) truncated(what);
    left_ -= n;
    if (sum) sum->add(data, n);
  }
  template <typename T>
  void column(std::vector<T>& v, uint64_t count, const char* what, Checksum& sum) {
    if (count > left_ / sizeof(T)) truncated(what);
    v.resize(count);
    read(v.data(), count * sizeof(T), what, &sum);
  }
  uint64_t left() const { return left_; }
  [[noreturn]] void truncated(const char* what) const {
    throw InputError(path_, 0, what, "truncated native trace");
  }

 private:
  std::FILE* f_;
  const std::string& path_;
  uint64_t left_;
};

// The columns as stored, with the checksum they hold and the one they have; the checks that
// need the contents come after the checksum's.
struct Unchecked {
  Trace trace;
  bool with_continuation = false;
  uint64_t stored = 0, computed = 0;
};

Unchecked read_columns(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) throw InputError(path, 0, "", "cannot read file");
  if (std::fseek(f.get(), 0, SEEK_END) != 0) throw InputError(path, 0, "", "cannot read file");
  long size = std::ftell(f.get());
  if (size < 0) throw InputError(path, 0, "", "cannot read file");
  std::rewind(f.get());
  if (size == 0) throw InputError(path, 0, "", "empty file");
  Reader in(f.get(), path, static_cast<uint64_t>(size));

  unsigned char h[kHeaderBytes];
  in.read(h, kHeaderBytes, "header", nullptr);
  if (std::memcmp(h, kMagic, sizeof kMagic) != 0)
    throw InputError(path, 0, "magic", "not a kvpolicy native trace");
  uint32_t version = get<uint32_t>(h + 8);
  if (version != kVersion && version != kVersionContinuation)
    throw InputError(path, 0, "version",
                     "native trace version " + std::to_string(version) + ", this build reads " +
                         std::to_string(kVersion) + " and " + std::to_string(kVersionContinuation) +
                         " (convert the source trace again)");
  const bool with_continuation = version == kVersionContinuation;
  Trace t;
  t.block_tokens = get<uint32_t>(h + 12);
  uint64_t n = get<uint64_t>(h + 16);
  uint64_t nb = get<uint64_t>(h + 24);
  uint32_t name_bytes = get<uint32_t>(h + 32);
  uint32_t categories = get<uint32_t>(h + 36);
  uint64_t checksum = get<uint64_t>(h + kChecksumOffset);
  if (t.block_tokens == 0) throw InputError(path, 0, "block_tokens", "zero");
  if (n >= UINT32_MAX) throw InputError(path, 0, "requests", "too many requests");
  if (categories > std::numeric_limits<CategoryId>::max() + 1u)
    throw InputError(path, 0, "categories", "too many categories");

  Checksum sum;
  sum.add(h, kChecksumOffset);
  if (name_bytes > in.left()) in.truncated("name");
  t.name.resize(name_bytes);
  in.read(t.name.data(), name_bytes, "name", &sum);
  t.category_names.resize(categories);
  for (auto& c : t.category_names) {
    unsigned char len[4];
    in.read(len, 4, "category_names", &sum);
    uint32_t l = get<uint32_t>(len);
    if (l > in.left()) in.truncated("category_names");
    c.resize(l);
    in.read(c.data(), l, "category_names", &sum);
  }
  // The columns must fill the rest exactly; checked before allocating anything.
  const uint64_t request_bytes = kRequestBytes + (with_continuation ? sizeof(float) : 0);
  if (nb > in.left() / 8 || n > in.left() / request_bytes ||
      in.left() != n * request_bytes + (n + 1) * 8 + nb * 8) {
    if (nb <= in.left() / 8 && n <= in.left() / request_bytes &&
        in.left() > n * request_bytes + (n + 1) * 8 + nb * 8)
      throw InputError(path, 0, "", "corrupt native trace: trailing bytes");
    in.truncated("columns");
  }
  in.column(t.time, n, "time", sum);
  in.column(t.session, n, "session", sum);
  in.column(t.turn, n, "turn", sum);
  in.column(t.category, n, "category", sum);
  in.column(t.user, n, "user", sum);
  in.column(t.prompt_tokens, n, "prompt_tokens", sum);
  in.column(t.output_tokens, n, "output_tokens", sum);
  in.column(t.block_offset, n + 1, "block_offset", sum);
  in.column(t.blocks, nb, "blocks", sum);
  if (with_continuation) in.column(t.continuation, n, "continuation", sum);
  return {std::move(t), with_continuation, checksum, sum.value()};
}

Trace read_native(const std::string& path, const ReadOptions& opts, ReadReport& report) {
  Unchecked columns = read_columns(path);
  Trace& t = columns.trace;
  const bool with_continuation = columns.with_continuation;
  if (columns.stored != columns.computed)
    throw InputError(path, 0, "checksum", "corrupt native trace: checksum mismatch");
  const uint64_t n = t.size(), nb = t.blocks.size(), categories = t.category_names.size();

  // Structure, in case a file was written by something else.
  if (t.block_offset[0] != 0 || t.block_offset[n] != nb)
    throw InputError(path, 0, "block_offset", "corrupt native trace: offsets do not cover blocks");
  for (uint64_t r = 0; r < n; ++r) {
    if (t.block_offset[r] > t.block_offset[r + 1])
      throw InputError(path, 0, "block_offset", "corrupt native trace: decreasing offsets");
    if (r ? t.time[r] < t.time[r - 1] : t.time[0] < 0)
      throw InputError(path, 0, "time", "corrupt native trace: times go back");
    if (t.turn[r] == 0) throw InputError(path, 0, "turn", "corrupt native trace: turn 0");
    // Every reader numbers sessions densely, and whole-trace passes size arrays by them.
    if (t.session[r] != kNoSession && t.session[r] >= n)
      throw InputError(path, 0, "session",
                       "corrupt native trace: session id " + std::to_string(t.session[r]) +
                           " of request " + std::to_string(r) + " is not below the " +
                           std::to_string(n) + " requests");
    if (categories && t.category[r] >= categories)
      throw InputError(path, 0, "category", "corrupt native trace: unknown category");
    if (with_continuation && !(t.continuation[r] >= 0 && t.continuation[r] <= 1))
      throw InputError(path, 0, "continuation", "corrupt native trace: not a probability");
  }
  report.lines = n;
  if (opts.block_tokens) t.block_tokens = opts.block_tokens;
  if (opts.max_requests && opts.max_requests < n) {
    size_t m = opts.max_requests;
    for (auto* col : {&t.session, &t.turn, &t.user, &t.prompt_tokens, &t.output_tokens})
      col->resize(m);
    t.time.resize(m);
    t.category.resize(m);
    if (with_continuation) t.continuation.resize(m);
    t.block_offset.resize(m + 1);
    t.blocks.resize(t.block_offset[m]);
  }
  if (t.name.empty()) t.name = path;
  return t;
}

TraceFormatRegistrar registrar({"native",
                                "kvpolicy's binary cache of a parsed trace (.kvtrace; write it "
                                "with `kvpolicy trace convert --to native`)",
                                read_native});

}  // namespace

std::optional<uint64_t> native_trace_checksum(const std::string& path) {
  try {
    return read_columns(path).computed;
  } catch (const InputError&) {
    return std::nullopt;
  }
}

void write_native(const Trace& trace, const std::string& path) {
  trace.validate();
  if (trace.category_names.size() > std::numeric_limits<CategoryId>::max() + 1u)
    throw ConfigError("too many categories for a native trace");
  // Through a temporary: an interrupted write must not leave a file that fails its checksum
  // where a good cache was.
  AtomicOutput file(path);
  Writer out(file);
  unsigned char h[kHeaderBytes] = {};
  std::memcpy(h, kMagic, sizeof kMagic);
  put<uint32_t>(h + 8, trace.has_continuation() ? kVersionContinuation : kVersion);
  put<uint32_t>(h + 12, trace.block_tokens);
  put<uint64_t>(h + 16, trace.size());
  put<uint64_t>(h + 24, trace.blocks.size());
  put<uint32_t>(h + 32, static_cast<uint32_t>(trace.name.size()));
  put<uint32_t>(h + 36, static_cast<uint32_t>(trace.category_names.size()));
  // The checksum is known only at the end: write the header, then patch it.
  out.write(h, kHeaderBytes, nullptr);
  Checksum sum;
  sum.add(h, kChecksumOffset);
  out.write(trace.name.data(), trace.name.size(), &sum);
  for (auto& c : trace.category_names) {
    unsigned char len[4];
    put<uint32_t>(len, static_cast<uint32_t>(c.size()));
    out.write(len, 4, &sum);
    out.write(c.data(), c.size(), &sum);
  }
  out.column(trace.time, sum);
  out.column(trace.session, sum);
  out.column(trace.turn, sum);
  out.column(trace.category, sum);
  out.column(trace.user, sum);
  out.column(trace.prompt_tokens, sum);
  out.column(trace.output_tokens, sum);
  out.column(trace.block_offset, sum);
  out.column(trace.blocks, sum);
  if (trace.has_continuation()) out.column(trace.continuation, sum);
  put<uint64_t>(h + kChecksumOffset, sum.value());
  if (std::fseek(file.file(), static_cast<long>(kChecksumOffset), SEEK_SET) != 0)
    throw Error("writing '" + path + "' failed (cannot seek back to the header: not a file?)");
  out.write(h + kChecksumOffset, 8, nullptr);
  file.commit();
}

}  // namespace kvpolicy
