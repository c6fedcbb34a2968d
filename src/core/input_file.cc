#include "kvpolicy/core/input_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

std::string gigabytes(uint64_t bytes) { return fmt::format("{:.1f} GB", double(bytes) / 1e9); }

}  // namespace

uint64_t physical_memory_bytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : UINT64_MAX;
}

uint64_t require_regular_file(const std::string& path, std::string_view what) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status))
    throw InputError(path, 0, "", "cannot read file: no such file");
  if (std::filesystem::is_directory(status))
    throw InputError(path, 0, "", "'" + path + "' is a directory, not a file");
  if (!std::filesystem::is_regular_file(status))
    throw InputError(path, 0, "",
                     fmt::format("'{}' is not a regular file (a pipe or a device); {} are read "
                                 "from files: save it to one first",
                                 path, what));
  uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(path, 0, "", "cannot read file: " + ec.message());
  return size;
}

void require_memory_for_file(const std::string& path, uint64_t bytes, std::string_view hint) {
  uint64_t memory = physical_memory_bytes();
  if (bytes > memory)
    throw InputError(
        path, 0, "",
        fmt::format("reading it whole needs about {}, more than this machine's {} "
                    "of memory{}{}",
                    gigabytes(bytes), gigabytes(memory), hint.empty() ? "" : ": ", hint));
}

void require_memory(uint64_t bytes, std::string_view what) {
  uint64_t memory = physical_memory_bytes();
  if (bytes > memory)
    throw ConfigError(fmt::format("{} ask for about {} of memory, more than this machine's {}",
                                  what, gigabytes(bytes), gigabytes(memory)));
}

}  // namespace kvpolicy
