// Indexed 4-ary min-heap over dense ids: push, erase and re-key any member in O(log n).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

template <typename Key>
struct HeapEntry {
  Key key;
  NodeId id;
};

// Orders heap entries by key alone.
template <typename Cmp>
struct ByKey {
  template <typename Entry>
  bool operator()(const Entry& a, const Entry& b) const {
    return Cmp{}(a.key, b.key);
  }
};

// Every id owns one slot: a member's heap position, or the key of an id outside the heap (kept
// when a member leaves). A policy thus holds each block's key in one place only, and pays no
// position array on top. `Less` compares whole entries, so a tie-break may look up the ids (a
// block's depth in the tree, say) instead of widening every key.
template <typename Key, typename Less = ByKey<std::less<Key>>>
class IndexedHeap {
 public:
  using Entry = HeapEntry<Key>;

  explicit IndexedHeap(Less less = {}) : less_(less) {}

  void resize(size_t ids) {
    if (ids <= ids_) return;
    slots_.resize(ids);
    member_.resize((ids + 63) / 64, 0);
    ids_ = ids;
  }
  size_t ids() const { return ids_; }  // ids below this have a slot
  bool contains(NodeId n) const { return n < ids_ && (member_[n >> 6] >> (n & 63) & 1); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  NodeId top() const { return heap_.front().id; }
  const Key& top_key() const { return heap_.front().key; }
  const Entry& top_entry() const { return heap_.front(); }
  const Less& less() const { return less_; }
  // n's key, in the heap or in its slot.
  const Key& key(NodeId n) const { return contains(n) ? heap_[slots_[n].pos].key : slots_[n].key; }
  // The key of n, which must not be a member: read or set without a membership test.
  Key& stored_key(NodeId n) { return slots_[n].key; }
  const Key& stored_key(NodeId n) const { return slots_[n].key; }

  // Applies f to n's key in place; a member moves to its new place.
  template <typename F>
  void update_key(NodeId n, F&& f) {
    if (!contains(n)) return f(slots_[n].key);
    size_t i = slots_[n].pos;
    Entry old = heap_[i];
    f(heap_[i].key);
    resift(i, old);
  }
  void set_key(NodeId n, const Key& k) {
    update_key(n, [&](Key& key) { key = k; });
  }
  // n (not a member) joins with the key in its slot.
  void push(NodeId n) {
    if (heap_.size() == heap_.capacity()) {
      // Doubling, but never past the id range: there are no more members than ids.
      heap_.reserve(std::max(heap_.size() + 1, std::min(heap_.size() * 2, ids_)));
    }
    heap_.push_back({slots_[n].key, n});
    member_[n >> 6] |= uint64_t{1} << (n & 63);
    slots_[n].pos = static_cast<uint32_t>(heap_.size() - 1);
    sift_up(heap_.size() - 1);
  }
  void push(NodeId n, const Key& k) {
    slots_[n].key = k;
    push(n);
  }
  // n leaves; its key stays in its slot.
  void erase(NodeId n) {
    size_t i = slots_[n].pos;
    slots_[n].key = heap_[i].key;
    member_[n >> 6] &= ~(uint64_t{1} << (n & 63));
    if (i + 1 == heap_.size()) {
      heap_.pop_back();
      return;
    }
    heap_[i] = heap_.back();
    heap_.pop_back();
    slots_[heap_[i].id].pos = static_cast<uint32_t>(i);
    if (i > 0 && less_(heap_[i], heap_[(i - 1) / 4])) {
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
    for (auto& e : heap_) {
      slots_[e.id].key = e.key;
      member_[e.id >> 6] &= ~(uint64_t{1} << (e.id & 63));
    }
    heap_.clear();
  }
  // Members in heap order (not sorted); for rebuilds and tests.
  template <typename F>
  void for_each(F&& f) const {
    for (auto& e : heap_) f(e.id, e.key);
  }
  size_t memory_bytes() const {
    return slots_.capacity() * sizeof(Slot) + member_.capacity() * sizeof(uint64_t) +
           heap_.capacity() * sizeof(Entry);
  }

 private:
  union Slot {
    Key key;
    uint32_t pos;
  };
  // Restores the order after heap_[i]'s key changed from old's. Out of line, so that updating
  // a non-member's key (the common case) stays a few instructions.
  [[gnu::noinline]] void resift(size_t i, const Entry& old) {
    less_(heap_[i], old) ? sift_up(i) : sift_down(i);
  }
  void sift_up(size_t i) {
    Entry e = heap_[i];
    while (i > 0) {
      size_t p = (i - 1) / 4;
      if (!less_(e, heap_[p])) break;
      heap_[i] = heap_[p];
      slots_[heap_[i].id].pos = static_cast<uint32_t>(i);
      i = p;
    }
    heap_[i] = e;
    slots_[e.id].pos = static_cast<uint32_t>(i);
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
        if (less_(heap_[j], heap_[best])) best = j;
      if (!less_(heap_[best], e)) break;
      heap_[i] = heap_[best];
      slots_[heap_[i].id].pos = static_cast<uint32_t>(i);
      i = best;
    }
    heap_[i] = e;
    slots_[e.id].pos = static_cast<uint32_t>(i);
  }
  BlockVector<Entry> heap_;
  BlockVector<Slot> slots_;
  std::vector<uint64_t> member_;  // one bit per id: in the heap (its slot holds a position)
  size_t ids_ = 0;
  [[no_unique_address]] Less less_;
};

}  // namespace kvpolicy
