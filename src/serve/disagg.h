// Prefill/decode disaggregation in the cluster (docs/serve.md, "Prefill/decode
// disaggregation"): the pools, their options' checks and the KV link between them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/serve/serve.h"

namespace kvpolicy::serve_detail {

// Whether `o` asks for separate pools; throws ConfigError on a bad combination.
bool check_disaggregation(const ServeOptions& o);

// Workers of the run: P + D with pools, else o.workers.
uint32_t total_workers(const ServeOptions& o);

// The KV link out of each prefill worker: transfers from one worker go one after another at the
// link's bandwidth, each then taking the link's latency; links of different workers are
// independent and the receiving side is not a bottleneck.
class KvLinks {
 public:
  KvLinks(uint32_t prefill_workers, double bytes_per_s, double latency_s)
      : free_at_(prefill_workers, 0.0), bytes_per_s_(bytes_per_s), latency_s_(latency_s) {}
  // Sends `bytes` from prefill worker `w` at `now`; returns when the KV has arrived.
  double send(uint32_t w, double bytes, double now);
  // Layer-wise (docs/serve.md, "Prefill/decode disaggregation"): the prefill's last iteration
  // took `prefill_s` up to `now` over `layers` layers, layer k's KV ready at
  // now - prefill_s + k x prefill_s / layers and sent in layer order. With the link free, the
  // exposed time (arrival - now - latency) is max(T / L, T - prefill_s x (L - 1) / L),
  // T = bytes / bandwidth.
  double send_layerwise(uint32_t w, double bytes, double now, double prefill_s, uint32_t layers);

  uint64_t transfers = 0;
  double bytes = 0;
  double seconds = 0;  // summed send-to-arrival times

 private:
  std::vector<double> free_at_;
  double bytes_per_s_, latency_s_;
};

}  // namespace kvpolicy::serve_detail
