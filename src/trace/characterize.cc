#include "kvpolicy/trace/characterize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <unordered_map>
#include <unordered_set>

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
  return fmt::format("{}-{}{}", type_name(trace, type), b,
                     b == turn_buckets && turn_buckets > 1 ? "+" : "");
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

// ---- output ----------------------------------------------------------------------------------

namespace {

std::string num(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : "null"; }

std::string quantiles_json(const Quantiles& q) {
  return fmt::format(R"({{"p50":{},"p90":{},"p99":{},"max":{}}})", num(q.p50), num(q.p90),
                     num(q.p99), num(q.max));
}

std::string cdf_json(const std::vector<CdfPoint>& pts, bool fitted) {
  std::string s = "[";
  for (size_t i = 0; i < pts.size(); ++i) {
    s += i ? "," : "";
    s += fitted ? fmt::format("[{},{},{}]", num(pts[i].x), num(pts[i].cdf), num(pts[i].fitted))
                : fmt::format("[{},{}]", num(pts[i].x), num(pts[i].cdf));
  }
  return s + "]";
}

std::string category_json(const CategoryStats& s) {
  return fmt::format(
      R"({{"name":{:?},"requests":{},"block_accesses":{},"reused":{},"hits":{},)"
      R"("reuse_share":{},"reuse_time_s":{},"fit":{{"samples":{},"mean_s":{},"rate_per_s":{},)"
      R"("ks":{}}},"reuse_cdf":{}}})",
      s.name, s.requests, s.block_accesses, s.reused, s.hits, num(s.reuse_share),
      quantiles_json(s.reuse_time_s), s.fit.samples, num(s.fit.mean_s), num(s.fit.rate_per_s),
      num(s.fit.ks), cdf_json(s.reuse_cdf, true));
}

}  // namespace

std::string to_json(const Characterization& c) {
  std::string s = fmt::format(
      R"({{"trace":{:?},"block_tokens":{},"kv_bytes_per_token":{},"requests":{},)"
      R"("block_accesses":{},"unique_blocks":{},"prompt_tokens":{},"duration_s":{},)"
      R"("has_sessions":{},"ideal_hit_rate":{},"ideal_token_hit_rate":{},)"
      R"("top10_reuse_share":{},"reused_block_share":{},"users":{},"top10_user_hit_share":{},)"
      R"("cross_user_hit_share":{},"single_turn_requests":{},"multi_turn_requests":{},)"
      R"("single_turn_hits":{},"multi_turn_hits":{},"multi_turn_hit_share":{},"sessions":{},)"
      R"("turns_per_session":{},"lifespan_s":{},"peak_live_blocks":{},"peak_live_gb":{},)"
      R"("mean_live_blocks":{},)",
      c.trace, c.block_tokens, num(c.kv_bytes_per_token), c.requests, c.block_accesses,
      c.unique_blocks, c.prompt_tokens, num(c.duration_s), c.has_sessions, num(c.ideal_hit_rate),
      num(c.ideal_token_hit_rate), num(c.top10_reuse_share), num(c.reused_block_share), c.users,
      num(c.top10_user_hit_share), num(c.cross_user_hit_share), c.single_turn_requests,
      c.multi_turn_requests, c.single_turn_hits, c.multi_turn_hits, num(c.multi_turn_hit_share),
      c.sessions, quantiles_json(c.turns_per_session), quantiles_json(c.lifespan_s),
      c.peak_live_blocks, num(c.peak_live_gb), num(c.mean_live_blocks));
  s += R"("skew_curve":[)";
  for (size_t i = 0; i < c.skew_curve.size(); ++i)
    s += fmt::format("{}[{},{}]", i ? "," : "", num(c.skew_curve[i].first),
                     num(c.skew_curve[i].second));
  s += R"(],"types":[)";
  for (size_t i = 0; i < c.types.size(); ++i)
    s += fmt::format(R"({}{{"name":{:?},"request_share":{},"multi_turn_share":{},"hit_share":{}}})",
                     i ? "," : "", c.types[i].name, num(c.types[i].request_share),
                     num(c.types[i].multi_turn_share), num(c.types[i].hit_share));
  s += R"(],"all":)" + category_json(c.all) + R"(,"categories":[)";
  for (size_t i = 0; i < c.categories.size(); ++i)
    s += (i ? "," : "") + category_json(c.categories[i]);
  s += R"(],"lifespan_cdf":)" + cdf_json(c.lifespan_cdf, false) + R"(,"capacity":[)";
  for (size_t i = 0; i < c.capacity.size(); ++i)
    s += fmt::format("{}[{},{},{}]", i ? "," : "", num(c.capacity[i].time_s),
                     c.capacity[i].live_blocks, num(c.capacity[i].live_gb));
  return s + "]}";
}

std::string summary(const Characterization& c) {
  std::string s = fmt::format(
      "trace {}: {} requests, {} block accesses, {} unique blocks of {} tokens, {:.0f} s\n",
      c.trace, c.requests, c.block_accesses, c.unique_blocks, c.block_tokens, c.duration_s);
  s += fmt::format("ideal (infinite-cache) hit rate: {:.2f}% of blocks, {:.2f}% of tokens\n",
                   c.ideal_hit_rate * 100, c.ideal_token_hit_rate * 100);
  s += fmt::format(
      "skew: top 10% of blocks give {:.1f}% of reuses; {:.1f}% of blocks are ever reused\n",
      c.top10_reuse_share * 100, c.reused_block_share * 100);
  if (c.users > 1)
    s += fmt::format(
        "users: {}; top 10% of users get {:.1f}% of hits; {:.1f}% of hits cross "
        "users\n",
        c.users, c.top10_user_hit_share * 100, c.cross_user_hit_share * 100);
  uint64_t turn_hits = c.single_turn_hits + c.multi_turn_hits;
  s += fmt::format(
      "turns: {} single-turn requests ({:.1f}% of hits), {} multi-turn ({:.1f}% of hits)",
      c.single_turn_requests, turn_hits ? 100.0 * c.single_turn_hits / turn_hits : 0.0,
      c.multi_turn_requests, turn_hits ? 100.0 * c.multi_turn_hits / turn_hits : 0.0);
  if (c.has_sessions)
    s += fmt::format("; {} sessions, turns p50 {:g} p90 {:g} max {:g}", c.sessions,
                     c.turns_per_session.p50, c.turns_per_session.p90, c.turns_per_session.max);
  s += "\n";
  s += fmt::format("{:<14} {:>9} {:>11} {:>8} {:>9} {:>9} {:>9} {:>9} {:>6}\n", "category",
                   "requests", "accesses", "reused%", "p50 s", "p90 s", "p99 s", "mean s", "KS");
  auto row = [&](const CategoryStats& k) {
    s += fmt::format("{:<14} {:>9} {:>11} {:>8.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>6.3f}\n",
                     k.name, k.requests, k.block_accesses, k.reuse_share * 100, k.reuse_time_s.p50,
                     k.reuse_time_s.p90, k.reuse_time_s.p99, k.fit.mean_s, k.fit.ks);
  };
  for (auto& k : c.categories) row(k);
  row(c.all);
  s += fmt::format("lifespan of reused blocks: p50 {:.1f} s, p90 {:.1f} s, max {:.1f} s\n",
                   c.lifespan_s.p50, c.lifespan_s.p90, c.lifespan_s.max);
  s += fmt::format(
      "ideal capacity: peak {} blocks = {:.2f} GB, mean {:.0f} blocks ({:.0f} KV bytes/token)\n",
      c.peak_live_blocks, c.peak_live_gb, c.mean_live_blocks, c.kv_bytes_per_token);
  return s;
}

void write_csv(const Characterization& c, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto open = [&](const std::string& name) {
    std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream out(path);
    if (!out) throw ConfigError("cannot write '" + path + "'");
    return out;
  };
  {
    auto out = open("summary.csv");
    out << "metric,value\n";
    auto kv = [&](const char* k, double v) { out << k << ',' << num(v) << '\n'; };
    kv("requests", double(c.requests));
    kv("block_accesses", double(c.block_accesses));
    kv("unique_blocks", double(c.unique_blocks));
    kv("duration_s", c.duration_s);
    kv("ideal_hit_rate", c.ideal_hit_rate);
    kv("ideal_token_hit_rate", c.ideal_token_hit_rate);
    kv("top10_reuse_share", c.top10_reuse_share);
    kv("reused_block_share", c.reused_block_share);
    kv("top10_user_hit_share", c.top10_user_hit_share);
    kv("cross_user_hit_share", c.cross_user_hit_share);
    kv("single_turn_hits", double(c.single_turn_hits));
    kv("multi_turn_hits", double(c.multi_turn_hits));
    kv("multi_turn_hit_share", c.multi_turn_hit_share);
    kv("lifespan_p50_s", c.lifespan_s.p50);
    kv("lifespan_p90_s", c.lifespan_s.p90);
    kv("peak_live_blocks", double(c.peak_live_blocks));
    kv("peak_live_gb", c.peak_live_gb);
    kv("mean_live_blocks", c.mean_live_blocks);
  }
  {
    auto out = open("categories.csv");
    out << "category,requests,block_accesses,reused,hits,reuse_share,p50_s,p90_s,p99_s,"
           "mean_s,rate_per_s,ks\n";
    auto row = [&](const CategoryStats& k) {
      out << k.name << ',' << k.requests << ',' << k.block_accesses << ',' << k.reused << ','
          << k.hits << ',' << num(k.reuse_share) << ',' << num(k.reuse_time_s.p50) << ','
          << num(k.reuse_time_s.p90) << ',' << num(k.reuse_time_s.p99) << ',' << num(k.fit.mean_s)
          << ',' << num(k.fit.rate_per_s) << ',' << num(k.fit.ks) << '\n';
    };
    for (auto& k : c.categories) row(k);
    row(c.all);
  }
  {
    auto out = open("reuse_cdf.csv");
    out << "category,seconds,cdf,exponential_cdf\n";
    auto rows = [&](const CategoryStats& k) {
      for (auto& p : k.reuse_cdf)
        out << k.name << ',' << num(p.x) << ',' << num(p.cdf) << ',' << num(p.fitted) << '\n';
    };
    for (auto& k : c.categories) rows(k);
    rows(c.all);
  }
  {
    auto out = open("lifespan_cdf.csv");
    out << "seconds,cdf\n";
    for (auto& p : c.lifespan_cdf) out << num(p.x) << ',' << num(p.cdf) << '\n';
  }
  {
    auto out = open("skew.csv");
    out << "block_share,reuse_share\n";
    for (auto& [f, s] : c.skew_curve) out << num(f) << ',' << num(s) << '\n';
  }
  {
    auto out = open("capacity.csv");
    out << "seconds,live_blocks,live_gb\n";
    for (auto& p : c.capacity)
      out << num(p.time_s) << ',' << p.live_blocks << ',' << num(p.live_gb) << '\n';
  }
  {
    auto out = open("types.csv");
    out << "type,request_share,multi_turn_share,hit_share\n";
    for (auto& t : c.types)
      out << t.name << ',' << num(t.request_share) << ',' << num(t.multi_turn_share) << ','
          << num(t.hit_share) << '\n';
  }
}

}  // namespace kvpolicy
