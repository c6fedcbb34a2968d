// A log or trace read whole as bytes, decompressed: a file or standard input ("-"), plain, gzip
// or zstd, told apart by their first bytes rather than the file's name (docs/formats.md,
// "Compressed input and standard input").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kvpolicy {

// How the bytes of an input were stored.
enum class InputCompression { kNone, kGzip, kZstd };

// "none", "gzip" or "zstd".
const char* compression_name(InputCompression c);

// The compression of `head`, an input's first bytes: gzip (1f 8b), zstd (28 b5 2f fd) or none.
InputCompression detect_compression(std::string_view head);

// Whether `path` is standard input ("-") or a file whose first bytes are gzip's or zstd's: such
// inputs are read through read_input_bytes rather than loaded in place.
bool input_needs_decoding(const std::string& path);

// The whole of `path` ("-" = standard input), decompressed: gzip (several members, as `cat
// a.gz b.gz` makes) with zlib, zstd (several frames) with libzstd. A regular file is checked
// against the machine's memory before it is read, standard input and decompressed bytes as they
// grow; `what` says what the command reads ("logs", "traces") and `hint` what to do instead when
// memory is short. A truncated or corrupt stream is an InputError naming the path. `compression`
// (optional) receives how the input was stored.
std::string read_input_bytes(const std::string& path, std::string_view what, std::string_view hint,
                             InputCompression* compression = nullptr);

// The first `bytes` bytes of `path` decompressed (fewer if it holds fewer), reading no more of it
// than that needs: to tell a format by its first line. A stream that is truncated or corrupt
// within those bytes is an InputError as in read_input_bytes.
std::string read_input_head(const std::string& path, size_t bytes);

}  // namespace kvpolicy
