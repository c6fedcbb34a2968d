// The router's own record of the uncached prefill it sent each worker (Dynamo's active
// sequences / PrefillLoadTracker, docs/routers.md, dynamo): per worker a FIFO of routed
// prefills, each counted in full, except the oldest, whose share falls linearly over its
// modelled time (tokens x the cluster's prefill cost per token) and leaves then; a request that
// completes first leaves at once. Without decay every prefill counts until its request completes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "route_common.h"

namespace kvpolicy {

class PrefillTracker {
 public:
  PrefillTracker(uint32_t workers, double seconds_per_token, bool decay)
      : seconds_per_token_(seconds_per_token), decay_(decay), queues_(workers) {}

  // Request r was routed to w with `tokens` uncached prompt tokens (none: nothing to track).
  void add(WorkerId w, RequestIndex r, uint64_t tokens, Time now) {
    routed_[r] = w;
    if (tokens == 0) return;
    Time duration = kNever;
    if (decay_)
      duration = std::max<Time>(
          1, static_cast<Time>(std::llround(double(tokens) * seconds_per_token_ * 1e6)));
    Queue& q = queues_[w];
    expire(w, now);
    if (q.items.empty()) q.anchor = now;
    q.items.push_back({r, tokens, duration});
    q.full += tokens;
  }

  // Request r completed: its prefill, if still counted, leaves now.
  void complete(RequestIndex r, Time now) {
    auto it = routed_.find(r);
    if (it == routed_.end()) return;
    WorkerId w = it->second;
    routed_.erase(it);
    Queue& q = queues_[w];
    expire(w, now);
    for (size_t i = 0; i < q.items.size(); ++i) {
      if (q.items[i].request != r) continue;
      // Its prefill ended before the model said (Dynamo removes it at the first token).
      q.full -= q.items[i].tokens;
      q.items.erase(q.items.begin() + static_cast<std::ptrdiff_t>(i));
      if (i == 0) q.anchor = now;  // the next oldest starts decaying now
      ++completed_early_;
      break;
    }
  }

  // The prefill tokens w still has to do, as the router counts them.
  uint64_t tokens(WorkerId w, Time now) {
    expire(w, now);
    const Queue& q = queues_[w];
    if (q.items.empty()) return 0;
    const Prefill& front = q.items.front();
    if (front.duration == kNever) return q.full;
    double left = 1.0 - double(now - q.anchor) / double(front.duration);
    auto remaining =
        static_cast<uint64_t>(std::ceil(double(front.tokens) * std::clamp(left, 0.0, 1.0)));
    return q.full - front.tokens + remaining;
  }

  // Requests and prefills still recorded (0 once every routed request has completed).
  double in_flight() const {
    double left = double(routed_.size());
    for (const Queue& q : queues_) left += double(q.items.size());
    return left;
  }
  uint64_t expired() const { return expired_; }
  uint64_t completed_early() const { return completed_early_; }

 private:
  struct Prefill {
    RequestIndex request;
    uint64_t tokens;  // its uncached prompt tokens when routed
    Time duration;    // its modelled prefill time, or kNever without decay
  };
  struct Queue {
    std::deque<Prefill> items;  // oldest first
    uint64_t full = 0;          // sum of tokens
    Time anchor = 0;            // when the oldest began to decay
  };

  // Drops the oldest prefills whose modelled time has run out; each next one starts then.
  void expire(WorkerId w, Time now) {
    Queue& q = queues_[w];
    while (!q.items.empty() && q.items.front().duration != kNever &&
           now - q.anchor >= q.items.front().duration) {
      q.anchor += q.items.front().duration;
      q.full -= q.items.front().tokens;
      q.items.pop_front();
      ++expired_;
    }
  }

  double seconds_per_token_;
  bool decay_;
  std::vector<Queue> queues_;
  std::unordered_map<RequestIndex, WorkerId> routed_;
  uint64_t expired_ = 0, completed_early_ = 0;
};

}  // namespace kvpolicy
