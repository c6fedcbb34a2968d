// The native binary cache of a parsed trace (.kvtrace). Layout, all little-endian:
//   header (48 bytes): magic "KVPTRACE", u32 version, u32 block_tokens, u64 requests,
//     u64 block accesses, u32 name bytes, u32 categories, u64 checksum of everything else;
//   the name; per category u32 length + bytes;
//   columns as raw arrays: time i64[n], session u32[n], turn u32[n], category u16[n], user u32[n],
//     prompt_tokens u32[n], output_tokens u32[n], block_offset u64[n+1], blocks u64[blocks];
//   version 2 only: continuation f32[n] (Trace::continuation, each in [0, 1]).
//   version 3: after the category names, u32 flags, then the assumptions (native_layout.h);
//     the continuation column as in version 2 when its flag is set.
// A trace without the continuation column is written as version 1, byte for byte as before, so
// older builds still read it; version 2 is written only when the column is present, version 3
// only when the trace carries assumptions (a length-only log's, `trace import --assume`).
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
#include "kvpolicy/core/input_file.h"
#include "kvpolicy/trace/trace_io.h"
#include "kvpolicy/trace/trace_stream.h"
#include "native_layout.h"

namespace kvpolicy {

static_assert(std::endian::native == std::endian::little,
              "native traces are read and written as raw little-endian arrays");

namespace {

using namespace native;

// The columns as stored, with the checksum they hold and the one they have; the checks that
// need the contents come after the checksum's.
struct Unchecked {
  Trace trace;
  bool with_continuation = false;
  uint64_t stored = 0, computed = 0;
};

Unchecked read_columns(const std::string& path) {
  uint64_t size;
  File f = open_binary_trace(path, size);
  // The columns fill the file (read_native_header checks it): a sparse file claims them all.
  require_memory_for_file(path, size, kStreamHint);
  Reader in(f.get(), path, size);

  Trace t;
  NativeHeader head = read_native_header(in, path, t);
  const uint64_t n = head.requests, nb = head.blocks;
  const bool with_continuation = head.with_continuation;
  Checksum& sum = head.sum;
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
  return {std::move(t), with_continuation, head.checksum, sum.value()};
}

Trace read_native(const std::string& path, const ReadOptions& opts, ReadReport& report) {
  Unchecked columns = read_columns(path);
  Trace& t = columns.trace;
  const bool with_continuation = columns.with_continuation;
  if (columns.stored != columns.computed)
    throw InputError(path, 0, "checksum", "corrupt native trace: checksum mismatch");
  const uint64_t n = t.size(), nb = t.blocks.size();

  // Structure, in case a file was written by something else.
  if (t.block_offset[0] != 0 || t.block_offset[n] != nb)
    throw InputError(path, 0, "block_offset", "corrupt native trace: offsets do not cover blocks");
  for (uint64_t r = 0; r < n; ++r)
    check_request(path, t, r, r ? t.time[r - 1] : 0, n, with_continuation, r);
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
                                read_native, native::open_stream});

}  // namespace

std::optional<uint64_t> native_trace_checksum(const std::string& path) {
  try {
    return read_columns(path).computed;
  } catch (const InputError&) {
    return std::nullopt;
  }
}

void write_native(const Trace& trace, const std::string& path) {
  using namespace native;
  trace.validate();
  // Refused rather than dropped: a cached copy must replay like its source (docs/formats.md).
  if (trace.has_priority())
    throw ConfigError("trace '" + trace.name +
                      "' has a priority column, which the native format does not carry yet: "
                      "replay the JSONL file itself");
  if (trace.has_hints())
    throw ConfigError("trace '" + trace.name +
                      "' has a hints column, which the native format does not carry yet: "
                      "replay the JSONL file itself");
  if (trace.category_names.size() > std::numeric_limits<CategoryId>::max() + 1u)
    throw ConfigError("too many categories for a native trace");
  // Through a temporary: an interrupted write must not leave a file that fails its checksum
  // where a good cache was.
  AtomicOutput file(path);
  Writer out(file);
  unsigned char h[kHeaderBytes] = {};
  std::memcpy(h, kMagic, sizeof kMagic);
  const bool flagged = !trace.assumptions.empty();
  put<uint32_t>(h + 8, flagged                    ? kVersionFlags
                       : trace.has_continuation() ? kVersionContinuation
                                                  : kVersion);
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
  if (flagged) {
    unsigned char word[4];
    put<uint32_t>(word, kHasAssumptions | (trace.has_continuation() ? kHasContinuation : 0));
    out.write(word, 4, &sum);
    for (const std::string* text : {&trace.assumptions.model, &trace.assumptions.statement}) {
      put<uint32_t>(word, static_cast<uint32_t>(text->size()));
      out.write(word, 4, &sum);
      out.write(text->data(), text->size(), &sum);
    }
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
