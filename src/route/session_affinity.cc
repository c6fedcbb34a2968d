// session_affinity: consistent hashing of the session on a ring of virtual nodes, with bounded
// loads: the session's worker unless it already holds its share, then clockwise to the next.
// Source: consistent hashing with bounded loads (Mirrokni, Thorup, Zadimoghaddam, SODA 2018).
// Cost: O(log(workers x vnodes)) per request, O(workers x vnodes) when every worker is full.
#include <cmath>

#include "hash_ring.h"
#include "route_common.h"

namespace kvpolicy {
namespace {

class SessionAffinity final : public Router {
 public:
  SessionAffinity(const RouterContext& ctx, const Params& p)
      : load_factor_(p.get_double("load_factor")),
        ring_(ctx.workers, static_cast<uint32_t>(p.get_int("vnodes")), kRingSalt) {}

  WorkerId route(const RequestView& r, const ClusterView& cluster) override {
    uint64_t total = 0;
    for (WorkerId w = 0; w < cluster.workers(); ++w) total += cluster.load(w).in_flight;
    // With this request counted, a worker may hold at most ceil(c * average load).
    auto bound = static_cast<uint64_t>(
        std::ceil(load_factor_ * double(total + 1) / double(cluster.workers())));
    size_t first = ring_.home(session_hash(r));
    // load_factor >= 1, so some worker is under the bound and the walk ends within one turn.
    for (size_t step = 0; step < ring_.size(); ++step) {
      WorkerId w = ring_.worker_at(first, step);
      if (cluster.load(w).in_flight < bound) {
        if (w != ring_.worker_at(first)) ++walked_;
        return w;
      }
    }
    return least_in_flight(cluster);
  }

  PolicyStats stats() const override { return {{"walked_past_full_worker", double(walked_)}}; }

 private:
  static constexpr uint64_t kRingSalt = 0x72696e67ULL;  // "ring"

  // The session; without one, the first block (the prompt's head); without blocks, the request.
  static uint64_t session_hash(const RequestView& r) {
    if (r.session != kNoSession) return chain_key(kRingSalt ^ 1, r.session);
    if (!r.blocks.empty()) return mix64(r.blocks[0]);
    return chain_key(kRingSalt ^ 2, r.index);
  }

  double load_factor_;
  HashRing ring_;
  uint64_t walked_ = 0;
};

const bool registered = register_router<SessionAffinity>({
    .name = "session_affinity",
    .summary = "consistent hash of the session (else the first block) on a ring of virtual "
               "nodes; a worker over ceil(load_factor x average load) passes it clockwise",
    .source = "consistent hashing with bounded loads (Mirrokni et al., SODA 2018)",
    .params = {param_int("vnodes", 100, {.min = 1}, "virtual nodes per worker on the ring"),
               param_double("load_factor", 1.25, {.min = 1},
                            "a worker may hold at most ceil(load_factor x (in flight + 1) / "
                            "workers) requests")},
    .variants = {"vnodes=1,load_factor=1"},
});

}  // namespace
}  // namespace kvpolicy
