// The built-in workload of `kvpolicy compare` and `make run`: synthetic multi-turn chat.
#include "common.h"
#include "kvpolicy/trace/generators.h"

namespace kvpolicy::cli {

// The conversation generator with its defaults (generators.h, docs/results/workloads.md): 1000
// sessions, at most 200 active as in the LPC paper, 100 s mean think time. About 4 k requests and
// 0.6 M block accesses, so every policy at four capacities runs in well under a minute, and the
// working set (about a quarter of the unique blocks) lies above every default capacity, so
// 2 %, 5 %, 10 % and 20 % all separate LRU from Belady.
Trace default_workload(uint64_t seed) {
  Trace t = generate_conversation(ConversationParams{}, seed);
  t.name = "built-in conversation workload (trace generate --kind conversation --seed " +
           std::to_string(seed) + ")";
  return t;
}

}  // namespace kvpolicy::cli
