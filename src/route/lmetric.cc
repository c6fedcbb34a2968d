// lmetric: the worker of least new prefill tokens x batch size (docs/routers.md, "lmetric"):
// new prefill tokens = the prompt's tokens not cached there (KV events, exact), plus with
// prefill=queued the worker's queued prefill tokens; batch size = its running requests (or its
// requests in flight). Ties to the fewer new prefill tokens, then the fewer requests in flight,
// then the lower index.
// Source: "LMetric: Simple is Better - Multiplication May Be All You Need for LLM Request
// Scheduling" (Zhang et al., 2026).
// Cost: O(workers) cached-prefix queries per request.
#include <algorithm>
#include <vector>

#include "kvpolicy/route/router.h"

namespace kvpolicy {
namespace {

class LMetric final : public Router {
 public:
  LMetric(const RouterContext&, const Params& p)
      : queued_(p.get_string("prefill") == "queued"),
        in_flight_(p.get_string("batch") == "in_flight") {}

  WorkerId route(const RequestView& r, const ClusterView& cluster) override {
    const uint32_t n = cluster.workers();
    tokens_.resize(n);
    score_.resize(n);
    WorkerId best = 0;
    for (WorkerId w = 0; w < n; ++w) {
      const WorkerLoad& load = cluster.load(w);
      uint64_t cached = std::min<uint64_t>(
          uint64_t{cluster.cached_prefix_blocks(w, r)} * cluster.block_tokens(), r.prompt_tokens);
      tokens_[w] = r.prompt_tokens - cached + (queued_ ? load.queued_prefill_tokens : 0);
      uint64_t batch = in_flight_ ? load.in_flight : load.running;
      score_[w] = static_cast<unsigned __int128>(tokens_[w]) * batch;  // exact in integers
      if (before(w, best, cluster)) best = w;
    }
    // Which rule decided: the product alone, or a tie rule (tokens, requests in flight, index).
    uint32_t same_score = 0, same_tokens = 0, same_flight = 0;
    for (WorkerId w = 0; w < n; ++w)
      if (score_[w] == score_[best]) {
        ++same_score;
        if (tokens_[w] == tokens_[best]) {
          ++same_tokens;
          if (cluster.load(w).in_flight == cluster.load(best).in_flight) ++same_flight;
        }
      }
    if (same_score == 1)
      ++by_product_;
    else if (same_tokens == 1)
      ++ties_by_tokens_;
    else if (same_flight == 1)
      ++ties_by_flight_;
    else
      ++ties_by_index_;
    if (score_[best] == 0) ++zero_score_;
    return best;
  }

  PolicyStats stats() const override {
    return {{"product_decisions", double(by_product_)},
            {"ties_to_fewer_prefill_tokens", double(ties_by_tokens_)},
            {"ties_to_fewer_in_flight", double(ties_by_flight_)},
            {"ties_to_lower_index", double(ties_by_index_)},
            {"zero_score_decisions", double(zero_score_)}};
  }

 private:
  // w before `best`: a smaller score, then fewer new prefill tokens, then fewer requests in
  // flight (the lower index otherwise: best is the lower).
  bool before(WorkerId w, WorkerId best, const ClusterView& cluster) const {
    if (score_[w] != score_[best]) return score_[w] < score_[best];
    if (tokens_[w] != tokens_[best]) return tokens_[w] < tokens_[best];
    return cluster.load(w).in_flight < cluster.load(best).in_flight;
  }

  bool queued_, in_flight_;
  std::vector<uint64_t> tokens_;
  std::vector<unsigned __int128> score_;
  uint64_t by_product_ = 0, ties_by_tokens_ = 0, ties_by_flight_ = 0, ties_by_index_ = 0;
  uint64_t zero_score_ = 0;
};

const bool registered = register_router<LMetric>({
    .name = "lmetric",
    .summary = "least (uncached prompt tokens there [+ its queued prefill tokens]) x its running "
               "requests; ties to the fewer prefill tokens, then the fewer requests in flight",
    .source = "LMetric (Zhang et al., 2026: KV$ indicator x load indicator, no hyperparameters)",
    .params = {param_choice("prefill", "request", {"request", "queued"},
                            "new prefill tokens: the request's uncached tokens on the worker "
                            "(request), or those plus its queued prefill tokens (queued)"),
               param_choice("batch", "running", {"running", "in_flight"},
                            "batch size: requests running on the worker, or all its requests in "
                            "flight (running + waiting)")},
    .variants = {"prefill=queued", "batch=in_flight", "prefill=queued,batch=in_flight"},
});

}  // namespace
}  // namespace kvpolicy
