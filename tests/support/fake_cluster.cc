#include "support/fake_cluster.h"

#include <gtest/gtest.h>

#include "kvpolicy/trace/generators.h"

namespace kvpolicy::testing {

FakeCluster::FakeCluster(uint32_t workers, uint32_t block_tokens, uint64_t capacity_blocks)
    : block_tokens_(block_tokens), loads_(workers), cached_(workers), lower_(workers) {
  for (WorkerLoad& l : loads_) l.capacity_blocks = capacity_blocks;
}

uint32_t FakeCluster::cached_prefix_blocks(WorkerId w, const RequestView& request) const {
  uint32_t n = 0;
  while (n < request.blocks.size() && cached_.at(w).contains(request.blocks[n])) ++n;
  return n;
}

std::array<uint32_t, 2> FakeCluster::lower_tier_prefix_blocks(WorkerId w,
                                                              const RequestView& request) const {
  std::array<uint32_t, 2> out{0, 0};
  for (size_t n = cached_prefix_blocks(w, request); n < request.blocks.size(); ++n) {
    uint32_t t = 0;
    while (t < 2 && !lower_.at(w)[t].contains(request.blocks[n])) ++t;
    if (t == 2) break;
    ++out[t];
  }
  return out;
}

void FakeCluster::cache_lower(WorkerId w, uint32_t tier, std::span<const BlockKey> blocks) {
  lower_.at(w).at(tier).insert(blocks.begin(), blocks.end());
}

void FakeCluster::cache(WorkerId w, std::span<const BlockKey> blocks) {
  cached_.at(w).insert(blocks.begin(), blocks.end());
  loads_.at(w).cached_blocks = cached_[w].size();
}

void FakeCluster::arrive(WorkerId w, const RequestView& r) {
  WorkerLoad& l = loads_.at(w);
  ++l.in_flight;
  ++l.waiting;
  l.queued_prefill_tokens += r.prompt_tokens;
}

void FakeCluster::admit(WorkerId w, const RequestView& r) {
  WorkerLoad& l = loads_.at(w);
  --l.waiting;
  ++l.running;
  l.queued_prefill_tokens -= r.prompt_tokens;
  l.active_blocks += r.blocks.size();
  cache(w, r.blocks);
}

void FakeCluster::finish(WorkerId w, const RequestView& r, bool admitted) {
  WorkerLoad& l = loads_.at(w);
  --l.in_flight;
  if (admitted) {
    --l.running;
    l.active_blocks -= r.blocks.size();
  } else {
    --l.waiting;
    l.queued_prefill_tokens -= r.prompt_tokens;
  }
}

std::vector<BlockKey> prompt(std::initializer_list<uint64_t> ids) {
  std::vector<BlockKey> out;
  BlockKey key = kRootKey;
  for (uint64_t id : ids) out.push_back(key = chain_key(key, id));
  return out;
}

RequestView request(const std::vector<BlockKey>& blocks, RequestIndex index, SessionId session,
                    uint32_t block_tokens) {
  return RequestView{.index = index,
                     .session = session,
                     .prompt_tokens = static_cast<uint32_t>(blocks.size()) * block_tokens,
                     .blocks = blocks,
                     .hints = {}};
}

std::vector<WorkerId> drive(Router& router, FakeCluster& cluster, const Trace& trace, uint64_t seed,
                            uint32_t empty_prompts, Time max_gap) {
  struct Flight {
    RequestView view;
    WorkerId worker;
    bool admitted;
    uint32_t cached_at_admission;
  };
  Rng rng(seed);
  std::vector<Flight> flying;
  std::vector<WorkerId> chosen;
  const size_t total = trace.size() + empty_prompts;
  auto complete = [&](size_t i) {
    Flight f = flying[i];
    flying[i] = flying.back();
    flying.pop_back();
    Completion done{.arrival = f.view.time,
                    .first_token = cluster.now(),
                    .finish = cluster.now(),
                    .cached_blocks = f.cached_at_admission};
    router.on_complete(f.view, f.worker, done, cluster);
    cluster.finish(f.worker, f.view, f.admitted);
  };
  Time now = 0;
  size_t next_trace = 0;
  for (size_t k = 0; k < total; ++k) {
    now += static_cast<Time>(rng.below(static_cast<uint64_t>(max_gap) + 1));
    cluster.set_now(now);
    RequestView view;
    // Empty prompts go at evenly spread positions, with indices after the trace's.
    bool empty = empty_prompts > 0 && (k + 1) * empty_prompts / total != k * empty_prompts / total;
    if (empty || next_trace == trace.size()) {
      view.index = static_cast<RequestIndex>(trace.size() + (k - next_trace));
    } else {
      view = request_view(trace, next_trace++);
    }
    view.time = now;
    WorkerId w = router.route(view, cluster);
    chosen.push_back(w);
    if (w >= cluster.workers()) {
      ADD_FAILURE() << "request " << view.index << " routed to worker " << w << " of "
                    << cluster.workers();
      continue;
    }
    cluster.arrive(w, view);
    flying.push_back({view, w, false, 0});
    // Some progress after each arrival: an admission, sometimes completions.
    if (!flying.empty() && rng.uniform() < 0.6) {
      Flight& f = flying[rng.below(flying.size())];
      if (!f.admitted) {
        f.cached_at_admission = cluster.cached_prefix_blocks(f.worker, f.view);
        cluster.admit(f.worker, f.view);
        f.admitted = true;
      }
    }
    while (!flying.empty() && rng.uniform() < 0.45) complete(rng.below(flying.size()));
  }
  while (!flying.empty()) {
    now += static_cast<Time>(rng.below(static_cast<uint64_t>(max_gap) + 1));
    cluster.set_now(now);
    complete(rng.below(flying.size()));
  }
  return chosen;
}

std::unique_ptr<Router> make_test_router(const std::string& spec, uint32_t workers, uint64_t seed) {
  return make_router(parse_router_spec(spec), RouterContext{.workers = workers, .seed = seed});
}

double router_stat(const Router& router, const std::string& name) {
  for (auto& [key, value] : router.stats())
    if (key == name) return value;
  ADD_FAILURE() << "no stat " << name;
  return -1;
}

}  // namespace kvpolicy::testing
