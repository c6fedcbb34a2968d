// The prefill-work model (docs/routers.md, offline_bound): its caches, costs, lower bound,
// per-decision regret and the offline router's plan.
#include "kvpolicy/route/prefill_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_set>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

uint32_t ModelCache::prefix_hit(std::span<const BlockKey> prompt) const {
  uint32_t hit = 0;
  while (hit < prompt.size() && stamp_.count(prompt[hit])) ++hit;
  return hit;
}

void ModelCache::serve(std::span<const BlockKey> sequence) {
  // Deepest block first, so each parent is stamped after its children and outlives them.
  for (size_t k = sequence.size(); k-- > 0;) {
    auto [it, fresh] = stamp_.try_emplace(sequence[k], 0);
    if (!fresh) order_.erase(it->second);
    it->second = ++clock_;
    order_.emplace(it->second, sequence[k]);
  }
  while (capacity_ != 0 && stamp_.size() > capacity_) {
    auto oldest = order_.begin();
    stamp_.erase(oldest->second);
    order_.erase(oldest);
  }
}

bool LoadCap::allows(std::span<const WorkerId> assignment, uint32_t workers) const {
  if (window == 0) return true;
  std::vector<uint32_t> count(workers, 0);
  for (size_t r = 0; r < assignment.size(); ++r) {
    if (r % window == 0) std::fill(count.begin(), count.end(), 0);
    if (++count[assignment[r]] > per_worker) return false;
  }
  return true;
}

std::vector<uint32_t> model_misses(const std::vector<FutureRequest>& requests,
                                   std::span<const WorkerId> assignment, uint32_t workers,
                                   uint64_t capacity_blocks) {
  if (assignment.size() != requests.size())
    throw Error("model_misses: " + std::to_string(assignment.size()) + " workers for " +
                std::to_string(requests.size()) + " requests");
  std::vector<ModelCache> caches(workers, ModelCache(capacity_blocks));
  std::vector<uint32_t> misses(requests.size());
  for (size_t r = 0; r < requests.size(); ++r) {
    const RequestView& v = requests[r].request;
    ModelCache& c = caches.at(assignment[r]);
    misses[r] = static_cast<uint32_t>(v.blocks.size()) - c.prefix_hit(v.blocks);
    c.serve(requests[r].sequence);
  }
  return misses;
}

uint64_t model_cost(const std::vector<FutureRequest>& requests,
                    std::span<const WorkerId> assignment, uint32_t workers,
                    uint64_t capacity_blocks) {
  uint64_t sum = 0;
  for (uint32_t m : model_misses(requests, assignment, workers, capacity_blocks)) sum += m;
  return sum;
}

uint64_t prefill_lower_bound(const std::vector<FutureRequest>& requests, uint32_t workers,
                             const LoadCap& cap) {
  if (cap.window != 0 && uint64_t{cap.per_worker} * workers < cap.window)
    throw ConfigError("prefill_lower_bound: a cap of " + std::to_string(cap.per_worker) +
                      " per worker cannot place a window of " + std::to_string(cap.window));
  struct Block {
    uint32_t touched = 0;    // workers that serve a prompt holding it, at least
    uint32_t in_window = 0;  // prompts holding it in the current window
    uint64_t window = 0;
    uint32_t answers = 0;  // requests whose answer (not prompt) holds it
  };
  std::unordered_map<BlockKey, Block> blocks;
  std::unordered_set<BlockKey> seen;
  for (size_t r = 0; r < requests.size(); ++r) {
    const uint64_t win = cap.window ? r / cap.window : 0;
    seen.clear();
    for (BlockKey b : requests[r].request.blocks) {
      if (!seen.insert(b).second) continue;  // a prompt counts once per block
      Block& k = blocks[b];
      k.touched = std::max(k.touched, 1u);
      if (k.window != win) k.window = win, k.in_window = 0;
      ++k.in_window;
      if (cap.window != 0)
        k.touched = std::max(k.touched, (k.in_window + cap.per_worker - 1) / cap.per_worker);
    }
    size_t p = requests[r].request.blocks.size();
    for (size_t j = p; j < requests[r].sequence.size(); ++j)
      if (seen.insert(requests[r].sequence[j]).second) {
        ++blocks[requests[r].sequence[j]].answers;
      }
  }
  uint64_t bound = 0;
  for (auto& [key, k] : blocks)
    if (k.touched > k.answers) bound += k.touched - k.answers;
  return bound;
}

std::vector<double> model_regret(const std::vector<FutureRequest>& requests,
                                 std::span<const WorkerId> assignment, uint32_t workers,
                                 uint64_t capacity_blocks, std::span<const size_t> decisions,
                                 uint32_t window) {
  const size_t n = requests.size();
  if (assignment.size() != n) throw Error("model_regret: assignment and requests differ in size");
  if (!std::is_sorted(decisions.begin(), decisions.end()))
    throw Error("model_regret: decisions must be sorted");
  std::vector<ModelCache> caches(workers, ModelCache(capacity_blocks));
  std::vector<double> out;
  size_t next = 0;
  // Prefill blocks of the window's requests on worker w, from a copy of its cache, with request
  // i there (`with_i`) or not.
  auto window_cost = [&](size_t i, size_t end, WorkerId w, bool with_i) {
    ModelCache c = caches[w];
    uint64_t cost = 0;
    for (size_t r = i; r < end; ++r) {
      bool here = r == i ? with_i : assignment[r] == w;
      if (!here) continue;
      const RequestView& v = requests[r].request;
      cost += v.blocks.size() - c.prefix_hit(v.blocks);
      c.serve(requests[r].sequence);
    }
    return double(cost);
  };
  for (size_t i = 0; i < n && next < decisions.size(); ++i) {
    while (next < decisions.size() && decisions[next] == i) {
      size_t end = window == 0 ? n : std::min(n, i + window);
      WorkerId chosen = assignment[i];
      // Moving i from `chosen` to w changes only those two workers' costs.
      double chosen_with = window_cost(i, end, chosen, true);
      double chosen_without = window_cost(i, end, chosen, false);
      double best_delta = 0;
      for (WorkerId w = 0; w < workers; ++w) {
        if (w == chosen) continue;
        double delta = (chosen_without + window_cost(i, end, w, true)) -
                       (chosen_with + window_cost(i, end, w, false));
        best_delta = std::min(best_delta, delta);
      }
      out.push_back(best_delta < 0 ? -best_delta : 0.0);  // never -0
      ++next;
    }
    caches[assignment[i]].serve(requests[i].sequence);
  }
  return out;
}

std::vector<size_t> sampled_decisions(size_t n, size_t count) {
  std::vector<size_t> out;
  if (count >= n) {
    for (size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (size_t k = 0; k < count; ++k) out.push_back(k * n / count);
  return out;
}

double gap_closed(double router, double baseline, double bound) {
  if (bound == baseline) return std::numeric_limits<double>::quiet_NaN();
  return (router - baseline) / (bound - baseline) + 0.0;  // + 0.0: the baseline's 0 is not -0
}

std::vector<WorkerId> offline_plan(const std::vector<FutureRequest>& requests,
                                   const OfflinePlanOptions& o) {
  const size_t n = requests.size();
  const uint32_t W = o.workers;
  const double block_s = o.prefill_seconds_per_token * o.block_tokens;
  // Each request's next turn in its session.
  std::vector<size_t> next_turn(n, SIZE_MAX);
  {
    std::unordered_map<SessionId, size_t> later;
    for (size_t r = n; r-- > 0;) {
      SessionId s = requests[r].request.session;
      if (s == kNoSession) continue;
      auto [it, fresh] = later.try_emplace(s, r);
      if (!fresh) next_turn[r] = std::exchange(it->second, r);
    }
  }
  std::vector<ModelCache> caches(W, ModelCache(o.capacity_blocks));
  std::vector<double> backlog(W, 0);  // seconds of prefill work queued, draining in real time
  double last_t = 0;
  // Per worker, the next turns of the sessions it holds: (arrival s, request).
  std::vector<std::set<std::pair<double, size_t>>> pending(W);
  std::vector<int64_t> pending_on(n, -1);
  std::vector<uint32_t> in_window(W, 0);
  std::vector<WorkerId> plan(n, 0);
  for (size_t r = 0; r < n; ++r) {
    const RequestView& v = requests[r].request;
    double t = double(v.time) / kMicrosPerSecond;
    double dt = std::max(0.0, t - last_t);
    last_t = std::max(last_t, t);
    for (double& b : backlog) b = std::max(0.0, b - dt);
    if (pending_on[r] >= 0) pending[pending_on[r]].erase({t, r});
    if (o.cap.window != 0 && r % o.cap.window == 0)
      std::fill(in_window.begin(), in_window.end(), 0);
    WorkerId best = 0;
    double best_score = std::numeric_limits<double>::infinity();
    uint32_t best_miss = UINT32_MAX;
    for (WorkerId w = 0; w < W; ++w) {
      if (o.cap.window != 0 && in_window[w] >= o.cap.per_worker) continue;
      uint32_t miss = static_cast<uint32_t>(v.blocks.size()) - caches[w].prefix_hit(v.blocks);
      // Its prefill would finish after the worker's backlog; each next turn of a session the
      // worker holds that arrives before then (within the horizon) waits behind it that much
      // longer (the lookahead an online router lacks).
      double finish = backlog[w] + miss * block_s;
      double score = finish;
      for (auto it = pending[w].begin();
           it != pending[w].end() && it->first < t + std::min(finish, o.horizon_s); ++it)
        score += t + finish - it->first;
      if (score < best_score || (score == best_score && miss < best_miss)) {
        best = w, best_score = score, best_miss = miss;
      }
    }
    plan[r] = best;
    ++in_window[best];
    backlog[best] += best_miss * block_s;
    caches[best].serve(requests[r].sequence);
    if (next_turn[r] != SIZE_MAX) {
      size_t j = next_turn[r];
      double tj = double(requests[j].request.time) / kMicrosPerSecond;
      pending[best].emplace(tj, j);
      pending_on[j] = best;
    }
  }
  return plan;
}

}  // namespace kvpolicy
