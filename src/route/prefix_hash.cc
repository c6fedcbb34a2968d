// prefix_hash: consistent hashing of the prompt's first prefix_tokens on a ring of virtual nodes,
// with bounded load: the home worker while its load is within load_factor x the average (this
// request counted), else the least loaded worker within it, else the home worker anyway.
// Source: SGLang model gateway's prefix_hash policy.
// Cost: O(log(workers x vnodes) + workers) per request.
#include <algorithm>

#include "hash_ring.h"
#include "route_common.h"

namespace kvpolicy {
namespace {

class PrefixHash final : public Router {
 public:
  PrefixHash(const RouterContext& ctx, const Params& p)
      : load_factor_(p.get_double("load_factor")),
        prefix_tokens_(static_cast<uint64_t>(p.get_int("prefix_tokens"))),
        block_tokens_(ctx.block_tokens),
        ring_(ctx.workers, static_cast<uint32_t>(p.get_int("vnodes")), kRingSalt) {}

  WorkerId route(const RequestView& r, const ClusterView& cluster) override {
    if (r.blocks.empty()) {  // the gateway has no tokens to hash: it declines; we balance
      ++no_tokens_;
      return least_in_flight(cluster);
    }
    uint64_t total = 0;
    for (WorkerId w = 0; w < cluster.workers(); ++w) total += cluster.load(w).in_flight;
    WorkerId home = ring_.worker_at(ring_.home(prefix_key(r)));
    if (load_ok(cluster.load(home).in_flight, total, cluster.workers())) {
      ++ring_hit_;
      return home;
    }
    // Not a walk along the ring: the least loaded worker within the bound, ties to the lower
    // index (docs/routers.md, prefix_hash).
    WorkerId best = home;
    bool found = false;
    for (WorkerId w = 0; w < cluster.workers(); ++w) {
      uint32_t load = cluster.load(w).in_flight;
      if (!load_ok(load, total, cluster.workers())) continue;
      if (!found || load < cluster.load(best).in_flight) best = w;
      found = true;
    }
    // load_factor >= 1 keeps the least loaded worker within the bound, so `found` always holds.
    ++balanced_;
    return best;
  }

  PolicyStats stats() const override {
    return {{"ring_hit_decisions", double(ring_hit_)},
            {"load_balance_decisions", double(balanced_)},
            {"no_tokens_decisions", double(no_tokens_)}};
  }

 private:
  static constexpr uint64_t kRingSalt = 0x70726678ULL;  // "prfx"

  // The key of the prompt's first ceil(prefix_tokens / block) blocks (all of a shorter prompt):
  // block keys are chained, so the last of them stands for the whole prefix.
  uint64_t prefix_key(const RequestView& r) const {
    uint64_t blocks = (prefix_tokens_ + block_tokens_ - 1) / block_tokens_;
    size_t last = static_cast<size_t>(std::min<uint64_t>(blocks, r.blocks.size())) - 1;
    return chain_key(kRingSalt ^ 1, r.blocks[last]);
  }
  // With nothing in flight anywhere, any worker; else load <= load_factor x (total + 1) / n.
  bool load_ok(uint64_t load, uint64_t total, uint32_t workers) const {
    if (total == 0) return true;
    return double(load) <= load_factor_ * double(total + 1) / double(workers);
  }

  double load_factor_;
  uint64_t prefix_tokens_;
  uint32_t block_tokens_;
  HashRing ring_;
  uint64_t ring_hit_ = 0, balanced_ = 0, no_tokens_ = 0;
};

const bool registered = register_router<PrefixHash>({
    .name = "prefix_hash",
    .summary = "consistent hash of the first prefix_tokens on a ring of virtual nodes; a home "
               "over load_factor x average load gives way to the least loaded worker under it",
    .source = "SGLang model gateway (prefix_hash)",
    .params = {param_int("prefix_tokens", 256, {.min = 1},
                         "tokens of the prompt's head that are hashed (rounded up to blocks)"),
               param_double("load_factor", 1.25, {.min = 1},
                            "a worker is within the bound while its requests in flight <= "
                            "load_factor x (all in flight + 1) / workers"),
               param_int("vnodes", 150, {.min = 1}, "virtual nodes per worker on the ring")},
    .variants = {"prefix_tokens=16,vnodes=1,load_factor=1"},
});

}  // namespace
}  // namespace kvpolicy
