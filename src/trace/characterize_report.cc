// A Characterization written out: one JSON object, a short human summary, and CSV files.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/trace/characterize.h"

namespace kvpolicy {
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
      R"({{"name":{},"requests":{},"block_accesses":{},"reused":{},"hits":{},)"
      R"("reuse_share":{},"reuse_time_s":{},"fit":{{"samples":{},"mean_s":{},"rate_per_s":{},)"
      R"("ks":{}}},"reuse_cdf":{}}})",
      json_string(s.name), s.requests, s.block_accesses, s.reused, s.hits, num(s.reuse_share),
      quantiles_json(s.reuse_time_s), s.fit.samples, num(s.fit.mean_s), num(s.fit.rate_per_s),
      num(s.fit.ks), cdf_json(s.reuse_cdf, true));
}

}  // namespace

std::string to_json(const Characterization& c) {
  std::string s = fmt::format(
      R"({{"trace":{},"block_tokens":{},"kv_bytes_per_token":{},"requests":{},)"
      R"("block_accesses":{},"unique_blocks":{},"prompt_tokens":{},"duration_s":{},)"
      R"("has_sessions":{},"ideal_hit_rate":{},"ideal_token_hit_rate":{},)"
      R"("top10_reuse_share":{},"reused_block_share":{},"users":{},"top10_user_hit_share":{},)"
      R"("cross_user_hit_share":{},"single_turn_requests":{},"multi_turn_requests":{},)"
      R"("single_turn_hits":{},"multi_turn_hits":{},"multi_turn_hit_share":{},"sessions":{},)"
      R"("turns_per_session":{},"lifespan_s":{},"peak_live_blocks":{},"peak_live_gb":{},)"
      R"("mean_live_blocks":{},)",
      json_string(c.trace), c.block_tokens, num(c.kv_bytes_per_token), c.requests, c.block_accesses,
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
    s += fmt::format(R"({}{{"name":{},"request_share":{},"multi_turn_share":{},"hit_share":{}}})",
                     i ? "," : "", json_string(c.types[i].name), num(c.types[i].request_share),
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
