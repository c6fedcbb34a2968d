// load_aware: the worker of highest score = matched tokens / prompt tokens - beta x (its load -
// mean load) / max(1, mean load), load = requests in flight, matches from the workers' exact
// cached prefixes (KV events) counted in whole chunks; ties to the lower index.
// Source: vLLM production stack's router, `loadaware` routing logic (LMCache controller lookup).
// Cost: O(workers) cached-prefix queries per request.
#include <algorithm>

#include "kvpolicy/route/router.h"

namespace kvpolicy {
namespace {

class LoadAware final : public Router {
 public:
  LoadAware(const RouterContext&, const Params& p)
      : beta_(p.get_double("beta")), chunk_(static_cast<uint64_t>(p.get_int("chunk_tokens"))) {}

  WorkerId route(const RequestView& r, const ClusterView& cluster) override {
    const uint32_t n = cluster.workers();
    double mean = 0;
    for (WorkerId w = 0; w < n; ++w) mean += cluster.load(w).in_flight;
    mean /= n;
    const double scale = std::max(1.0, mean);
    WorkerId best = 0;
    double best_score = 0;
    uint64_t best_matched = 0, max_matched = 0;
    for (WorkerId w = 0; w < n; ++w) {
      uint64_t matched = matched_tokens(r, cluster, w);
      double share = r.prompt_tokens ? double(matched) / double(r.prompt_tokens) : 0.0;
      double score = share - beta_ * (double(cluster.load(w).in_flight) - mean) / scale;
      if (w == 0 || score > best_score) {
        best = w;
        best_score = score;
        best_matched = matched;
      }
      if (matched > max_matched) {
        max_matched = matched;
      }
    }
    if (max_matched == 0)
      ++no_match_;
    else if (best_matched == max_matched)
      ++longest_match_;
    else
      ++load_over_match_;
    return best;
  }

  PolicyStats stats() const override {
    return {{"longest_match_decisions", double(longest_match_)},
            {"load_over_match_decisions", double(load_over_match_)},
            {"no_match_decisions", double(no_match_)}};
  }

 private:
  // The exactly cached prefix of the prompt on w in tokens, rounded down to whole chunks (the
  // controller indexes chunks), at most the prompt.
  uint64_t matched_tokens(const RequestView& r, const ClusterView& cluster, WorkerId w) const {
    if (r.blocks.empty()) return 0;
    uint64_t tokens = uint64_t{cluster.cached_prefix_blocks(w, r)} * cluster.block_tokens();
    tokens = std::min<uint64_t>(tokens, r.prompt_tokens);
    return tokens / chunk_ * chunk_;
  }

  double beta_;
  uint64_t chunk_;
  uint64_t longest_match_ = 0, load_over_match_ = 0, no_match_ = 0;
};

const bool registered = register_router<LoadAware>({
    .name = "load_aware",
    .summary = "max of matched / prompt tokens (KV events, whole chunks) - beta x (in flight - "
               "mean) / max(1, mean); ties to the lower index",
    .source = "vLLM production stack router (loadaware routing logic, LMCache controller lookup)",
    .params = {param_double("beta", 1.0, {.min = 0},
                            "exchange rate: a worker 100 % above the mean load loses beta of a "
                            "whole-prompt hit"),
               param_int("chunk_tokens", 256, {.min = 1},
                         "matches count in whole chunks of this many tokens (LMCache's chunk "
                         "size); 1 = every cached token")},
    .variants = {"beta=0", "chunk_tokens=1,beta=4"},
});

}  // namespace
}  // namespace kvpolicy
