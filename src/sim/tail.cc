#include "kvpolicy/sim/tail.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"

namespace kvpolicy {

double tail_excess_latency(std::span<const double> ttft_ms, double xi_ms) {
  double sum = 0;
  for (double t : ttft_ms) sum += std::max(0.0, t - xi_ms);
  return sum;
}

void set_tail_metrics(ReplayResult& r, const TailMetrics& t) {
  r.ttft_p50_ms = t.p50_ms;
  r.ttft_p90_ms = t.p90_ms;
  r.ttft_p95_ms = t.p95_ms;
  r.ttft_p99_ms = t.p99_ms;
  r.ttft_mean_ms = t.mean_ms;
  r.tel_ms = t.tel_ms;
  r.xi_ms = t.xi_ms;
  r.slo_ms = t.slo_ms;
  r.slo_violation_rate = t.slo_violation_rate;
}

TailMetrics tail_metrics(std::span<const double> ttft_ms, double xi_ms, double slo_ms) {
  TailMetrics m;
  m.requests = ttft_ms.size();
  m.xi_ms = xi_ms;
  m.slo_ms = slo_ms;
  if (ttft_ms.empty()) return m;
  std::vector<double> sorted(ttft_ms.begin(), ttft_ms.end());
  std::sort(sorted.begin(), sorted.end());
  m.p50_ms = percentile_nearest_rank(sorted, 50);
  m.p90_ms = percentile_nearest_rank(sorted, 90);
  m.p95_ms = percentile_nearest_rank(sorted, 95);
  m.p99_ms = percentile_nearest_rank(sorted, 99);
  double sum = 0;
  for (double t : sorted) sum += t;
  m.mean_ms = sum / double(sorted.size());
  m.tel_ms = tail_excess_latency(sorted, xi_ms);
  size_t within = std::upper_bound(sorted.begin(), sorted.end(), slo_ms) - sorted.begin();
  m.slo_violation_rate = double(sorted.size() - within) / double(sorted.size());
  return m;
}

double relative_change(double value, double base) {
  if (base == 0) return value == 0 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  return (value - base) / base;
}

namespace {

bool takes_xi(const std::string& policy) {
  for (auto& p : PolicyRegistry::instance().get(policy).params)
    if (p.name == "xi_ms") return true;
  return false;
}

std::string join_params(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + "," + b;
}

std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{:.6f}", v) : std::string("null");
}

}  // namespace

TailStudy run_tail_study(const Trace& trace, const TailStudyOptions& o) {
  if (o.capacities.empty()) throw ConfigError("tail: no capacity given");
  if (o.xi_ms.empty()) throw ConfigError("tail: no xi given");
  for (double x : o.xi_ms)
    if (!(x >= 0)) throw ConfigError("tail: xi must be >= 0");
  for (auto& name : o.figure_policies) PolicyRegistry::instance().get(name);
  TraceFacts facts = trace_facts(trace);
  Oracle oracle = compute_oracle(trace);

  TailStudy study;
  study.trace = trace.name;
  CostModel at_trace = o.cost.with_block_tokens(std::max<uint32_t>(trace.block_tokens, 1));
  study.cost_model = at_trace.label();
  study.slo_ms = o.slo_ms;
  study.figure_xi_ms = o.figure_xi_ms;
  study.figure_policies = o.figure_policies;

  size_t total = o.capacities.size() * (2 + o.xi_ms.size() + o.figure_policies.size()), done = 0;
  auto run = [&](const CapacitySpec& cap, size_t blocks, const std::string& policy,
                 const std::string& params, double xi, std::vector<double>* ttft) {
    ReplayOptions opts;
    opts.seed = o.seed;
    opts.cost_model = &o.cost;
    opts.xi_ms = xi;
    opts.slo_ms = o.slo_ms;
    opts.ttft_ms = ttft;
    if (o.progress) opts.progress = [&](double f) { o.progress((done + f) / total); };
    ReplayResult r = replay(trace, &oracle, PolicySpec{policy, params}, blocks, opts);
    r.capacity_fraction = cap.fraction();
    r.infinite_hit_rate = facts.infinite_hit_rate;
    ++done;
    study.runs.push_back(std::move(r));
    return study.runs.size() - 1;
  };

  std::vector<double> lru_ttft, thr_ttft, tlru_ttft;
  for (const CapacitySpec& cap : o.capacities) {
    size_t blocks =
        cap.blocks(facts.unique_blocks, at_trace.block_tokens(), at_trace.kv_bytes_per_block());
    size_t lru = run(cap, blocks, "lru", "", o.figure_xi_ms, &lru_ttft);
    size_t thr = run(cap, blocks, "threshold_lru", o.threshold_params, o.figure_xi_ms, &thr_ttft);
    size_t tlru_at_figure = SIZE_MAX;
    for (double xi : o.xi_ms) {
      size_t t = run(cap, blocks, "tlru", join_params(fmt::format("xi_ms={:g}", xi), o.tlru_params),
                     xi, &tlru_ttft);
      if (xi == o.figure_xi_ms) tlru_at_figure = t;
      const ReplayResult &a = study.runs[t], &l = study.runs[lru], &h = study.runs[thr];
      TailChange c;
      c.capacity_blocks = blocks;
      c.capacity_label = cap.label();
      c.xi_ms = xi;
      c.p90_vs_lru = relative_change(a.ttft_p90_ms, l.ttft_p90_ms);
      c.p95_vs_lru = relative_change(a.ttft_p95_ms, l.ttft_p95_ms);
      c.p99_vs_lru = relative_change(a.ttft_p99_ms, l.ttft_p99_ms);
      c.slo_vs_lru = relative_change(a.slo_violation_rate, l.slo_violation_rate);
      c.p90_vs_threshold = relative_change(a.ttft_p90_ms, h.ttft_p90_ms);
      c.p95_vs_threshold = relative_change(a.ttft_p95_ms, h.ttft_p95_ms);
      c.p99_vs_threshold = relative_change(a.ttft_p99_ms, h.ttft_p99_ms);
      c.slo_vs_threshold = relative_change(a.slo_violation_rate, h.slo_violation_rate);
      // TEL at this xi for all three (the baselines' runs were scored at the figure's xi).
      double tel = tail_excess_latency(tlru_ttft, xi);
      c.tel_vs_lru = relative_change(tel, tail_excess_latency(lru_ttft, xi));
      c.tel_vs_threshold = relative_change(tel, tail_excess_latency(thr_ttft, xi));
      study.changes.push_back(c);
    }
    std::vector<size_t> row;
    for (const std::string& name : o.figure_policies) {
      if (name == "lru") {
        row.push_back(lru);
        ++done;
      } else if (name == "threshold_lru") {
        row.push_back(thr);
        ++done;
      } else if (name == "tlru" && tlru_at_figure != SIZE_MAX) {
        row.push_back(tlru_at_figure);
        ++done;
      } else {
        std::string params = takes_xi(name) ? join_params(fmt::format("xi_ms={:g}", o.figure_xi_ms),
                                                          name == "tlru" ? o.tlru_params : "")
                                            : "";
        row.push_back(run(cap, blocks, name, params, o.figure_xi_ms, nullptr));
      }
    }
    study.figure.push_back(std::move(row));
  }
  return study;
}

std::string TailStudy::to_json() const {
  std::string out = fmt::format(R"({{"trace":{},"cost_model":{},"slo_ms":{:g},)",
                                json_string(trace), json_string(cost_model), slo_ms);
  out += fmt::format(R"("figure_xi_ms":{:g},"changes":[)", figure_xi_ms);
  for (size_t i = 0; i < changes.size(); ++i) {
    const TailChange& c = changes[i];
    out += fmt::format(R"({}{{"capacity":{},"capacity_blocks":{},"xi_ms":{:g},"p90_vs_lru":{},)"
                       R"("p95_vs_lru":{},"p99_vs_lru":{},"slo_vs_lru":{},"tel_vs_lru":{},)"
                       R"("p90_vs_threshold":{},"p95_vs_threshold":{},"p99_vs_threshold":{},)"
                       R"("slo_vs_threshold":{},"tel_vs_threshold":{}}})",
                       i ? "," : "", json_string(c.capacity_label), c.capacity_blocks, c.xi_ms,
                       json_number(c.p90_vs_lru), json_number(c.p95_vs_lru),
                       json_number(c.p99_vs_lru), json_number(c.slo_vs_lru),
                       json_number(c.tel_vs_lru), json_number(c.p90_vs_threshold),
                       json_number(c.p95_vs_threshold), json_number(c.p99_vs_threshold),
                       json_number(c.slo_vs_threshold), json_number(c.tel_vs_threshold));
  }
  out += R"(],"figure":[)";
  for (size_t i = 0; i < figure.size(); ++i) {
    out += fmt::format(R"({}{{"capacity_blocks":{},"policies":[)", i ? "," : "",
                       figure[i].empty() ? 0 : runs[figure[i][0]].capacity_blocks);
    for (size_t j = 0; j < figure[i].size(); ++j) {
      const ReplayResult& r = runs[figure[i][j]];
      out += fmt::format(
          R"({}{{"policy":{},"params":{},"p50_ms":{:.3f},"p90_ms":{:.3f},"p95_ms":{:.3f},)"
          R"("p99_ms":{:.3f},"mean_ms":{:.3f},"tel_ms":{:.3f},"slo_violation_rate":{:.6f}}})",
          j ? "," : "", json_string(r.policy), json_string(r.params), r.ttft_p50_ms, r.ttft_p90_ms,
          r.ttft_p95_ms, r.ttft_p99_ms, r.ttft_mean_ms, r.tel_ms, r.slo_violation_rate);
    }
    out += "]}";
  }
  out += R"(],"runs":[)";
  for (size_t i = 0; i < runs.size(); ++i) out += (i ? "," : "") + runs[i].to_json();
  out += "]}";
  return out;
}

}  // namespace kvpolicy
