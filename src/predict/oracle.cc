// The perfect next-access predictor: the trace's true next use of each block (offline).
#include <algorithm>

#include "kvpolicy/predictor.h"
#include "kvpolicy/trace.h"

namespace kvpolicy {

std::vector<Time> strict_request_times(const Trace& trace) {
  std::vector<Time> t(trace.size());
  for (size_t r = 0; r < t.size(); ++r)
    t[r] = r ? std::max(trace.time[r], t[r - 1] + 1) : trace.time[r];
  return t;
}

OraclePredictor::OraclePredictor(const Trace& trace, const Oracle& oracle)
    : oracle_(oracle), strict_(strict_request_times(trace)) {}

void OraclePredictor::on_access(NodeId n, const AccessInfo& info) {
  if (n >= last_access_.size())
    last_access_.resize(std::max<size_t>(n + 1, last_access_.size() * 2), 0);
  last_access_[n] = info.access;
}

Time OraclePredictor::true_next(NodeId n) const {
  uint32_t r = oracle_.next_request[last_access_[n]];
  return r == Oracle::kNoNext ? kNever : strict_[r];
}

void OraclePredictor::do_predict(std::span<const NodeId> nodes, std::span<Time> out) {
  for (size_t i = 0; i < nodes.size(); ++i) out[i] = true_next(nodes[i]);
}

}  // namespace kvpolicy
