// PrefixCache::access with LRU on a Zipf prefix trace: the replay hot path per block access.
#include <benchmark/benchmark.h>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/trace/generators.h"

namespace kvpolicy {
namespace {

void BM_CacheAccessLruZipf(benchmark::State& state) {
  ZipfParams p;
  p.requests = 50000;
  Trace trace = generate_zipf(p, 1);
  size_t capacity = count_unique_blocks(trace) * state.range(0) / 100;
  PolicyContext ctx;
  ctx.block_tokens = trace.block_tokens;
  PrefixCache cache(capacity, PolicySpec{"lru", ""}, ctx);
  RequestView view;
  size_t r = 0;
  uint64_t accesses = 0, hits = 0;
  for (auto _ : state) {
    view.index = static_cast<RequestIndex>(r);
    view.time = trace.time[r];
    view.first_access = trace.block_offset[r];
    view.prompt_tokens = trace.prompt_tokens[r];
    view.blocks = trace.prompt(r);
    hits += cache.access(view).hit_blocks;
    accesses += view.blocks.size();
    r = r + 1 == trace.size() ? 0 : r + 1;
  }
  state.SetItemsProcessed(accesses);  // items = block accesses
  state.counters["hit_rate"] = accesses ? double(hits) / accesses : 0;
}
BENCHMARK(BM_CacheAccessLruZipf)->Arg(10)->Arg(50);

}  // namespace
}  // namespace kvpolicy
