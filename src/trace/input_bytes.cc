#include "kvpolicy/trace/input_bytes.h"

#include <fmt/format.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/input_file.h"

namespace kvpolicy {
namespace {

constexpr size_t kChunk = size_t{1} << 20;

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f && f != stdin) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Reads the compressed (or plain) bytes a chunk at a time, keeping `head` bytes peeked.
class Source {
 public:
  Source(const std::string& path, std::string_view what) : path_(path) {
    if (path == "-") {
      f_.reset(stdin);
    } else {
      // Before anything opens it: a FIFO would block the open, /dev/zero would never end.
      size_ = require_regular_file(path, what);
      f_.reset(std::fopen(path.c_str(), "rb"));
      if (!f_) throw InputError(path, 0, "", "cannot open file");
    }
  }
  bool is_stdin() const { return path_ == "-"; }
  uint64_t size() const { return size_; }
  // Up to kChunk more bytes; empty at the end.
  std::string_view read() {
    buf_.resize(kChunk);
    size_t got = std::fread(buf_.data(), 1, buf_.size(), f_.get());
    if (got == 0 && std::ferror(f_.get())) throw InputError(path_, 0, "", "read failed");
    return {buf_.data(), got};
  }

 private:
  const std::string& path_;
  File f_;
  uint64_t size_ = 0;
  std::string buf_;
};

// Thrown by Growth once a head of `limit` bytes is read (read_input_head): the rest is not needed.
struct Enough {};

// The output grows past what the machine holds: one clear error, checked each time it doubles.
class Growth {
 public:
  Growth(const std::string& path, std::string_view hint, size_t limit = SIZE_MAX)
      : path_(path), hint_(hint), limit_(limit) {}
  void check(const std::string& out) {
    if (out.size() >= limit_) throw Enough{};
    if (out.size() < next_) return;
    require_memory_for_file(path_, out.size(), hint_);
    next_ = out.size() * 2;
  }

 private:
  const std::string& path_;
  std::string_view hint_;
  size_t limit_;
  size_t next_ = size_t{64} << 20;
};

// gzip members one after another (windowBits 15 + 32: a gzip or zlib header, detected).
void inflate_all(const std::string& path, std::string_view first, Source& src, std::string& out,
                 Growth& growth) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) throw InputError(path, 0, "", "zlib: out of memory");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, inflateEnd);
  std::string in(first);
  std::string chunk(kChunk, '\0');
  bool in_member = true;  // inside a member that has not ended yet
  for (;;) {
    if (in.empty()) {
      std::string_view more = src.read();
      if (more.empty()) break;
      in.assign(more);
    }
    z.next_in = reinterpret_cast<Bytef*>(in.data());
    z.avail_in = static_cast<uInt>(in.size());
    while (z.avail_in > 0) {
      if (!in_member) {
        // A next member must start with gzip's magic; anything else is not gzip.
        if (z.avail_in >= 1 && z.next_in[0] != 0x1f)
          throw InputError(path, 0, "",
                           "corrupt gzip data: bytes after the end of a gzip member that "
                           "do not start another");
        if (inflateReset(&z) != Z_OK) throw InputError(path, 0, "", "zlib: reset failed");
        in_member = true;
      }
      z.next_out = reinterpret_cast<Bytef*>(chunk.data());
      z.avail_out = static_cast<uInt>(chunk.size());
      int rc = inflate(&z, Z_NO_FLUSH);
      out.append(chunk.data(), chunk.size() - z.avail_out);
      growth.check(out);
      if (rc == Z_STREAM_END) {
        in_member = false;
      } else if (rc == Z_BUF_ERROR) {
        break;  // needs more input
      } else if (rc != Z_OK) {
        throw InputError(path, 0, "",
                         fmt::format("corrupt gzip data ({})", z.msg ? z.msg : zError(rc)));
      }
    }
    // Bytes zlib has not taken stay for the next round (none, in practice).
    in.erase(0, in.size() - z.avail_in);
  }
  if (in_member)
    throw InputError(path, 0, "", "truncated gzip data: the input ends inside a gzip member");
}

// zstd frames one after another.
void zstd_all(const std::string& path, std::string_view first, Source& src, std::string& out,
              Growth& growth) {
  std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> d(ZSTD_createDStream(),
                                                             ZSTD_freeDStream);
  if (!d) throw InputError(path, 0, "", "zstd: out of memory");
  ZSTD_initDStream(d.get());
  std::string in(first);
  std::string chunk(ZSTD_DStreamOutSize(), '\0');
  size_t last = 0;  // 0 = at a frame's end
  bool any = false;
  for (;;) {
    if (in.empty()) {
      std::string_view more = src.read();
      if (more.empty()) break;
      in.assign(more);
    }
    ZSTD_inBuffer ib{in.data(), in.size(), 0};
    while (ib.pos < ib.size) {
      ZSTD_outBuffer ob{chunk.data(), chunk.size(), 0};
      last = ZSTD_decompressStream(d.get(), &ob, &ib);
      if (ZSTD_isError(last))
        throw InputError(path, 0, "",
                         fmt::format("corrupt zstd data ({})", ZSTD_getErrorName(last)));
      any = true;
      out.append(chunk.data(), ob.pos);
      growth.check(out);
    }
    in.clear();
  }
  // Flush what the decoder holds once the input is all given.
  for (;;) {
    ZSTD_inBuffer ib{nullptr, 0, 0};
    ZSTD_outBuffer ob{chunk.data(), chunk.size(), 0};
    if (last == 0) break;
    last = ZSTD_decompressStream(d.get(), &ob, &ib);
    if (ZSTD_isError(last))
      throw InputError(path, 0, "", fmt::format("corrupt zstd data ({})", ZSTD_getErrorName(last)));
    out.append(chunk.data(), ob.pos);
    growth.check(out);
    if (ob.pos == 0) break;
  }
  if (!any || last != 0)
    throw InputError(path, 0, "", "truncated zstd data: the input ends inside a zstd frame");
}

}  // namespace

const char* compression_name(InputCompression c) {
  switch (c) {
    case InputCompression::kGzip:
      return "gzip";
    case InputCompression::kZstd:
      return "zstd";
    default:
      return "none";
  }
}

InputCompression detect_compression(std::string_view head) {
  if (head.size() >= 2 && uint8_t(head[0]) == 0x1f && uint8_t(head[1]) == 0x8b)
    return InputCompression::kGzip;
  if (head.size() >= 4 && std::memcmp(head.data(), "\x28\xb5\x2f\xfd", 4) == 0)
    return InputCompression::kZstd;
  return InputCompression::kNone;
}

bool input_needs_decoding(const std::string& path) {
  if (path == "-") return true;
  // Never open a FIFO or a device here (the open would block): the reader refuses them.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return false;  // the caller's own open reports it
  char head[4];
  size_t got = std::fread(head, 1, sizeof head, f.get());
  return detect_compression({head, got}) != InputCompression::kNone;
}

std::string read_input_head(const std::string& path, size_t bytes) {
  Source src(path, "traces");
  Growth growth(path, "", bytes);
  std::string out, first(src.read());
  try {
    InputCompression c = detect_compression(first);
    if (c == InputCompression::kGzip)
      inflate_all(path, first, src, out, growth);
    else if (c == InputCompression::kZstd)
      zstd_all(path, first, src, out, growth);
    else
      out = std::move(first);
  } catch (const Enough&) {
  }
  if (out.size() > bytes) out.resize(bytes);
  return out;
}

std::string read_input_bytes(const std::string& path, std::string_view what, std::string_view hint,
                             InputCompression* compression) {
  Source src(path, what);
  Growth growth(path, hint);
  std::string out;
  // The first chunk says what the input is; a plain file is read whole at its known size.
  std::string first(src.read());
  InputCompression c = detect_compression(first);
  if (compression) *compression = c;
  if (c == InputCompression::kGzip) {
    inflate_all(path, first, src, out, growth);
  } else if (c == InputCompression::kZstd) {
    zstd_all(path, first, src, out, growth);
  } else {
    if (!src.is_stdin()) {
      require_memory_for_file(path, src.size(), hint);
      out.reserve(src.size());
    }
    out.append(first);
    for (std::string_view more; !(more = src.read()).empty();) {
      out.append(more);
      growth.check(out);
    }
  }
  return out;
}

}  // namespace kvpolicy
