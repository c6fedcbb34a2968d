// Retention hints meet the memory tiers (docs/serve.md, "Memory tiers" and "Retention hints"):
// the minimum priority for offload on hand-computed sequences (below it an HBM victim is dropped,
// at it or above demoted, as TensorRT-LLM compares), blocks conserved with the filter on, and a
// hint's duration counted from the release the cache reports (a completion, a preemption).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "kvpolicy/cache/lower_tiers.h"
#include "kvpolicy/cache/serving_cache.h"
#include "kvpolicy/cache/tier_store.h"
#include "kvpolicy/core/links.h"
#include "kvpolicy/trace/hints.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

constexpr Time kSecond = kMicrosPerSecond;

// One request of one block each unless given: its keys, its time and one hint over every block.
struct Req {
  std::vector<BlockKey> keys;
  Time time = 0;
  std::vector<RetentionHint> hints;
  RequestView view(RequestIndex index) const {
    RequestView v;
    v.index = index;
    v.time = time;
    v.blocks = keys;
    v.prompt_tokens = static_cast<uint32_t>(keys.size() * 16);
    v.first_access = index * 8;
    v.hints = hints;
    return v;
  }
};

RetentionHint hint(int32_t priority, Time duration = RetentionHint::kForever) {
  RetentionHint h;
  h.priority = priority;
  h.duration = duration;
  return h;
}

PolicyContext with_hints() {
  PolicyContext ctx;
  ctx.retention.emplace();
  return ctx;
}

// A cache of `hbm` blocks (LRU behind the hint wrapper) over one exclusive write-back DRAM tier
// of 10 blocks with the given minimum priority for offload.
std::unique_ptr<ServingCache> tiered(size_t hbm, int32_t min_priority) {
  auto cache = std::make_unique<ServingCache>(hbm, PolicySpec{"lru", ""}, with_hints());
  std::vector<std::unique_ptr<TierStore>> local;
  local.push_back(std::make_unique<TierStore>("dram", 10, PolicySpec{"lru", ""}, with_hints(),
                                              AdmissionFilter{}));
  cache->set_tiers(
      std::make_unique<LowerTiers>(Placement::kExclusive, WriteMode::kWriteBack, std::move(local),
                                   std::vector<LinkSpec>{find_link("pcie5")}, nullptr, LinkSpec{}));
  cache->tiers()->set_offload_min_priority(min_priority);
  cache->set_checking(true);
  return cache;
}

// Admits, computes and completes r (no answer block) at its time.
void run(ServingCache& cache, const Req& r, RequestIndex index) {
  std::vector<NodeId> path;
  RequestView v = r.view(index);
  cache.admit(v, 0, path);
  cache.mark_computed(path, static_cast<uint32_t>(path.size()), v.time);
  cache.complete(v, path, 0);
}

std::set<BlockKey> dram_keys(ServingCache& cache) {
  auto keys = cache.tiers()->tier(0).keys();
  return {keys.begin(), keys.end()};
}

TEST(OffloadMinPriority, BelowTheMinimumIsDroppedAtItDemoted) {
  // HBM of two blocks. a (priority 20), b (30), c (unhinted: 35) arrive one by one, then d and
  // e (unhinted). By hand, strict priority: c's admission evicts a (the lowest level), d's
  // evicts b (30, still below the default), e's evicts c (the only default block older than d).
  // TensorRT-LLM offloads a block whose priority is >= the minimum: with 30, a is dropped and b
  // (at the minimum itself) demoted; with 31 both are dropped; with 0 or off, all three demoted.
  const std::vector<Req> reqs = {{{1}, 1 * kSecond, {hint(20)}},
                                 {{2}, 2 * kSecond, {hint(30)}},
                                 {{3}, 3 * kSecond, {}},
                                 {{4}, 4 * kSecond, {}},
                                 {{5}, 5 * kSecond, {}}};
  struct Case {
    int32_t min;
    std::set<BlockKey> dram;
    uint64_t skipped;
  };
  for (const Case& c : {Case{30, {2, 3}, 1}, Case{31, {3}, 2}, Case{0, {1, 2, 3}, 0},
                        Case{-1, {1, 2, 3}, 0}, Case{36, {}, 3}}) {
    SCOPED_TRACE("minimum " + std::to_string(c.min));
    auto cache = tiered(2, c.min);
    for (size_t i = 0; i < reqs.size(); ++i) run(*cache, reqs[i], i);
    EXPECT_EQ(cache->evictions(), 3u);
    EXPECT_EQ(dram_keys(*cache), c.dram);
    EXPECT_EQ(cache->tiers()->offload_skipped(), c.skipped);
    // Every victim is computed: demoted (written) or dropped for its priority.
    EXPECT_EQ(cache->tiers()->tier(0).counters.blocks_written + c.skipped, 3u);
  }
}

TEST(OffloadMinPriority, AnExpiredHintOffloadsAtTheDefault) {
  // a has priority 20 for 4 s from its completion at 1 s: until 5 s; b has 90 for ever. c's
  // admission at 3 s evicts a below the minimum (dropped); at 6 s a is back at the default, the
  // only block of it, and demoted.
  for (Time third : {3 * kSecond, 6 * kSecond}) {
    auto cache = tiered(2, 30);
    run(*cache, {{1}, 1 * kSecond, {hint(20, 4 * kSecond)}}, 0);
    run(*cache, {{2}, 2 * kSecond, {hint(90)}}, 1);
    run(*cache, {{3}, third, {}}, 2);
    SCOPED_TRACE("third request at " + std::to_string(third));
    EXPECT_EQ(cache->evictions(), 1u);
    bool expired = third >= 5 * kSecond;
    EXPECT_EQ(dram_keys(*cache), expired ? std::set<BlockKey>{1} : std::set<BlockKey>{});
    EXPECT_EQ(cache->tiers()->offload_skipped(), expired ? 0u : 1u);
  }
}

TEST(OffloadMinPriority, BlocksAreConservedWithTheFilterOn) {
  // A random workload, half its blocks hinted at 20 (the random rule), an HBM of 60 over a
  // DRAM of 50 and an SSD of 80: every HBM victim (all computed) is written to DRAM, refused,
  // dropped for room or skipped for its priority, and DRAM's victims cascade to the SSD.
  testing::RandomWorkloadOptions wo;
  wo.requests = 600;
  wo.seed = 9;
  Trace trace = testing::random_workload(wo);
  apply_hint_rules(trace, parse_hint_rules({"random=20:inf:0.5"}), 3);
  for (int32_t min : {-1, 20, 30}) {
    auto cache = std::make_unique<ServingCache>(60, PolicySpec{"lru", ""}, with_hints());
    std::vector<std::unique_ptr<TierStore>> local;
    local.push_back(std::make_unique<TierStore>("dram", 50, PolicySpec{"s3fifo", ""}, with_hints(),
                                                AdmissionFilter{}));
    local.push_back(std::make_unique<TierStore>("ssd", 80, PolicySpec{"lru", ""}, with_hints(),
                                                AdmissionFilter{}));
    cache->set_tiers(std::make_unique<LowerTiers>(
        Placement::kExclusive, WriteMode::kWriteBack, std::move(local),
        std::vector<LinkSpec>{find_link("pcie5"), find_link("nvme")}, nullptr, LinkSpec{}));
    cache->tiers()->set_offload_min_priority(min);
    cache->set_checking(true);
    std::vector<NodeId> path;
    for (size_t r = 0; r < trace.size(); ++r) {
      RequestView v = request_view(trace, r);
      if (v.blocks.size() > 60) continue;
      cache->admit(v, 0, path);
      cache->mark_computed(path, static_cast<uint32_t>(path.size()), v.time);
      cache->complete(v, path, 0);
      const TierStore &dram = cache->tiers()->tier(0), &ssd = cache->tiers()->tier(1);
      ASSERT_EQ(dram.counters.blocks_written + dram.counters.rejected + dram.counters.full +
                    cache->tiers()->offload_skipped(),
                cache->evictions());
      ASSERT_EQ(ssd.counters.blocks_written + ssd.counters.rejected + ssd.counters.full,
                dram.counters.evictions);
      for (const TierStore* s : {&dram, &ssd})
        ASSERT_EQ(s->counters.blocks_written,
                  s->counters.evictions + s->counters.removed + s->size());
    }
    SCOPED_TRACE("minimum " + std::to_string(min));
    // Priorities are 20 or 35: a minimum of 20 skips none, 30 skips some.
    if (min < 30) {
      EXPECT_EQ(cache->tiers()->offload_skipped(), 0u);
    } else {
      EXPECT_GT(cache->tiers()->offload_skipped(), 0u);
    }
  }
}

// The priority the cache's policy gives node n at time t (the policy hears the time first).
int32_t priority_at(ServingCache& cache, NodeId n, Time t) {
  cache.policy().on_time(t);
  return cache.policy().retention_priority(n).value_or(-1);
}

TEST(RetentionRelease, DurationCountsFromTheCompletion) {
  // Admitted at 0 s, completed at 10 s (no answer block), priority 80 for 5 s: 80 until 15 s,
  // then the default. (Counted from the admission it would have dropped at 5 s.)
  ServingCache cache(8, {"lru", ""}, with_hints());
  Req a{{1, 2}, 0, {hint(80, 5 * kSecond)}};
  std::vector<NodeId> path;
  RequestView v = a.view(0);
  cache.admit(v, 0, path);
  std::vector<NodeId> nodes = path;
  cache.mark_computed(path, 2, 0);
  v.time = 10 * kSecond;  // the completion's view carries its time
  cache.complete(v, path, 0);
  EXPECT_EQ(priority_at(cache, nodes[1], 5 * kSecond), 80);
  EXPECT_EQ(priority_at(cache, nodes[1], 15 * kSecond - 1), 80);
  EXPECT_EQ(priority_at(cache, nodes[1], 15 * kSecond), 35);
  // Its parent is no leaf (its child is cached): not released yet, its claim holds.
  EXPECT_EQ(priority_at(cache, nodes[0], 15 * kSecond), 80);
}

TEST(RetentionRelease, AnAnswersDurationCountsFromTheCompletionToo) {
  // A prompt block and one answer block (cached at completion, at 10 s), priority 60 to the
  // end for 2 s: the answer, a leaf, is released at 10 s and drops at 12 s.
  ServingCache cache(8, {"lru", ""}, with_hints());
  RetentionHint h = hint(60, 2 * kSecond);
  Req a{{1, 2}, 0, {h}};
  RequestView prompt = a.view(0);
  prompt.blocks = prompt.blocks.first(1);
  std::vector<NodeId> path;
  cache.admit(prompt, 1, path);
  cache.mark_computed(path, 1, 0);
  RequestView whole = a.view(0);
  whole.time = 10 * kSecond;
  cache.complete(whole, path, 1);
  NodeId answer = cache.tree().find(2);
  ASSERT_NE(answer, kNoNode);
  EXPECT_EQ(priority_at(cache, answer, 12 * kSecond - 1), 60);
  EXPECT_EQ(priority_at(cache, answer, 12 * kSecond), 35);
}

TEST(RetentionRelease, APreemptionReleasesAtItsTime) {
  // Admitted at 0 s, preempted at 3 s: priority 90 for 5 s counts from 3 s (until 8 s).
  ServingCache cache(8, {"lru", ""}, with_hints());
  Req a{{1}, 0, {hint(90, 5 * kSecond)}};
  std::vector<NodeId> path;
  cache.admit(a.view(0), 0, path);
  NodeId n = path[0];
  cache.release(path, 0, 3 * kSecond);
  EXPECT_EQ(priority_at(cache, n, 8 * kSecond - 1), 90);
  EXPECT_EQ(priority_at(cache, n, 8 * kSecond), 35);
}

}  // namespace
}  // namespace kvpolicy
