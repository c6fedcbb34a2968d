// Inputs read whole, and memory asked for up front: checked before anything is allocated, so a
// device, a pipe, a sparse file or a huge parameter is one clear error, never an out-of-memory
// crash or a read that never ends.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kvpolicy {

// The machine's physical memory in bytes.
uint64_t physical_memory_bytes();

// `path` must be a regular file: a device (/dev/zero) never ends and a pipe (a FIFO) blocks its
// reader until someone writes. An InputError names the path otherwise; `what` says what the
// command reads ("traces", "logs", ...). Returns the file's size in bytes.
uint64_t require_regular_file(const std::string& path, std::string_view what);

// An InputError naming `path` when holding `bytes` for it in memory would pass the machine's
// memory; `hint` (may be empty) says what to do instead.
void require_memory_for_file(const std::string& path, uint64_t bytes, std::string_view hint);

// A ConfigError naming `what` (the flags or parameters asking for it) when `bytes` would pass
// the machine's memory.
void require_memory(uint64_t bytes, std::string_view what);

}  // namespace kvpolicy
