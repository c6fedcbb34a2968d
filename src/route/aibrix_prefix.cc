// aibrix_prefix: if max - min requests in flight > imbalance_abs, only the least-loaded workers
// are candidates. Among candidates holding a prefix of the prompt in the router's approximate
// index, the longest match (then the fewer in flight, then at random) whose load is within mean
// + std_factor x standard deviation of all workers' loads; else (no match, or none within) the
// least-loaded worker at random. The chosen worker's index then gains the prompt.
// Source: AIBrix gateway's prefix-cache routing algorithm (its local prefix index).
// Cost: O(prompt blocks + workers log workers) per request, plus the index's evictions.
#include <algorithm>
#include <cmath>
#include <vector>

#include "approx_tree.h"
#include "route_common.h"

namespace kvpolicy {
namespace {

class AibrixPrefix final : public Router {
 public:
  AibrixPrefix(const RouterContext& ctx, const Params& p)
      : imbalance_abs_(static_cast<uint32_t>(p.get_int("imbalance_abs"))),
        std_factor_(p.get_double("std_factor")),
        rng_(chain_key(ctx.seed, 0x61696278ULL)),  // "aibx"
        tree_(ctx.workers, ctx.block_tokens,
              std::max<uint64_t>(ctx.block_tokens,
                                 static_cast<uint64_t>(p.get_int("index_tokens")) / ctx.workers),
              static_cast<Time>(p.get_double("ttl_s") * double(kMicrosPerSecond))) {}

  WorkerId route(const RequestView& r, const ClusterView& cluster) override {
    WorkerId chosen = choose(r, cluster);
    tree_.insert(chosen, r.blocks, cluster.now());
    return chosen;
  }

  PolicyStats stats() const override {
    return {{"imbalanced_decisions", double(imbalanced_)},
            {"prefix_decisions", double(by_prefix_)},
            {"prefix_skipped_decisions", double(skipped_)},
            {"least_request_decisions", double(least_)}};
  }

 private:
  WorkerId choose(const RequestView& r, const ClusterView& cluster) {
    const uint32_t n = cluster.workers();
    uint32_t lo = UINT32_MAX, hi = 0;
    double mean = 0;
    for (WorkerId w = 0; w < n; ++w) {
      uint32_t load = cluster.load(w).in_flight;
      lo = std::min(lo, load);
      hi = std::max(hi, load);
      mean += load;
    }
    mean /= n;
    // Sample standard deviation (n - 1), 0 for one worker.
    double var = 0;
    for (WorkerId w = 0; w < n; ++w) var += std::pow(cluster.load(w).in_flight - mean, 2);
    const double bound = mean + std_factor_ * (n > 1 ? std::sqrt(var / (n - 1)) : 0.0);
    const bool imbalanced = hi - lo > imbalance_abs_;
    if (imbalanced) ++imbalanced_;

    // Candidates with a match: (match, worker). An imbalanced cluster offers only its
    // least-loaded workers.
    candidates_.clear();
    if (!r.blocks.empty()) {
      tree_.match(r.blocks, cluster.now(), matched_);
      for (WorkerId w = 0; w < n; ++w)
        if (matched_[w] > 0 && (!imbalanced || cluster.load(w).in_flight == lo))
          candidates_.push_back(w);
    }
    if (!candidates_.empty()) {
      // Shuffled, then stably sorted by match percent (whole percent of the prompt's blocks, as
      // the gateway keeps it) down and load up: equal keys stay in random order.
      for (size_t i = candidates_.size(); i > 1; --i)
        std::swap(candidates_[i - 1], candidates_[rng_.below(static_cast<uint32_t>(i))]);
      auto percent = [&](WorkerId w) { return uint64_t{matched_[w]} * 100 / r.blocks.size(); };
      std::stable_sort(candidates_.begin(), candidates_.end(), [&](WorkerId a, WorkerId b) {
        if (percent(a) != percent(b)) return percent(a) > percent(b);
        return cluster.load(a).in_flight < cluster.load(b).in_flight;
      });
      for (WorkerId w : candidates_)
        if (double(cluster.load(w).in_flight) <= bound) {
          ++by_prefix_;
          return w;
        }
      ++skipped_;
    } else {
      ++least_;
    }
    // The fallback looks at every worker, imbalanced or not.
    ties_.clear();
    for (WorkerId w = 0; w < n; ++w)
      if (cluster.load(w).in_flight == lo) ties_.push_back(w);
    return ties_[rng_.below(static_cast<uint32_t>(ties_.size()))];
  }

  uint32_t imbalance_abs_;
  double std_factor_;
  SplitMix64 rng_;
  ApproxTree tree_;
  std::vector<uint32_t> matched_;
  std::vector<WorkerId> candidates_, ties_;
  uint64_t imbalanced_ = 0, by_prefix_ = 0, skipped_ = 0, least_ = 0;
};

const bool registered = register_router<AibrixPrefix>({
    .name = "aibrix_prefix",
    .summary = "if max - min in flight > imbalance_abs: only the least loaded; the longest match "
               "in its approximate index with load <= mean + std_factor x stddev, else the "
               "least loaded (random ties)",
    .source = "AIBrix gateway (prefix-cache routing algorithm)",
    .params = {param_int("imbalance_abs", 8, {.min = 0},
                         "imbalanced if max - min requests in flight exceeds this"),
               param_double("std_factor", 1, {.min = 0},
                            "a matched worker is taken only with in flight <= mean + std_factor "
                            "x sample standard deviation of all workers' in flight"),
               param_int("index_tokens", 200000, {.min = 1},
                         "size of the router's prefix index in tokens, split evenly among the "
                         "workers (AIBrix: 200,000 blocks of 4 characters)"),
               param_double("ttl_s", 1200, {.min = 0},
                            "an indexed prefix not routed again for this long is forgotten, s")},
    .variants = {"imbalance_abs=0,std_factor=0", "index_tokens=64,ttl_s=0.05"},
    .randomized = true,
    .max_workers = ApproxTree::kMaxWorkers,
});

}  // namespace
}  // namespace kvpolicy
