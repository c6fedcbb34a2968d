// Indexed 4-ary min-heap over dense ids: push, erase and re-key any member in O(log n).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "kvpolicy/types.h"

namespace kvpolicy {

template <typename Key, typename Less = std::less<Key>>
class IndexedHeap {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  void resize(size_t ids) {
    if (ids > pos_.size()) pos_.resize(ids, kAbsent);
  }
  bool contains(NodeId n) const { return n < pos_.size() && pos_[n] != kAbsent; }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  NodeId top() const { return heap_.front().id; }
  const Key& top_key() const { return heap_.front().key; }
  const Key& key(NodeId n) const { return heap_[pos_[n]].key; }

  void push(NodeId n, const Key& k) {
    heap_.push_back({k, n});
    pos_[n] = static_cast<uint32_t>(heap_.size() - 1);
    sift_up(heap_.size() - 1);
  }
  // Sets n's key, inserting n if absent.
  void set(NodeId n, const Key& k) {
    if (!contains(n)) return push(n, k);
    size_t i = pos_[n];
    bool up = less_(k, heap_[i].key);
    heap_[i].key = k;
    up ? sift_up(i) : sift_down(i);
  }
  void erase(NodeId n) {
    size_t i = pos_[n];
    pos_[n] = kAbsent;
    if (i + 1 == heap_.size()) {
      heap_.pop_back();
      return;
    }
    heap_[i] = heap_.back();
    heap_.pop_back();
    pos_[heap_[i].id] = static_cast<uint32_t>(i);
    if (i > 0 && less_(heap_[i].key, heap_[(i - 1) / 4].key)) {
      sift_up(i);
    } else {
      sift_down(i);
    }
  }
  NodeId pop() {
    NodeId n = top();
    erase(n);
    return n;
  }
  void clear() {
    for (auto& e : heap_) pos_[e.id] = kAbsent;
    heap_.clear();
  }
  // Members in heap order (not sorted); for rebuilds and tests.
  template <typename F>
  void for_each(F&& f) const {
    for (auto& e : heap_) f(e.id, e.key);
  }
  size_t memory_bytes() const { return pos_.capacity() * 4 + heap_.capacity() * sizeof(Entry); }

 private:
  struct Entry {
    Key key;
    NodeId id;
  };
  void sift_up(size_t i) {
    Entry e = heap_[i];
    while (i > 0) {
      size_t p = (i - 1) / 4;
      if (!less_(e.key, heap_[p].key)) break;
      heap_[i] = heap_[p];
      pos_[heap_[i].id] = static_cast<uint32_t>(i);
      i = p;
    }
    heap_[i] = e;
    pos_[e.id] = static_cast<uint32_t>(i);
  }
  void sift_down(size_t i) {
    Entry e = heap_[i];
    size_t n = heap_.size();
    for (;;) {
      size_t c = 4 * i + 1;
      if (c >= n) break;
      size_t best = c;
      size_t end = std::min(c + 4, n);
      for (size_t j = c + 1; j < end; ++j)
        if (less_(heap_[j].key, heap_[best].key)) best = j;
      if (!less_(heap_[best].key, e.key)) break;
      heap_[i] = heap_[best];
      pos_[heap_[i].id] = static_cast<uint32_t>(i);
      i = best;
    }
    heap_[i] = e;
    pos_[e.id] = static_cast<uint32_t>(i);
  }
  std::vector<Entry> heap_;
  std::vector<uint32_t> pos_;
  [[no_unique_address]] Less less_;
};

}  // namespace kvpolicy
