// The blocks the open request holds (each pinned until the request ends), with a per-node stamp
// of the last request that held it: "does this request hold n?" is one lookup, not a scan of
// the list (the scan made PolicyTree::insert quadratic in a prompt's length). steps() counts
// every entry written, looked up or released, so a test can check the work is linear.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kvpolicy/core/types.h"

namespace kvpolicy {

class HeldBlocks {
 public:
  void resize(size_t ids) { stamp_.resize(ids, 0); }
  // A new request: it holds nothing yet.
  void begin() {
    held_.clear();
    ++request_;
  }
  bool holds(NodeId n) const {
    ++steps_;
    return stamp_[n] == request_;
  }
  // n is held once more until release_all (a block hit twice is held twice).
  void add(NodeId n) {
    ++steps_;
    held_.push_back(n);
    stamp_[n] = request_;
  }
  // Calls release(n) for every hold, newest first.
  template <typename F>
  void release_all(F&& release) {
    for (size_t j = held_.size(); j-- > 0;) {
      ++steps_;
      release(held_[j]);
    }
    held_.clear();
  }
  // Drops every hold of n without releasing it (n is leaving the tree); returns how many.
  size_t forget(NodeId n) {
    size_t before = held_.size();
    steps_ += before;
    std::erase(held_, n);
    return before - held_.size();
  }
  size_t size() const { return held_.size(); }
  uint64_t steps() const { return steps_; }

 private:
  std::vector<NodeId> held_;
  std::vector<uint64_t> stamp_;  // per node: the request that last held it
  uint64_t request_ = 0;
  mutable uint64_t steps_ = 0;
};

}  // namespace kvpolicy
