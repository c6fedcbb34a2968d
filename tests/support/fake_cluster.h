// A cluster stand-in for router tests: loads the test sets or a small driver keeps, exact
// cached prefixes from the prompts each worker was given, and a clock the test moves.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "kvpolicy/route/router.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy::testing {

class FakeCluster final : public ClusterView {
 public:
  explicit FakeCluster(uint32_t workers, uint32_t block_tokens = 16,
                       uint64_t capacity_blocks = 4096);

  uint32_t workers() const override { return static_cast<uint32_t>(loads_.size()); }
  const WorkerLoad& load(WorkerId w) const override { return loads_.at(w); }
  uint32_t cached_prefix_blocks(WorkerId w, const RequestView& request) const override;
  std::array<uint32_t, 2> lower_tier_prefix_blocks(WorkerId w,
                                                   const RequestView& request) const override;
  Time now() const override { return now_; }
  uint32_t block_tokens() const override { return block_tokens_; }

  WorkerLoad& mutable_load(WorkerId w) { return loads_.at(w); }
  void set_now(Time t) { now_ = t; }
  // Worker w holds these blocks from now on (its KV events said so).
  void cache(WorkerId w, std::span<const BlockKey> blocks);
  // Worker w's lower tier `tier` (0: host DRAM, 1: SSD or remote) holds these blocks.
  void cache_lower(WorkerId w, uint32_t tier, std::span<const BlockKey> blocks);

  // A request routed to w arrives there (waiting, its prompt queued for prefill), is admitted
  // (running: its prompt is prefilled, cached and held by the running request) and finishes.
  void arrive(WorkerId w, const RequestView& r);
  void admit(WorkerId w, const RequestView& r);
  void finish(WorkerId w, const RequestView& r, bool admitted);

 private:
  uint32_t block_tokens_;
  Time now_ = 0;
  std::vector<WorkerLoad> loads_;
  std::vector<std::unordered_set<BlockKey>> cached_;
  std::vector<std::array<std::unordered_set<BlockKey>, 2>> lower_;
};

// A prompt of chained block keys from block ids: prompt({1, 2, 3}) shares its first two blocks
// with prompt({1, 2, 4}).
std::vector<BlockKey> prompt(std::initializer_list<uint64_t> ids);
// A request over `blocks` (which must outlive it), every block full.
RequestView request(const std::vector<BlockKey>& blocks, RequestIndex index,
                    SessionId session = kNoSession, uint32_t block_tokens = 16);

// Routes `trace`'s requests (plus `empty_prompts` requests without blocks, spread among them)
// through `router` on `cluster`, advancing the clock by up to `max_gap` each arrival, admitting
// and completing in-flight requests at random (seeded by `seed`), and completes every request
// at the end. Returns the chosen worker of each routed request; a chosen worker outside the
// cluster is recorded as is and reported with ADD_FAILURE.
std::vector<WorkerId> drive(Router& router, FakeCluster& cluster, const Trace& trace, uint64_t seed,
                            uint32_t empty_prompts = 0, Time max_gap = 5000);

// The router `spec` ("name:key=value,...") on `workers` workers with the default context.
std::unique_ptr<Router> make_test_router(const std::string& spec, uint32_t workers,
                                         uint64_t seed = 1);
// The router's stat `name`; a missing one fails the test and reads -1.
double router_stat(const Router& router, const std::string& name);

}  // namespace kvpolicy::testing
