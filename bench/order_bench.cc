// The orderings policies are built from: indexed heap and intrusive list.
#include <benchmark/benchmark.h>

#include <vector>

#include "kvpolicy/core/order/indexed_heap.h"
#include "kvpolicy/core/order/intrusive_list.h"
#include "kvpolicy/trace/generators.h"

namespace kvpolicy {
namespace {

// Pop the minimum and push it back with a new key, at size n (a priority policy's eviction).
void BM_HeapPopPush(benchmark::State& state) {
  size_t n = state.range(0);
  IndexedHeap<uint64_t> heap;
  heap.resize(n);
  Rng rng(1);
  for (NodeId i = 0; i < n; ++i) heap.push(i, rng.next());
  for (auto _ : state) {
    NodeId id = heap.pop();
    heap.push(id, rng.next());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HeapPopPush)->Arg(1 << 12)->Arg(1 << 16)->Arg(1 << 20);

// Re-key a random member (a priority policy's hit).
void BM_HeapUpdate(benchmark::State& state) {
  size_t n = state.range(0);
  IndexedHeap<uint64_t> heap;
  heap.resize(n);
  Rng rng(2);
  for (NodeId i = 0; i < n; ++i) heap.push(i, rng.next());
  for (auto _ : state) heap.set_key(static_cast<NodeId>(rng.below(n)), rng.next());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HeapUpdate)->Arg(1 << 12)->Arg(1 << 16)->Arg(1 << 20);

// Move a random member to the back (LRU's hit).
void BM_ListTouch(benchmark::State& state) {
  size_t n = state.range(0);
  IntrusiveList list;
  list.resize(n);
  for (NodeId i = 0; i < n; ++i) list.push_back(i);
  Rng rng(3);
  std::vector<NodeId> order(1 << 16);
  for (auto& id : order) id = static_cast<NodeId>(rng.below(n));
  size_t i = 0;
  for (auto _ : state) {
    NodeId id = order[i++ & 0xffff];
    list.erase(id);
    list.push_back(id);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ListTouch)->Arg(1 << 12)->Arg(1 << 16)->Arg(1 << 20);

// Pop the oldest and append it again (LRU's eviction plus insert).
void BM_ListPopPush(benchmark::State& state) {
  size_t n = state.range(0);
  IntrusiveList list;
  list.resize(n);
  for (NodeId i = 0; i < n; ++i) list.push_back(i);
  for (auto _ : state) list.push_back(list.pop_front());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ListPopPush)->Arg(1 << 12)->Arg(1 << 20);

}  // namespace
}  // namespace kvpolicy
