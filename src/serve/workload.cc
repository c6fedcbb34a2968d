#include "workload.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>

#include "kvpolicy/core/error.h"
#include "options.h"

namespace kvpolicy::serve_detail {

Workload make_workload(const Trace& trace, std::span<const Time> arrival_us, bool cache_outputs,
                       bool need_oracle) {
  Workload w;
  Trace& s = w.sequences;
  s.name = trace.name;
  s.block_tokens = trace.block_tokens;
  s.category_names = trace.category_names;
  s.assumptions = trace.assumptions;
  s.continuation = trace.continuation;
  // Retention hints: the requests keep their indices; a range to the end covers the answer.
  s.hints = trace.hints;
  s.hint_offset = trace.hint_offset;
  size_t n = trace.size();
  std::vector<uint32_t> next_turn(n, UINT32_MAX);
  std::unordered_map<SessionId, uint32_t> later;
  for (size_t r = n; r-- > 0;) {
    if (trace.session[r] == kNoSession) continue;
    auto [it, inserted] = later.try_emplace(trace.session[r], static_cast<uint32_t>(r));
    if (!inserted) next_turn[r] = std::exchange(it->second, static_cast<uint32_t>(r));
  }
  w.prompt_blocks.resize(n);
  std::vector<BlockKey> keys;
  const uint32_t B = trace.block_tokens;
  for (size_t r = 0; r < n; ++r) {
    auto prompt = trace.prompt(r);
    uint32_t p = static_cast<uint32_t>(prompt.size());
    w.prompt_blocks[r] = p;
    keys.assign(prompt.begin(), prompt.end());
    if (cache_outputs) {
      // Only full blocks are cached: the answer's last partial block is dropped.
      uint64_t tokens = uint64_t{trace.prompt_tokens[r]} + std::max(1u, trace.output_tokens[r]);
      uint32_t total = std::max<uint32_t>(p, static_cast<uint32_t>(tokens / B));
      std::span<const BlockKey> next;
      if (next_turn[r] != UINT32_MAX) next = trace.prompt(next_turn[r]);
      bool quoted = p > 0 && next.size() > p && next[p - 1] == prompt[p - 1];
      BlockKey parent = p ? prompt[p - 1] : kRootKey;
      for (uint32_t j = p; j < total; ++j) {
        BlockKey key = quoted && j < next.size() ? next[j] : chain_key(parent, mix64(r) ^ j);
        if (!(quoted && j < next.size())) quoted = false;  // once it diverges it stays apart
        keys.push_back(key);
        parent = key;
      }
    }
    s.add_request_keys(arrival_us[r], keys, trace.prompt_tokens[r], trace.output_tokens[r],
                       trace.session[r], trace.turn[r], trace.category[r], trace.user[r]);
  }
  if (need_oracle) {
    w.oracle = compute_oracle(s);
    w.has_oracle = true;
  }
  return w;
}

std::vector<double> arrival_times(const Trace& trace, const ServeOptions& o) {
  size_t n = trace.size();
  std::vector<double> t(n);
  double scale = o.time_scale;
  if (o.rate > 0 && n > 1) {
    double span = double(trace.time[n - 1] - trace.time[0]) / kMicrosPerSecond;
    if (span <= 0)
      throw ConfigError(
          "serve: --rate rescales the trace's arrival times, but all of its "
          "requests arrive at the same time");
    scale = (double(n - 1) / o.rate) / span;  // n - 1 gaps at the mean rate
  }
  for (size_t r = 0; r < n; ++r) t[r] = double(trace.time[r] - trace.time[0]) / 1e6 * scale;
  if (o.arrival_jitter_s > 0) {
    // Replicates: an overloaded cluster's tail is chaotic in its arrivals (docs/serve.md,
    // "Replicates"); each request is delayed by its own seeded share, no earlier than the last.
    for (size_t r = 0; r < n; ++r) {
      const double u = double(mix64(mix64(o.seed) ^ r) >> 11) * 0x1p-53;
      t[r] += u * o.arrival_jitter_s;
      if (r) t[r] = std::max(t[r], t[r - 1]);
    }
  }
  return t;
}

std::vector<FutureRequest> future_requests(const Workload& workload,
                                           const std::vector<Time>& arrival_us) {
  std::vector<FutureRequest> future;
  future.reserve(arrival_us.size());
  for (uint32_t r = 0; r < arrival_us.size(); ++r) {
    RequestView whole = workload.view(r, double(arrival_us[r]) / kMicrosPerSecond, true);
    RequestView prompt = whole;
    prompt.blocks = whole.blocks.first(workload.prompt_blocks[r]);
    future.push_back({prompt, whole.blocks});
  }
  return future;
}

}  // namespace kvpolicy::serve_detail

namespace kvpolicy {

ServeFuture serve_future(const Trace& trace, const ServeOptions& o) {
  serve_detail::check_options(trace, o);
  std::vector<double> arrival = serve_detail::arrival_times(trace, o);
  std::vector<Time> arrival_us(trace.size());
  for (size_t r = 0; r < trace.size(); ++r)
    arrival_us[r] = static_cast<Time>(std::llround(arrival[r] * kMicrosPerSecond));
  auto workload = std::make_shared<serve_detail::Workload>(
      serve_detail::make_workload(trace, arrival_us, o.cache_outputs, false));
  ServeFuture out;
  out.requests = serve_detail::future_requests(*workload, arrival_us);
  // The views point into the workload's sequences, which the result keeps alive.
  out.sequences = std::shared_ptr<const Trace>(workload, &workload->sequences);
  return out;
}

}  // namespace kvpolicy
