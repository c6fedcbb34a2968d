// The native trace format's layout, checksum and raw column I/O, shared by the whole-trace reader
// and writer (native.cc) and the streamed ones (native_stream.cc). Internal to src/trace.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "binary_file.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/trace.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::native {

constexpr char kMagic[8] = {'K', 'V', 'P', 'T', 'R', 'A', 'C', 'E'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kVersionContinuation = 2;  // version 1 + the continuation column
// Version 3: after the category names, u32 flags (kHasContinuation, kHasAssumptions), then with
// kHasAssumptions the model and the statement (Trace::assumptions), each u32 length + bytes.
// Written only for a trace with assumptions, so every other trace stays readable by older builds.
constexpr uint32_t kVersionFlags = 3;
constexpr uint32_t kHasContinuation = 1, kHasAssumptions = 2;
constexpr size_t kHeaderBytes = 48;
constexpr size_t kChecksumOffset = kNativeChecksumOffset;
// Bytes per request over all per-request columns.
constexpr uint64_t kRequestBytes = sizeof(Time) + 4 + 4 + sizeof(CategoryId) + 4 + 4 + 4;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// A fast non-cryptographic checksum: four independent multiply-rotate lanes (several GB/s), so
// checking a load costs far less than reading it. It detects truncation and corruption, not
// tampering.
class Checksum {
 public:
  void add(const void* data, size_t n) {
    feed(data, n);
    end_part();
  }
  // One part given in pieces: feed() each, then end_part(); the value of one add() of it all.
  void feed(const void* data, size_t n) {
    if (n == 0) return;  // an empty column's data() may be null, which memcpy must not see
    const unsigned char* p = static_cast<const unsigned char*>(data);
    part_ += n;
    size_t i = 0;
    if (held_) {
      i = std::min(n, 32 - held_);
      std::memcpy(word_ + held_, p, i);
      held_ += i;
      if (held_ < 32) return;
      mix(word_);
      held_ = 0;
    }
    for (; i + 32 <= n; i += 32) mix(p + i);
    std::memcpy(word_, p + i, n - i);
    held_ = n - i;
  }
  void end_part() {
    uint64_t tail = 0;
    for (size_t i = 0; i < held_; ++i) tail = tail * 257 + word_[i] + 1;
    lane_[0] = mix64(lane_[0] ^ tail ^ part_);
    length_ += part_;
    part_ = held_ = 0;
  }
  uint64_t value() const {
    return mix64(lane_[0] ^ rotl(lane_[1], 17) ^ rotl(lane_[2], 34) ^ rotl(lane_[3], 51) ^ length_);
  }

 private:
  void mix(const unsigned char* p) {
    uint64_t w[4];
    std::memcpy(w, p, 32);
    for (int k = 0; k < 4; ++k) lane_[k] = rotl(lane_[k] ^ w[k], 31) * 0x9e3779b97f4a7c15ULL;
  }
  uint64_t lane_[4] = {1, 2, 3, 4};
  uint64_t length_ = 0, part_ = 0;
  unsigned char word_[32];
  size_t held_ = 0;
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

// The header, name and category names of a native trace, read into `t`, and the column sizes
// checked against the rest of the file (before anything is allocated for them).
struct NativeHeader {
  uint64_t requests = 0, blocks = 0, checksum = 0;
  bool with_continuation = false;
  Checksum sum;  // over what was read so far; the columns continue it
};
inline NativeHeader read_native_header(Reader& in, const std::string& path, Trace& t) {
  unsigned char h[kHeaderBytes];
  in.read(h, kHeaderBytes, "header", nullptr);
  if (std::memcmp(h, kMagic, sizeof kMagic) != 0)
    throw InputError(path, 0, "magic", "not a kvpolicy native trace");
  uint32_t version = get<uint32_t>(h + 8);
  if (version != kVersion && version != kVersionContinuation && version != kVersionFlags)
    throw InputError(path, 0, "version",
                     "native trace version " + std::to_string(version) + ", this build reads " +
                         std::to_string(kVersion) + " to " + std::to_string(kVersionFlags) +
                         " (convert the source trace again)");
  bool with_continuation = version == kVersionContinuation;
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

  NativeHeader out;
  Checksum& sum = out.sum;
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
  if (version == kVersionFlags) {
    unsigned char word[4];
    in.read(word, 4, "flags", &sum);
    uint32_t flags = get<uint32_t>(word);
    if (flags & ~(kHasContinuation | kHasAssumptions))
      throw InputError(path, 0, "flags", "unknown flags (a newer build's trace?)");
    with_continuation = flags & kHasContinuation;
    if (flags & kHasAssumptions) {
      for (std::string* text : {&t.assumptions.model, &t.assumptions.statement}) {
        in.read(word, 4, "assumptions", &sum);
        uint32_t l = get<uint32_t>(word);
        if (l > in.left()) in.truncated("assumptions");
        text->resize(l);
        in.read(text->data(), l, "assumptions", &sum);
      }
      if (t.assumptions.model.empty())
        throw InputError(path, 0, "assumptions", "corrupt native trace: an empty model");
    }
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
  out.requests = n;
  out.blocks = nb;
  out.checksum = checksum;
  out.with_continuation = with_continuation;
  return out;
}

// The checks of request r of `t` (a whole trace or a streamed chunk) that need no other request:
// every native reader, whole or streamed, makes the same ones. `before` is the previous
// request's time (0 for the first), `n` the file's requests, `index` r's place in the file.
inline void check_request(const std::string& path, const Trace& t, size_t r, Time before,
                          uint64_t n, bool with_continuation, uint64_t index) {
  auto fail = [&](const char* field, const std::string& what) {
    throw InputError(path, 0, field, "corrupt native trace: " + what);
  };
  if (t.block_offset[r] > t.block_offset[r + 1]) fail("block_offset", "decreasing offsets");
  if (t.time[r] < before) fail("time", "times go back");
  if (t.time[r] >= kMaxTime) fail("time", "a time past 2^62 microseconds");
  if (t.turn[r] == 0) fail("turn", "turn 0");
  // Every reader numbers sessions densely, and whole-trace passes size arrays by them.
  if (t.session[r] != kNoSession && t.session[r] >= n)
    fail("session", "session id " + std::to_string(t.session[r]) + " of request " +
                        std::to_string(index) + " is not below the " + std::to_string(n) +
                        " requests");
  const size_t categories = t.category_names.size();
  if (categories && t.category[r] >= categories) fail("category", "unknown category");
  if (with_continuation && !(t.continuation[r] >= 0 && t.continuation[r] <= 1))
    fail("continuation", "not a probability");
}

// The stream reader (native_stream.cc), registered with the format in native.cc.
std::unique_ptr<TraceStream> open_stream(const std::string& path, const ReadOptions& opts);

}  // namespace kvpolicy::native
