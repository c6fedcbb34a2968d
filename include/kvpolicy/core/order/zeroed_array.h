// A fixed-size array of zeroed memory for large tables: fresh anonymous pages (the kernel zeroes
// each page when it is first touched), so a new table costs no pass of its own, and none of its
// cache traffic. Move-only; T must be trivial (it is never constructed or destroyed).
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "kvpolicy/core/huge_pages.h"

namespace kvpolicy {

template <typename T>
class ZeroedArray {
  static_assert(std::is_trivial_v<T>, "the pages are zeroed, not constructed");

 public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t n)
      : p_(static_cast<T*>(map_pages(n * sizeof(T)))), n_(n), bytes_(n * sizeof(T)) {}
  ZeroedArray(ZeroedArray&& o) noexcept { *this = std::move(o); }
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~ZeroedArray() {
    if (p_) unmap_pages(p_, bytes_);
  }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0, bytes_ = 0;
};

}  // namespace kvpolicy
