// Large per-block arrays on transparent huge pages: a replay touches them at random, and with
// 4 KiB pages a table of tens of MiB misses the TLB on nearly every access.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace kvpolicy {

// Fresh zeroed anonymous pages, asked to be huge where a mapping spans whole 2 MiB pages
// (madvise: the machine's THP mode is usually "madvise"). Throws std::bad_alloc.
void* map_pages(size_t bytes);
void unmap_pages(void* p, size_t bytes);

// Allocations of at least kHugePageBytes come from map_pages, smaller ones from operator new.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: allocators convert implicitly

  T* allocate(size_t n) {
    size_t bytes = n * sizeof(T);
    if (bytes >= kHugePageBytes) return static_cast<T*>(map_pages(bytes));
    return static_cast<T*>(::operator new (bytes, std::align_val_t{alignof(T)}));
  }
  void deallocate(T* p, size_t n) {
    size_t bytes = n * sizeof(T);
    if (bytes >= kHugePageBytes) {
      unmap_pages(p, bytes);
    } else {
      ::operator delete (p, std::align_val_t{alignof(T)});  // unsized: clang has sized delete off
    }
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

// A vector for arrays indexed by node id (or sized to the cache): the tree's and the orderings'.
template <typename T>
using BlockVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace kvpolicy
