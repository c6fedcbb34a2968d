// PrefixTree hash lookups, inserts and removals at several tree sizes.
#include <benchmark/benchmark.h>

#include <vector>

#include "kvpolicy/core/tree.h"
#include "kvpolicy/trace/generators.h"

namespace kvpolicy {
namespace {

// A tree of `n` unpinned single-block prefixes (all leaves) with random keys.
std::vector<BlockKey> fill(PrefixTree& tree, size_t n, Rng& rng) {
  std::vector<BlockKey> keys(n);
  for (auto& k : keys) {
    k = rng.next();
    tree.unpin(tree.insert(k, kNoNode));
  }
  return keys;
}

void BM_TreeFindHit(benchmark::State& state) {
  size_t n = state.range(0);
  PrefixTree tree(n);
  Rng rng(1);
  auto keys = fill(tree, n, rng);
  std::vector<uint32_t> order(1 << 16);
  for (auto& i : order) i = static_cast<uint32_t>(rng.below(n));
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(tree.find(keys[order[i++ & 0xffff]]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TreeFindHit)->Arg(1 << 12)->Arg(1 << 16)->Arg(1 << 20);

void BM_TreeFindMiss(benchmark::State& state) {
  size_t n = state.range(0);
  PrefixTree tree(n);
  Rng rng(2);
  fill(tree, n, rng);
  for (auto _ : state) benchmark::DoNotOptimize(tree.find(rng.next()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TreeFindMiss)->Arg(1 << 12)->Arg(1 << 16)->Arg(1 << 20);

// Steady churn at size n: insert a fresh block, remove the oldest.
void BM_TreeInsertRemove(benchmark::State& state) {
  size_t n = state.range(0);
  PrefixTree tree(n);
  Rng rng(3);
  std::vector<NodeId> ring(n);
  for (auto& id : ring) {
    id = tree.insert(rng.next(), kNoNode);
    tree.unpin(id);
  }
  size_t oldest = 0;
  for (auto _ : state) {
    tree.remove(ring[oldest]);
    NodeId id = tree.insert(rng.next(), kNoNode);
    tree.unpin(id);
    ring[oldest] = id;
    oldest = oldest + 1 == n ? 0 : oldest + 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TreeInsertRemove)->Arg(1 << 12)->Arg(1 << 16)->Arg(1 << 20);

}  // namespace
}  // namespace kvpolicy
