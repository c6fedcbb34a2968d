#include "disagg.h"

#include <algorithm>
#include <cmath>

#include "kvpolicy/core/error.h"

namespace kvpolicy::serve_detail {

bool check_disaggregation(const ServeOptions& o) {
  if (o.allocation != "chunked" && o.allocation != "whole")
    throw ConfigError("serve: --allocation must be chunked or whole, not '" + o.allocation + "'");
  if (o.prefill_workers == 0 && o.decode_workers == 0) return false;
  if (o.prefill_workers == 0 || o.decode_workers == 0)
    throw ConfigError(
        "serve: prefill/decode disaggregation needs both --prefill-workers and "
        "--decode-workers (got " +
        std::to_string(o.prefill_workers) + " and " + std::to_string(o.decode_workers) +
        "); leave both out (0) for colocated workers");
  uint64_t total = uint64_t{o.prefill_workers} + o.decode_workers;
  if (total > 4096)
    throw ConfigError("serve: --prefill-workers + --decode-workers must be at most 4096");
  if (o.workers != 1 && o.workers != total)
    throw ConfigError("serve: --workers (" + std::to_string(o.workers) +
                      ") must equal --prefill-workers + --decode-workers (" +
                      std::to_string(total) + ") or be left out");
  if (!(o.kv_link_bytes_per_s > 0) || !std::isfinite(o.kv_link_bytes_per_s))
    throw ConfigError("serve: --kv-link-bandwidth must be a positive number of bytes/s");
  if (!(o.kv_link_latency_s >= 0) || !std::isfinite(o.kv_link_latency_s))
    throw ConfigError("serve: --kv-link-latency must be >= 0");
  if (o.kv_transfer != "after-prefill" && o.kv_transfer != "layerwise")
    throw ConfigError("serve: --kv-transfer must be after-prefill or layerwise, not '" +
                      o.kv_transfer + "'");
  return true;
}

uint32_t total_workers(const ServeOptions& o) {
  return o.prefill_workers && o.decode_workers ? o.prefill_workers + o.decode_workers : o.workers;
}

double KvLinks::send(uint32_t w, double bytes, double now) {
  double start = std::max(now, free_at_[w]);
  free_at_[w] = start + bytes / bytes_per_s_;
  double arrival = free_at_[w] + latency_s_;
  ++transfers;
  this->bytes += bytes;
  seconds += arrival - now;
  return arrival;
}

double KvLinks::send_layerwise(uint32_t w, double bytes, double now, double prefill_s,
                               uint32_t layers) {
  // Layer k (1..L) is ready at t0 + k P / L and takes T / L on the link; the last layer leaves
  // at max over k of (max(free, ready_k) + (L - k + 1) T / L), linear in k: k = 1 or k = L.
  const double t = bytes / bytes_per_s_, l = layers, t0 = now - prefill_s;
  double finish = std::max({free_at_[w] + t, t0 + prefill_s / l + t, now + t / l});
  free_at_[w] = finish;
  double arrival = finish + latency_s_;
  ++transfers;
  this->bytes += bytes;
  seconds += arrival - now;
  return arrival;
}

}  // namespace kvpolicy::serve_detail
