#include "worker_trace.h"

#include <utility>

namespace kvpolicy::serve_detail {

WorkerTraceSampler::WorkerTraceSampler(WorkerTrace& out, double first_arrival, uint32_t workers,
                                       Fill fill, Busy busy)
    : out_(out),
      first_(first_arrival),
      workers_(workers),
      fill_(std::move(fill)),
      busy_(std::move(busy)),
      busy_at_last_(workers, 0.0) {
  out_.samples.clear();
}

void WorkerTraceSampler::sample(double t, double length) {
  for (uint32_t w = 0; w < workers_; ++w) {
    WorkerSample x;
    x.time_s = t - first_;
    x.interval_s = length;
    x.worker = w;
    fill_(w, x);
    double busy = busy_(w, t);
    x.busy_share = length > 0 ? (busy - busy_at_last_[w]) / length : 0.0;
    busy_at_last_[w] = busy;
    out_.samples.push_back(std::move(x));
  }
}

void WorkerTraceSampler::until(double t) {
  const double dt = out_.interval_s;
  while (first_ + double(taken_ + 1) * dt <= t) {
    ++taken_;
    sample(first_ + double(taken_) * dt, dt);
  }
}

void WorkerTraceSampler::finish(double last_finish) {
  double from = first_ + double(taken_) * out_.interval_s;
  if (last_finish > first_ && last_finish > from) sample(last_finish, last_finish - from);
}

}  // namespace kvpolicy::serve_detail
