// The predictor base (counting, timing) and the audit wrapper.
#include "kvpolicy/predict/predictor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

void NextAccessPredictor::predict(std::span<const NodeId> nodes, std::span<Time> out) {
  auto start = std::chrono::steady_clock::now();
  predictions_ += nodes.size();
  ++batches_;
  do_predict(nodes, out);
  predict_ns_ +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
}

PolicyStats NextAccessPredictor::stats() const {
  return {{"predictions", double(predictions_)},
          {"predict_batches", double(batches_)},
          {"predict_seconds", predict_ns_ * 1e-9}};
}

// --- AuditedPredictor -----------------------------------------------------------------------

AuditedPredictor::AuditedPredictor(std::unique_ptr<NextAccessPredictor> inner,
                                   const OracleView& future, uint64_t seed)
    : inner_(std::move(inner)), future_(future), rng_(mix64(seed ^ 0xa0d17ULL)) {
  ring_.reserve(4096);
}

void AuditedPredictor::on_access(NodeId n, const AccessInfo& info) {
  if (n >= last_access_.size()) {
    last_access_.resize(n + 1024, 0);
    last_req_.resize(n + 1024, 0);
  }
  last_access_[n] = info.access;
  last_req_[n] = info.req;
  inner_->on_access(n, info);
}

void AuditedPredictor::do_predict(std::span<const NodeId> nodes, std::span<Time> out) {
  inner_->predict(nodes, out);
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeId n = nodes[i];
    Time now = future_.request_time[last_req_[n]];
    Time truth = future_.next_time(last_access_[n]);
    Time pred = out[i];
    ++scored_;
    if (pred == kNever) ++far_;
    if (truth != kNever) {
      ++finite_truth_;
      if (pred != kNever) {
        // Gaps below zero (a prediction before the access itself) count as zero.
        double pg = std::max<double>(0, double(pred - now)) * 1e-6;
        double tg = std::max<double>(0, double(truth - now)) * 1e-6;
        abs_log_error_ += std::fabs(std::log1p(pg) - std::log1p(tg));
        ++log_error_n_;
      }
    }
    // Pair with a random recent prediction of another request.
    if (!ring_.empty()) {
      rng_ = mix64(rng_ + 0x9e3779b97f4a7c15ULL);
      const Seen& o = ring_[rng_ % ring_.size()];
      if (o.req != last_req_[n] && o.truth != truth) {
        ++pairs_;
        if (o.predicted == pred) {
          pairs_right_ += 0.5;
        } else if ((o.predicted < pred) == (o.truth < truth)) {
          pairs_right_ += 1;
        }
      }
    }
    Seen s{pred, truth, last_req_[n]};
    if (ring_.size() < 4096) {
      ring_.push_back(s);
    } else {
      ring_[ring_next_] = s;
      ring_next_ = (ring_next_ + 1) % ring_.size();
    }
  }
}

PolicyStats AuditedPredictor::stats() const {
  PolicyStats s = inner_->stats();
  s.push_back({"audit_predictions", double(scored_)});
  s.push_back({"audit_far_future_share", scored_ ? double(far_) / scored_ : 0});
  s.push_back({"audit_finite_truth", double(finite_truth_)});
  s.push_back({"audit_mean_abs_log_error", log_error_n_ ? abs_log_error_ / log_error_n_ : 0});
  s.push_back({"audit_log_error_count", double(log_error_n_)});
  s.push_back({"audit_pairs", double(pairs_)});
  s.push_back({"audit_ranking_accuracy", pairs_ ? pairs_right_ / pairs_ : 0});
  return s;
}

}  // namespace kvpolicy
