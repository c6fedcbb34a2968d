#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/core/key_map.h"
#include "kvpolicy/core/percentile.h"
#include "kvpolicy/trace/trace_stats.h"

namespace kvpolicy {

Distribution distribution(std::vector<uint64_t> v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (uint64_t x : v) sum += static_cast<double>(x);
  d.mean = sum / static_cast<double>(v.size());
  d.p50 = percentile_nearest_rank(v, 50);
  d.p90 = percentile_nearest_rank(v, 90);
  d.p99 = percentile_nearest_rank(v, 99);
  d.max = v.back();
  return d;
}

std::string Distribution::to_json() const {
  return fmt::format(R"({{"mean":{:.3f},"p50":{},"p90":{},"p99":{},"max":{}}})", mean, p50, p90,
                     p99, max);
}

TraceStats trace_stats(const Trace& t) {
  TraceStats s;
  const size_t n = t.size();
  s.requests = n;
  s.block_tokens = t.block_tokens;
  std::unordered_map<SessionId, uint64_t> per_session;  // ids need not be dense
  for (size_t r = 0; r < n; ++r) {
    ++s.turns[std::clamp<uint32_t>(t.turn[r], 1, 5) - 1];
    s.later_turn_requests += t.turn[r] > 1;
    if (t.session[r] == kNoSession) continue;
    ++s.requests_with_session;
    ++per_session[t.session[r]];
  }
  for (auto& [id, c] : per_session) {
    s.sessions += c > 0;
    s.multi_turn_sessions += c > 1;
  }
  s.block_accesses = t.num_block_accesses();
  s.unique_blocks = count_unique_blocks(t);
  // With an infinite cache every block seen before hits (its prefix was seen too).
  s.infinite_hit_rate =
      s.block_accesses ? double(s.block_accesses - s.unique_blocks) / s.block_accesses : 0;
  std::vector<uint64_t> blocks(n);
  for (size_t r = 0; r < n; ++r) blocks[r] = t.prompt_blocks(r);
  s.prompt_tokens = distribution({t.prompt_tokens.begin(), t.prompt_tokens.end()});
  s.prompt_blocks = distribution(std::move(blocks));
  for (uint32_t o : t.output_tokens) s.output_tokens_mean += o;
  s.output_tokens_mean = n ? s.output_tokens_mean / n : 0;
  s.duration_s = n ? double(t.time.back() - t.time.front()) / kMicrosPerSecond : 0;
  s.request_rate = s.duration_s > 0 ? n / s.duration_s : 0;
  if (n > 0) {
    // Two pointers over the sorted times: the most arrivals in any [t_i, t_i + span / 10).
    const Time window = (t.time.back() - t.time.front()) / 10;
    size_t most = 1;
    for (size_t i = 0, j = 0; i < n; ++i) {
      j = std::max(j, i);
      while (j < n && t.time[j] - t.time[i] < window) ++j;
      most = std::max(most, j - i);
    }
    s.peak_tenth_share = window > 0 ? double(most) / double(n) : 1.0;
  }
  if (n > 2) {
    double sum = 0, sq = 0;
    for (size_t r = 1; r < n; ++r) {
      const double gap = double(t.time[r] - t.time[r - 1]);
      sum += gap, sq += gap * gap;
    }
    const double mean = sum / double(n - 1), var = sq / double(n - 1) - mean * mean;
    s.gap_cv = mean > 0 ? std::sqrt(std::max(0.0, var)) / mean : 0;
  }
  if (!t.category_names.empty()) {
    std::vector<uint64_t> per_cat(t.category_names.size(), 0);
    for (CategoryId c : t.category) ++per_cat[c];
    for (size_t c = 0; c < per_cat.size(); ++c)
      s.categories.push_back({t.category_names[c], per_cat[c]});
  }
  return s;
}

std::string TraceStats::to_json(const std::string& extra_json) const {
  std::string cats;
  for (auto& [name, count] : categories)
    cats += fmt::format("{}{{\"name\":{},\"requests\":{}}}", cats.empty() ? "" : ",",
                        json_string(name), count);
  auto share = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  return fmt::format(R"({{"requests":{},"block_tokens":{},"sessions":{},"multi_turn_sessions":{},)"
                     R"("multi_turn_session_share":{:.6f},"later_turn_request_share":{:.6f},)"
                     R"("turns":[{},{},{},{},{}],"block_accesses":{},"unique_blocks":{},)"
                     R"("infinite_hit_rate":{:.6f},"prompt_tokens":{},"prompt_blocks":{},)"
                     R"("output_tokens_mean":{:.3f},"duration_s":{:.3f},"request_rate":{:.6f},)"
                     R"("peak_tenth_share":{:.6f},"gap_cv":{:.6f},"categories":[{}]{}{}}})",
                     requests, block_tokens, sessions, multi_turn_sessions,
                     share(multi_turn_sessions, sessions), share(later_turn_requests, requests),
                     turns[0], turns[1], turns[2], turns[3], turns[4], block_accesses,
                     unique_blocks, infinite_hit_rate, prompt_tokens.to_json(),
                     prompt_blocks.to_json(), output_tokens_mean, duration_s, request_rate,
                     peak_tenth_share, gap_cv, cats, extra_json.empty() ? "" : ",", extra_json);
}

}  // namespace kvpolicy
