// Trace characterization's computation: one pass over the trace for reuses, hits and block
// lifetimes, then the quantiles, exponential fits, CDFs and capacity curve built from them.
#include "kvpolicy/trace/characterize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/key_map.h"

namespace kvpolicy {
namespace {

constexpr double kSecond = kMicrosPerSecond;

// Nearest-rank quantile of a sorted sample: the smallest value >= a share q of the sample.
template <typename T>
double quantile(const std::vector<T>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t k = static_cast<size_t>(std::ceil(q * double(sorted.size())));
  return double(sorted[std::clamp<size_t>(k, 1, sorted.size()) - 1]);
}

Quantiles quantiles_s(const std::vector<Time>& sorted) {
  Quantiles q;
  q.p50 = quantile(sorted, 0.5) / kSecond;
  q.p90 = quantile(sorted, 0.9) / kSecond;
  q.p99 = quantile(sorted, 0.99) / kSecond;
  q.max = sorted.empty() ? 0 : double(sorted.back()) / kSecond;
  return q;
}

// Maximum-likelihood exponential fit and its KS distance, on a sorted sample in microseconds.
// The KS supremum over a step CDF is reached at a sample value, on either side of its step.
ExponentialFit fit_exponential(const std::vector<Time>& sorted) {
  ExponentialFit f;
  f.samples = sorted.size();
  if (sorted.empty()) return f;
  long double sum = 0;
  for (Time t : sorted) sum += t;
  f.mean_s = double(sum / sorted.size()) / kSecond;
  if (f.mean_s <= 0) {  // every reuse at the same timestamp: a step at 0, rate unbounded
    f.rate_per_s = 0;
    f.ks = 1;
    return f;
  }
  f.rate_per_s = 1.0 / f.mean_s;
  const double n = double(sorted.size());
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    double model = -std::expm1(-f.rate_per_s * double(sorted[i]) / kSecond);
    f.ks = std::max({f.ks, std::abs(model - double(i) / n), std::abs(model - double(j) / n)});
    i = j;
  }
  return f;
}

// CDF at `points` log-spaced times from the smallest positive sample (at least 1 ms) to the
// largest, plus 0 (reuses at the same timestamp are common in coarse traces).
std::vector<CdfPoint> cdf_points(const std::vector<Time>& sorted, size_t points, double rate) {
  std::vector<CdfPoint> out;
  if (sorted.empty() || points < 2) return out;
  auto at = [&](double x_s) {
    Time x = static_cast<Time>(std::floor(x_s * kSecond));
    double share = double(std::upper_bound(sorted.begin(), sorted.end(), x) - sorted.begin()) /
                   double(sorted.size());
    double model = rate > 0 ? -std::expm1(-rate * x_s) : 0;
    out.push_back({x_s, share, model});
  };
  at(0);
  double hi = double(sorted.back()) / kSecond;
  auto first_positive = std::upper_bound(sorted.begin(), sorted.end(), Time{0});
  double lo = first_positive == sorted.end() ? hi : double(*first_positive) / kSecond;
  lo = std::max(lo, 1e-3);
  if (hi <= lo) {
    if (hi > 0) at(hi);
    return out;
  }
  for (size_t i = 0; i < points; ++i) at(lo * std::pow(hi / lo, double(i) / double(points - 1)));
  return out;
}

std::string type_name(const Trace& trace, CategoryId type) {
  if (type < trace.category_names.size() && !trace.category_names[type].empty())
    return trace.category_names[type];
  return trace.category_names.empty() && type == 0 ? "any" : fmt::format("type{}", type);
}

uint32_t bucket_of(uint32_t turn, uint32_t buckets) {
  return std::min(std::max(turn, 1u), buckets) - 1;
}

struct KeyInfo {
  uint32_t first_req, last_req;
  Time first_time, last_time;
  uint32_t count;
  uint32_t last_user;
  uint32_t last_cat;
};

}  // namespace

std::string category_name(const Trace& trace, CategoryId type, uint32_t turn,
                          uint32_t turn_buckets) {
  uint32_t b = bucket_of(turn, turn_buckets) + 1;
  const char* plus = b == turn_buckets && turn_buckets > 1 ? "+" : "";
  std::string name = type_name(trace, type);
  // A trace without request types has turn buckets only: "turn 2", not "any-2".
  if (name == "any") return fmt::format("turn {}{}", b, plus);
  return fmt::format("{}-{}{}", name, b, plus);
}

Characterization characterize(const Trace& trace, const CharacterizeOptions& o) {
  if (o.turn_buckets == 0) throw ConfigError("characterize: turn buckets must be >= 1");
  if (!(o.kv_bytes_per_token > 0))
    throw ConfigError("characterize: KV bytes per token must be > 0");
  Characterization c;
  c.trace = trace.name;
  c.block_tokens = trace.block_tokens;
  c.kv_bytes_per_token = o.kv_bytes_per_token;
  c.requests = trace.size();
  c.block_accesses = trace.num_block_accesses();
  if (trace.size()) c.duration_s = double(trace.time.back() - trace.time.front()) / kSecond;
  const uint32_t B = trace.block_tokens;
  const uint32_t buckets = o.turn_buckets;

  CategoryId max_type = 0;
  for (CategoryId t : trace.category) max_type = std::max(max_type, t);
  const size_t cats = (size_t(max_type) + 1) * buckets;
  std::vector<std::vector<Time>> reuse(cats);
  std::vector<CategoryStats> per_cat(cats);
  std::vector<Time> all_reuse;

  KeyMap index(trace.num_block_accesses() / 2 + 16);
  std::vector<KeyInfo> keys;
  std::unordered_map<uint32_t, uint64_t> user_hits;
  std::unordered_map<SessionId, uint32_t> session_turns;
  uint64_t hits = 0, token_hits = 0, cross_user = 0;

  for (size_t r = 0; r < trace.size(); ++r) {
    const Time now = trace.time[r];
    const uint32_t turn = trace.turn[r];
    const uint32_t cat = trace.category[r] * buckets + bucket_of(turn, buckets);
    const uint32_t user = trace.user[r];
    auto prompt = trace.prompt(r);
    uint64_t req_hits = 0;
    for (BlockKey key : prompt) {
      bool inserted = false;
      uint32_t& slot = index.get_or_insert(key, static_cast<uint32_t>(keys.size()), &inserted);
      if (inserted) {
        keys.push_back({uint32_t(r), uint32_t(r), now, now, 1, user, cat});
        continue;
      }
      KeyInfo& k = keys[slot];
      ++req_hits;
      Time t = now - k.last_time;
      reuse[k.last_cat].push_back(t);
      all_reuse.push_back(t);
      ++per_cat[k.last_cat].reused;
      if (k.last_user != user) ++cross_user;
      k.last_req = static_cast<uint32_t>(r);
      k.last_time = now;
      k.last_user = user;
      k.last_cat = cat;
      ++k.count;
    }
    hits += req_hits;
    token_hits += std::min<uint64_t>(req_hits * B, trace.prompt_tokens[r]);
    c.prompt_tokens += trace.prompt_tokens[r];
    CategoryStats& pc = per_cat[cat];
    ++pc.requests;
    pc.block_accesses += prompt.size();
    pc.hits += req_hits;
    user_hits[user] += req_hits;
    if (turn <= 1) {
      ++c.single_turn_requests;
      c.single_turn_hits += req_hits;
    } else {
      ++c.multi_turn_requests;
      c.multi_turn_hits += req_hits;
    }
    if (trace.session[r] != kNoSession) {
      uint32_t& turns = session_turns[trace.session[r]];
      turns = std::max(turns, turn);
    }
  }
  c.unique_blocks = keys.size();
  c.ideal_hit_rate = c.block_accesses ? double(hits) / double(c.block_accesses) : 0;
  c.ideal_token_hit_rate = c.prompt_tokens ? double(token_hits) / double(c.prompt_tokens) : 0;
  c.multi_turn_hit_share =
      hits ? double(c.multi_turn_hits) / double(c.single_turn_hits + c.multi_turn_hits) : 0;
  c.cross_user_hit_share = hits ? double(cross_user) / double(hits) : 0;

  // Sessions.
  c.has_sessions = !session_turns.empty();
  c.sessions = session_turns.size();
  {
    std::vector<uint32_t> turns;
    turns.reserve(session_turns.size());
    for (auto& [s, n] : session_turns) turns.push_back(n);
    std::sort(turns.begin(), turns.end());
    c.turns_per_session = {quantile(turns, 0.5), quantile(turns, 0.9), quantile(turns, 0.99),
                           turns.empty() ? 0.0 : double(turns.back())};
  }

  // Users: skew of hits over users.
  c.users = user_hits.size();
  if (c.users > 1 && hits) {
    std::vector<uint64_t> h;
    for (auto& [u, n] : user_hits) h.push_back(n);
    std::sort(h.begin(), h.end(), std::greater<>());
    size_t top = (h.size() + 9) / 10;
    uint64_t sum = 0;
    for (size_t i = 0; i < top; ++i) sum += h[i];
    c.top10_user_hit_share = double(sum) / double(hits);
  }

  // Skew over blocks: reuses = accesses - 1, most reused first.
  {
    std::vector<uint32_t> reuses(keys.size());
    uint64_t total = 0, reused_blocks = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      reuses[i] = keys[i].count - 1;
      total += reuses[i];
      reused_blocks += reuses[i] > 0;
    }
    std::sort(reuses.begin(), reuses.end(), std::greater<>());
    c.reused_block_share = keys.empty() ? 0 : double(reused_blocks) / double(keys.size());
    std::vector<uint64_t> prefix(reuses.size() + 1, 0);
    for (size_t i = 0; i < reuses.size(); ++i) prefix[i + 1] = prefix[i] + reuses[i];
    auto share_of_top = [&](double f) {
      size_t n = static_cast<size_t>(std::ceil(f * double(reuses.size()) - 1e-9));
      return total ? double(prefix[std::min(n, reuses.size())]) / double(total) : 0.0;
    };
    c.top10_reuse_share = share_of_top(0.1);
    size_t pts = std::max<size_t>(o.curve_points, 2);
    for (size_t i = 0; i <= pts; ++i) {
      double f = double(i) / double(pts);
      c.skew_curve.push_back({f, share_of_top(f)});
    }
  }

  // Reuse times per category and overall.
  auto finish = [&](CategoryStats& s, std::vector<Time>& sample) {
    std::sort(sample.begin(), sample.end());
    s.reuse_share = s.block_accesses ? double(s.reused) / double(s.block_accesses) : 0;
    s.reuse_time_s = quantiles_s(sample);
    s.fit = fit_exponential(sample);
    s.reuse_cdf = cdf_points(sample, o.curve_points, s.fit.rate_per_s);
  };
  c.all.name = "all";
  for (size_t k = 0; k < cats; ++k) {
    CategoryStats& s = per_cat[k];
    c.all.requests += s.requests;
    c.all.block_accesses += s.block_accesses;
    c.all.reused += s.reused;
    c.all.hits += s.hits;
    if (s.block_accesses == 0) continue;
    s.name = category_name(trace, static_cast<CategoryId>(k / buckets), k % buckets + 1, buckets);
    finish(s, reuse[k]);
    c.categories.push_back(std::move(s));
  }
  finish(c.all, all_reuse);

  // Per request type.
  for (CategoryId t = 0; t <= max_type; ++t) {
    uint64_t req = 0, multi = 0, h = 0;
    for (uint32_t b = 0; b < buckets; ++b) {
      const CategoryStats& s = per_cat[t * buckets + b];
      req += s.requests;
      h += s.hits;
      if (b > 0) multi += s.requests;
    }
    if (req == 0) continue;
    // Turn bucket 1 is turn 1 only when buckets > 1; with one bucket nothing is multi-turn.
    c.types.push_back({type_name(trace, t), double(req) / double(c.requests),
                       double(multi) / double(req), hits ? double(h) / double(hits) : 0});
  }

  // Lifespans of reused blocks.
  {
    std::vector<Time> life;
    for (const KeyInfo& k : keys)
      if (k.count > 1) life.push_back(k.last_time - k.first_time);
    std::sort(life.begin(), life.end());
    c.lifespan_s = quantiles_s(life);
    c.lifespan_cdf = cdf_points(life, o.curve_points, 0);
  }

  // Capacity an ideal policy needs over time.
  if (trace.size()) {
    std::vector<int64_t> delta(trace.size() + 1, 0);
    for (const KeyInfo& k : keys)
      if (k.last_req > k.first_req) {
        ++delta[k.first_req];
        --delta[k.last_req];
      }
    const double gb_per_block = double(B) * o.kv_bytes_per_token / 1e9;
    const size_t buckets_t = std::max<size_t>(o.capacity_points, 1);
    const double t0 = double(trace.time.front()) / kSecond;
    const double span = std::max(c.duration_s, 1e-9);
    std::vector<int64_t> bucket_max(buckets_t, -1);
    int64_t live = 0;
    long double live_sum = 0;
    for (size_t r = 0; r < trace.size(); ++r) {
      live += delta[r];
      live_sum += live;
      c.peak_live_blocks = std::max<uint64_t>(c.peak_live_blocks, uint64_t(live));
      double rel = (double(trace.time[r]) / kSecond - t0) / span;
      size_t b = std::min(buckets_t - 1, static_cast<size_t>(rel * double(buckets_t)));
      bucket_max[b] = std::max(bucket_max[b], live);
    }
    c.mean_live_blocks = double(live_sum / trace.size());
    c.peak_live_gb = double(c.peak_live_blocks) * gb_per_block;
    for (size_t b = 0; b < buckets_t; ++b) {
      if (bucket_max[b] < 0) continue;  // no request in this bucket
      double t = c.duration_s * double(b + 1) / double(buckets_t);
      c.capacity.push_back({t, uint64_t(bucket_max[b]), double(bucket_max[b]) * gb_per_block});
    }
  }
  return c;
}

}  // namespace kvpolicy
