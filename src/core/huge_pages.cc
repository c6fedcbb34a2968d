#include "kvpolicy/core/huge_pages.h"

#include <sys/mman.h>

namespace kvpolicy {

void* map_pages(size_t bytes) {
  if (bytes == 0) bytes = 1;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  // Linux places mappings of 2 MiB and more on a huge-page boundary; the advice is only a hint,
  // so a kernel without THP still gets working (small) pages.
  if (bytes >= kHugePageBytes) ::madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

void unmap_pages(void* p, size_t bytes) { ::munmap(p, bytes == 0 ? 1 : bytes); }

}  // namespace kvpolicy
