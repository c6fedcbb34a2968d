// The perfect next-access predictor: the trace's true next use of each block (offline).
#include <algorithm>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/time_range.h"
#include "kvpolicy/predict/predictor.h"
#include "kvpolicy/predict/registry.h"

namespace kvpolicy {

std::vector<Time> strict_request_times(std::span<const Time> request_time) {
  std::vector<Time> t(request_time.size());
  for (size_t r = 0; r < t.size(); ++r) {
    // A view built through the C++ API may hold any time; the noisy oracle adds noise to them.
    if (!valid_time(request_time[r]))
      throw Error("oracle: request " + std::to_string(r) + "'s time " +
                  std::to_string(request_time[r]) + " us is outside [0, 2^62) microseconds");
    t[r] = r ? std::max(request_time[r], t[r - 1] + 1) : request_time[r];
  }
  return t;
}

OraclePredictor::OraclePredictor(const OracleView& future)
    : future_(future), strict_(strict_request_times(future.request_time)) {}

void OraclePredictor::on_access(NodeId n, const AccessInfo& info) {
  if (n >= last_access_.size())
    last_access_.resize(std::max<size_t>(n + 1, last_access_.size() * 2), 0);
  last_access_[n] = info.access;
}

Time OraclePredictor::true_next(NodeId n) const {
  uint32_t r = future_.next_request[last_access_[n]];
  return r == OracleView::kNoNext ? kNever : strict_[r];
}

void OraclePredictor::do_predict(std::span<const NodeId> nodes, std::span<Time> out) {
  for (size_t i = 0; i < nodes.size(); ++i) out[i] = true_next(nodes[i]);
}

namespace {

const bool registered = register_predictor({
    .name = "oracle",
    .summary = "the trace's true next use of each block (offline: reads the future)",
    .reads_future = true,
    .make = [](const PredictorConfig&,
               const PredictorContext& ctx) -> std::unique_ptr<NextAccessPredictor> {
      return std::make_unique<OraclePredictor>(*ctx.future);
    },
});

}  // namespace

}  // namespace kvpolicy
