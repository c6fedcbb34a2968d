// power_of_two: two distinct workers drawn uniformly at random, the less loaded of the two; on
// equal loads the first drawn. Load is requests in flight, or (load=tokens) KV tokens held plus
// prompt tokens queued, optionally as last polled (poll_ms) rather than live.
// Source: SGLang model gateway / vLLM router `power_of_two`; Ray Serve's default request router.
// Cost: O(1) per request (O(workers) at each poll).
#include <vector>

#include "route_common.h"

namespace kvpolicy {
namespace {

class PowerOfTwo final : public Router {
 public:
  PowerOfTwo(const RouterContext& ctx, const Params& p)
      : tokens_(p.get_string("load") == "tokens"),
        poll_(static_cast<Time>(p.get_int("poll_ms")) * (kMicrosPerSecond / 1000)),
        rng_(chain_key(ctx.seed, 0x70326330ULL)) {}  // "p2c0": its own stream per seed

  WorkerId route(const RequestView&, const ClusterView& cluster) override {
    const uint32_t n = cluster.workers();
    if (n == 1) return 0;
    if (poll_ > 0 && (polled_.size() != n || cluster.now() >= next_poll_)) {
      polled_.resize(n);
      for (WorkerId w = 0; w < n; ++w) polled_[w] = live_load(cluster, w);
      next_poll_ = (cluster.now() / poll_ + 1) * poll_;
      ++polls_;
    }
    // Two distinct workers, each pair equally likely: the second is drawn from the other n - 1.
    WorkerId a = rng_.below(n);
    WorkerId b = rng_.below(n - 1);
    if (b >= a) ++b;
    uint64_t load_a = load(cluster, a), load_b = load(cluster, b);
    if (load_a == load_b) ++equal_;
    return load_a <= load_b ? a : b;
  }

  PolicyStats stats() const override {
    return {{"equal_load_decisions", double(equal_)}, {"load_polls", double(polls_)}};
  }

 private:
  uint64_t live_load(const ClusterView& cluster, WorkerId w) const {
    const WorkerLoad& l = cluster.load(w);
    if (!tokens_) return l.in_flight;
    return l.active_blocks * cluster.block_tokens() + l.queued_prefill_tokens;
  }
  uint64_t load(const ClusterView& cluster, WorkerId w) const {
    return poll_ > 0 ? polled_[w] : live_load(cluster, w);
  }

  bool tokens_;
  Time poll_;
  SplitMix64 rng_;
  std::vector<uint64_t> polled_;
  Time next_poll_ = 0;
  uint64_t equal_ = 0, polls_ = 0;
};

const bool registered = register_router<PowerOfTwo>({
    .name = "power_of_two",
    .summary = "two distinct random workers (seeded), the one with less load (in flight; or "
               "tokens held + queued); equal loads: the first drawn",
    .source = "SGLang model gateway / vLLM router (power_of_two); Ray Serve's default request "
              "router (power of two choices)",
    .params = {param_choice("load", "in_flight", {"in_flight", "tokens"},
                            "in_flight: requests routed and not completed (the gateway's own "
                            "counter); tokens: KV tokens of running requests + queued prompt "
                            "tokens (SGLang's polled /get_load)"),
               param_int("poll_ms", 0, {.min = 0},
                         "0: live loads; else loads as polled at the last multiple of this "
                         "(SGLang's worker_load_check_interval: 1-10 s)")},
    .variants = {"load=tokens", "load=tokens,poll_ms=1000", "poll_ms=50"},
    .randomized = true,
});

}  // namespace
}  // namespace kvpolicy
