// llm_d: the worker of highest score = prefix_weight x (exactly cached blocks / prompt blocks)
// + kv_weight x (1 - KV utilisation) + queue_weight x (1 - waiting / max waiting); ties to the
// lower index.
// Source: llm-d inference scheduler (precise prefix-cache scorer 2, kv-cache and queue scorers 1).
// Cost: O(workers) cached-prefix queries per request.
#include <algorithm>

#include "kvpolicy/route/router.h"

namespace kvpolicy {
namespace {

class LlmD final : public Router {
 public:
  LlmD(const RouterContext&, const Params& p)
      : prefix_weight_(p.get_double("prefix_weight")),
        kv_weight_(p.get_double("kv_weight")),
        queue_weight_(p.get_double("queue_weight")) {}

  WorkerId route(const RequestView& r, const ClusterView& cluster) override {
    uint32_t max_waiting = 0;
    for (WorkerId w = 0; w < cluster.workers(); ++w)
      max_waiting = std::max(max_waiting, cluster.load(w).waiting);
    WorkerId best = 0;
    double best_score = 0;
    for (WorkerId w = 0; w < cluster.workers(); ++w) {
      const WorkerLoad& load = cluster.load(w);
      double prefix = r.blocks.empty()
                          ? 0.0
                          : double(cluster.cached_prefix_blocks(w, r)) / double(r.blocks.size());
      double queue = max_waiting == 0 ? 1.0 : 1.0 - double(load.waiting) / double(max_waiting);
      double score = prefix_weight_ * prefix + kv_weight_ * (1.0 - load.kv_utilisation()) +
                     queue_weight_ * queue;
      if (w == 0 || score > best_score) {
        best = w;
        best_score = score;
      }
    }
    return best;
  }

 private:
  double prefix_weight_, kv_weight_, queue_weight_;
};

const bool registered = register_router<LlmD>({
    .name = "llm_d",
    .summary = "max of prefix_weight x cached share of the prompt (KV events) + kv_weight x "
               "free KV share + queue_weight x (1 - waiting / max waiting)",
    .source = "llm-d inference scheduler (prefix-cache, kv-cache-utilization, queue scorers)",
    .params = {param_double("prefix_weight", 2, {.min = 0}, "weight of the prefix-cache scorer"),
               param_double("kv_weight", 1, {.min = 0}, "weight of the KV-utilisation scorer"),
               param_double("queue_weight", 1, {.min = 0}, "weight of the queue scorer")},
    .variants = {"prefix_weight=1,queue_weight=0"},
});

}  // namespace
}  // namespace kvpolicy
