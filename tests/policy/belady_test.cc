// Belady is the offline optimum for hit rate with uniform blocks: no policy may miss less.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "kvpolicy/policy/policy.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/trace.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::random_workload;

// Every registered policy that does not read the future.
std::vector<const PolicyInfo*> online_policies() {
  std::vector<const PolicyInfo*> out;
  for (auto& p : PolicyRegistry::instance().all())
    if (!p.needs_future) out.push_back(&p);
  return out;
}

// Randomized policies run with `seeds` seeds.
void expect_belady_best(const Trace& trace, const Oracle& oracle, size_t cap, uint64_t seeds) {
  uint64_t best = replay(trace, &oracle, {"belady", ""}, cap).block_hits;
  for (const PolicyInfo* p : online_policies()) {
    for (uint64_t seed = 1; seed <= (p->randomized ? seeds : 1); ++seed) {
      ReplayOptions opts;
      opts.seed = seed;
      uint64_t hits = replay(trace, &oracle, {p->name, ""}, cap, opts).block_hits;
      EXPECT_LE(hits, best) << p->name << " (seed " << seed << ") beats belady at capacity " << cap;
    }
  }
}

TEST(Belady, NoPolicyMissesLessOnRandomWorkloads) {
  for (uint64_t w = 1; w <= 4; ++w) {
    Trace trace = random_workload({.seed = 200 + w, .requests = 400});
    Oracle oracle = compute_oracle(trace);
    size_t unique = count_unique_blocks(trace);
    for (size_t cap : {size_t{8}, unique / 20, unique / 8, unique / 3}) {
      SCOPED_TRACE("workload " + std::to_string(w));
      expect_belady_best(trace, oracle, cap, 3);
    }
  }
}

TEST(Belady, NoPolicyMissesLessOnMooncake) {
  const char* dir = std::getenv("KVPOLICY_DATA");
  if (!dir) GTEST_SKIP() << "KVPOLICY_DATA is not set";
  std::string path = std::string(dir) + "/mooncake-conversation/conversation_trace.jsonl";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
  Trace trace = read_trace(path, "mooncake", {});
  Oracle oracle = compute_oracle(trace);
  size_t unique = count_unique_blocks(trace);
  for (double f : {0.02, 0.05, 0.10, 0.20}) {
    SCOPED_TRACE("capacity " + std::to_string(f));
    expect_belady_best(trace, oracle, CapacitySpec::share(f).blocks(unique), 1);
  }
}

}  // namespace
}  // namespace kvpolicy
