// A log of one entry per consecutive counter [first, end): appended at the end, dropped at the
// front, indexed by counter. One vector, compacted when half of it is dropped, so both ends are
// O(1) amortized and a lookup is one array read. WA keeps its fit window's requests in one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvpolicy {

template <typename T>
class SeqLog {
 public:
  // An empty log whose first entry will be counter `first`.
  explicit SeqLog(uint32_t first) : first_(first) {}
  uint32_t first() const { return first_; }
  uint32_t end() const { return first_ + static_cast<uint32_t>(v_.size() - off_); }
  size_t size() const { return v_.size() - off_; }
  bool empty() const { return off_ == v_.size(); }
  // `seq` must be in [first(), end()).
  T& operator[](uint32_t seq) { return v_[off_ + (seq - first_)]; }
  const T& operator[](uint32_t seq) const { return v_[off_ + (seq - first_)]; }
  T& front() { return v_[off_]; }
  // Appends the entry of counter end().
  void push_back(const T& x) { v_.push_back(x); }
  // Drops the entry of counter first(); the log must not be empty.
  void pop_front() {
    ++off_;
    ++first_;
    if (off_ >= kCompactAfter && off_ * 2 >= v_.size()) {
      v_.erase(v_.begin(), v_.begin() + static_cast<std::ptrdiff_t>(off_));
      off_ = 0;
    }
  }
  size_t memory_bytes() const { return v_.capacity() * sizeof(T); }

 private:
  static constexpr size_t kCompactAfter = 1024;  // dropped entries, so that a compaction pays

  std::vector<T> v_;
  size_t off_ = 0;  // v_[off_] is the entry of counter first_
  uint32_t first_;
};

}  // namespace kvpolicy
