// dualmap: two hashes of the prompt's leading blocks name two candidate workers; the one with
// the longer cached prefix (KV events) is taken while its predicted TTFT meets the SLO, else the
// other if it does, else (both predicted to miss) the worker of least predicted TTFT
// (docs/routers.md, "dualmap"). Predicted TTFT = (queued prefill tokens + the prompt's uncached
// tokens there) x the cluster's prefill cost per token.
// Source: "DualMap: Enabling Both Cache Affinity and Load Balancing for Distributed LLM
// Serving" (Yuan et al., ICLR 2026).
// Cost: two cached-prefix queries per request, O(workers) when both candidates miss the SLO.
#include <algorithm>
#include <array>

#include "kvpolicy/route/router.h"
#include "route_common.h"

namespace kvpolicy {
namespace {

class DualMap final : public Router {
 public:
  DualMap(const RouterContext& ctx, const Params& p)
      : prefix_blocks_(static_cast<uint32_t>(p.get_int("prefix_blocks"))),
        slo_s_(p.get_double("ttft_slo_ms") * 1e-3),
        global_fallback_(p.get_string("fallback") == "global"),
        seconds_per_token_(ctx.prefill_seconds_per_token) {}

  // The two candidates of a request: deterministic in its leading blocks (or, without blocks,
  // its index), distinct when there are two workers or more.
  static std::array<WorkerId, 2> candidates(const RequestView& r, uint32_t prefix_blocks,
                                            uint32_t workers) {
    uint64_t key = r.blocks.empty()
                       ? mix64(r.index ^ 0x5bd1e995ULL)
                       : r.blocks[std::min<size_t>(prefix_blocks, r.blocks.size()) - 1];
    WorkerId first = scale_below(mix64(key ^ kSalt1), workers);
    if (workers < 2) return {first, first};
    WorkerId second = scale_below(mix64(key ^ kSalt2), workers - 1);
    if (second >= first) ++second;
    return {first, second};
  }

  WorkerId route(const RequestView& r, const ClusterView& cluster) override {
    auto [c1, c2] = candidates(r, prefix_blocks_, cluster.workers());
    uint32_t cached1 = cluster.cached_prefix_blocks(c1, r);
    uint32_t cached2 = c2 == c1 ? cached1 : cluster.cached_prefix_blocks(c2, r);
    double t1 = predicted_ttft(c1, cached1, r, cluster),
           t2 = predicted_ttft(c2, cached2, r, cluster);
    // Cache affinity first: the longer cached prefix, then the sooner first token, then the
    // first hash's worker.
    bool first = cached1 > cached2 || (cached1 == cached2 && t1 <= t2);
    WorkerId affine = first ? c1 : c2, other = first ? c2 : c1;
    double t_affine = first ? t1 : t2, t_other = first ? t2 : t1;
    if (t_affine <= slo_s_) {
      ++affinity_;
      return affine;
    }
    if (t_other <= slo_s_) {
      ++balanced_;
      return other;
    }
    ++fallback_;
    if (!global_fallback_) return t_other < t_affine ? other : affine;
    WorkerId best = affine;
    double best_t = t_affine;
    for (WorkerId w = 0; w < cluster.workers(); ++w) {
      if (w == affine) continue;
      double t = predicted_ttft(w, cluster.cached_prefix_blocks(w, r), r, cluster);
      if (t < best_t || (t == best_t && w < best)) {
        best = w;
        best_t = t;
      }
    }
    return best;
  }

  PolicyStats stats() const override {
    return {{"affinity_decisions", double(affinity_)},
            {"balanced_decisions", double(balanced_)},
            {"slo_fallback_decisions", double(fallback_)}};
  }

 private:
  static constexpr uint64_t kSalt1 = 0x9e3779b97f4a7c15ULL, kSalt2 = 0xc2b2ae3d27d4eb4fULL;

  double predicted_ttft(WorkerId w, uint32_t cached_blocks, const RequestView& r,
                        const ClusterView& cluster) const {
    uint64_t cached =
        std::min<uint64_t>(uint64_t{cached_blocks} * cluster.block_tokens(), r.prompt_tokens);
    double tokens =
        double(cluster.load(w).queued_prefill_tokens) + double(r.prompt_tokens - cached);
    return tokens * seconds_per_token_;
  }

  uint32_t prefix_blocks_;
  double slo_s_;
  bool global_fallback_;
  double seconds_per_token_;
  uint64_t affinity_ = 0, balanced_ = 0, fallback_ = 0;
};

const bool registered = register_router<DualMap>({
    .name = "dualmap",
    .summary = "two hashes of the leading prefix_blocks name two workers: the longer cached "
               "prefix if its predicted TTFT <= ttft_slo_ms, else the other if it meets it, "
               "else the least predicted TTFT (of all workers, or of the two)",
    .source = "DualMap (Yuan et al., ICLR 2026: dual mapping, power of two choices, SLO-aware "
              "routing)",
    .params = {param_int("prefix_blocks", 4, {.min = 1},
                         "leading blocks hashed to name the candidates"),
               param_double("ttft_slo_ms", 200, {.min = 0, .min_exclusive = true},
                            "TTFT SLO the predicted TTFT is held to, ms (serve's --slo-ms "
                            "default)"),
               param_choice("fallback", "global", {"global", "pair"},
                            "both candidates predicted to miss the SLO: the least predicted "
                            "TTFT of all workers (global) or of the two (pair)")},
    .variants = {"prefix_blocks=1", "ttft_slo_ms=0.001", "ttft_slo_ms=0.001,fallback=pair",
                 "ttft_slo_ms=100000"},
});

}  // namespace
}  // namespace kvpolicy
