// Opening a binary trace file (native, oracleGeneral), whole or as a stream (internal header).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// `path` open for reading at its start, and its size in bytes; an InputError naming the path
// when it cannot be read or is empty.
inline File open_binary_trace(const std::string& path, uint64_t& size) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f || std::fseek(f.get(), 0, SEEK_END) != 0)
    throw InputError(path, 0, "", "cannot read file");
  long bytes = std::ftell(f.get());
  if (bytes < 0) throw InputError(path, 0, "", "cannot read file");
  if (bytes == 0) throw InputError(path, 0, "", "empty file");
  std::rewind(f.get());
  size = static_cast<uint64_t>(bytes);
  return f;
}

}  // namespace kvpolicy
