#include "kvpolicy/sim/ttft_tally.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kvpolicy {

TailMetrics TtftTally::metrics(const CostModel& cost, uint32_t block_tokens, double xi_ms,
                               double slo_ms) const {
  TailMetrics m;
  m.requests = requests_;
  m.xi_ms = xi_ms;
  m.slo_ms = slo_ms;
  if (requests_ == 0) return m;
  std::vector<std::pair<double, uint64_t>> values;
  values.reserve(counts_.size());
  for (auto& [k, n] : counts_)
    values.emplace_back(
        replay_ttft_ms(cost, k.prompt_tokens, k.hit_blocks, k.dram_blocks, block_tokens), n);
  std::sort(values.begin(), values.end());
  const double total = double(requests_);
  // Nearest rank as percentile_nearest_rank computes it, over the run-length sorted values.
  auto at_rank = [&](double p) {
    double rank = std::ceil(p / 100.0 * total - 1e-9);
    uint64_t want = static_cast<uint64_t>(std::clamp(rank, 1.0, total)), seen = 0;
    for (auto& [v, n] : values)
      if ((seen += n) >= want) return v;
    return values.back().first;
  };
  m.p50_ms = at_rank(50);
  m.p90_ms = at_rank(90);
  m.p95_ms = at_rank(95);
  m.p99_ms = at_rank(99);
  // Added one by one in ascending order, as tail_metrics adds the sorted array, so the sums are
  // bit-identical.
  double sum = 0, tel = 0;
  uint64_t over = 0;
  for (auto& [v, n] : values) {
    double excess = std::max(0.0, v - xi_ms);
    for (uint64_t i = 0; i < n; ++i) {
      sum += v;
      tel += excess;
    }
    if (v > slo_ms) over += n;
  }
  m.mean_ms = sum / total;
  m.tel_ms = tel;
  m.slo_violation_rate = double(over) / total;
  return m;
}

}  // namespace kvpolicy
