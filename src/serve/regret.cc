// Per-decision routing regret in serve mode (docs/routers.md, "Per-decision regret").
#include "kvpolicy/serve/regret.h"

#include <algorithm>
#include <limits>
#include <string>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

// Serve is deterministic, so a re-run differs from the router's run only after its first
// change: request i's arrival (the override) or request `end`'s (the cut). The chosen worker's
// re-run has no override, so every request whose first token came by `end`'s arrival must have
// it at the same time, on the same worker.
void check_reproduces(const RequestTimeline& run, const RequestTimeline& again, size_t end) {
  const size_t n = run.arrival.size();
  const double cut = end < n ? run.arrival[end] : std::numeric_limits<double>::infinity();
  for (size_t r = 0; r < end; ++r) {
    if (run.completions[r] == 0 || run.first_token[r] > cut) continue;
    if (again.first_token[r] != run.first_token[r] || again.worker[r] != run.worker[r])
      throw Error("serve regret: the run cut at request " + std::to_string(end) +
                  " does not reproduce request " + std::to_string(r) + "'s first token (" +
                  std::to_string(again.first_token[r]) + " s against " +
                  std::to_string(run.first_token[r]) + " s; a bug)");
  }
}

}  // namespace

double window_ttft_ms(const RequestTimeline& t, size_t first, size_t end) {
  double sum = 0;
  for (size_t r = first; r < end; ++r)
    if (t.completions[r] > 0) sum += (t.first_token[r] - t.arrival[r]) * 1e3;
  return sum;
}

std::vector<double> serve_regret(const Trace& trace, const ServeOptions& options,
                                 const RequestTimeline& run, std::span<const size_t> decisions,
                                 uint32_t window) {
  if (options.clients > 0)
    throw ConfigError(
        "serve regret: needs an open loop (a closed loop's arrivals follow completions, so a "
        "decision has no fixed window after it)");
  if (options.prefill_workers || options.decode_workers)
    throw ConfigError("serve regret: routes one pool, not P/D");
  const size_t n = trace.size();
  if (run.worker.size() != n || run.first_token.size() != n || run.arrival.size() != n ||
      run.completions.size() != n)
    throw Error("serve_regret: the run's timeline has " + std::to_string(run.worker.size()) +
                " requests, the trace " + std::to_string(n));
  if (!std::is_sorted(decisions.begin(), decisions.end()))
    throw Error("serve_regret: decisions must be sorted");
  if (!decisions.empty() && decisions.back() >= n)
    throw Error("serve_regret: decision " + std::to_string(decisions.back()) + " of " +
                std::to_string(n) + " requests");
  ServeOptions o = options;
  o.progress = {};
  o.worker_trace = nullptr;
  o.timeline = nullptr;
  std::vector<WorkerId> assignment;
  o.assignment = &assignment;
  RequestTimeline again;
  std::vector<double> out;
  out.reserve(decisions.size());
  for (size_t i : decisions) {
    const size_t end = window == 0 ? n : std::min(n, i + window);
    assignment.assign(run.worker.begin(), run.worker.end());
    std::fill(assignment.begin() + static_cast<std::ptrdiff_t>(end), assignment.end(),
              kSkipRequest);
    const WorkerId chosen = run.worker[i];
    double chosen_cost = 0, best = std::numeric_limits<double>::infinity();
    for (WorkerId w = 0; w < o.workers; ++w) {
      assignment[i] = w;
      serve(trace, o, &again);
      double cost = window_ttft_ms(again, i, end);
      if (w == chosen) {
        check_reproduces(run, again, end);
        chosen_cost = cost;
      }
      best = std::min(best, cost);
    }
    out.push_back(std::max(0.0, chosen_cost - best) + 0.0);  // + 0.0: never -0
  }
  return out;
}

}  // namespace kvpolicy
