// Per-decision routing regret in serve mode (docs/routers.md, "Per-decision regret"): what the
// best worker at one decision would have cost, re-simulating the next window with every later
// decision held where the router put it. The prefill-work model's counterpart is model_regret
// (route/prefill_model.h); this one prices queueing and batching too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kvpolicy/serve/serve.h"

namespace kvpolicy {

// The TTFTs of requests [first, end) that completed in `t`, summed, in ms.
double window_ttft_ms(const RequestTimeline& t, size_t first, size_t end);

// `run` is the timeline of serve(trace, options) (an open loop without P/D): its workers are the
// router's assignment. At each sampled decision i (sorted, < trace.size()), serve is re-run with
// that assignment but request i on worker w, for every w, and requests from i + window on left
// out (window = 0: none); cost(w) = window_ttft_ms over [i, i + window). Regret = cost of the
// router's worker - min over w of cost(w) (>= 0), ms. W runs of up to i + window requests per
// decision. Throws Error when a re-run does not reproduce `run` before request i + window
// arrives (serve is deterministic, so that would be a bug).
std::vector<double> serve_regret(const Trace& trace, const ServeOptions& options,
                                 const RequestTimeline& run, std::span<const size_t> decisions,
                                 uint32_t window);

}  // namespace kvpolicy
