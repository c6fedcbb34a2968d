// Serve mode's per-worker trace (docs/serve.md, "Per-worker trace"): every worker sampled at the
// boundaries first arrival + k x interval, and once more at the last completion.
#pragma once

#include <cstdint>
#include <functional>

#include "kvpolicy/serve/serve.h"

namespace kvpolicy::serve_detail {

class WorkerTraceSampler {
 public:
  // `fill(w, x)` sets worker w's load and router state in x as they are now; `busy(w, t)` is
  // the seconds w has spent in iterations up to t.
  using Fill = std::function<void(uint32_t w, WorkerSample& x)>;
  using Busy = std::function<double(uint32_t w, double t)>;
  WorkerTraceSampler(WorkerTrace& out, double first_arrival, uint32_t workers, Fill fill,
                     Busy busy);
  // Samples every boundary at or before t (before the events at t change the loads).
  void until(double t);
  // The last, shorter interval up to the last completion.
  void finish(double last_finish);

 private:
  void sample(double t, double length);
  WorkerTrace& out_;
  double first_;
  uint32_t workers_;
  Fill fill_;
  Busy busy_;
  uint64_t taken_ = 0;  // boundaries first + k x interval sampled, k <= taken_
  std::vector<double> busy_at_last_;
};

}  // namespace kvpolicy::serve_detail
