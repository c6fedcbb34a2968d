#include "kvpolicy/sim/robustness.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/strings.h"

namespace kvpolicy {

namespace {

double number(const std::string& s, const std::string& what) {
  std::optional<double> v = read_number(s);
  if (!v) throw ConfigError(what + " '" + s + "' is not a number");
  return *v;
}

const std::string kNoiseSlot = "{p}";

double stat_of(const PolicyStats& s, const char* name) {
  for (auto& [k, v] : s)
    if (k == name) return v;
  return 0;
}

}  // namespace

std::vector<double> parse_noise_levels(const std::string& text) {
  std::vector<double> out;
  size_t c1 = text.find(':');
  if (c1 != std::string::npos) {
    size_t c2 = text.find(':', c1 + 1);
    if (c2 == std::string::npos) throw ConfigError("noise range must be start:stop:step");
    double a = number(text.substr(0, c1), "noise start");
    double b = number(text.substr(c1 + 1, c2 - c1 - 1), "noise stop");
    double step = number(text.substr(c2 + 1), "noise step");
    if (!(step > 0)) throw ConfigError("noise step must be positive");
    // Count before allocating: 0:1:1e-9 would be a billion levels (past 2 GB).
    double levels = std::floor((b - a + 1e-9) / step) + 1;
    if (levels > kMaxNoiseLevels)
      throw ConfigError(fmt::format("noise range '{}' gives {:.0f} levels; at most {} are allowed",
                                    text, levels, kMaxNoiseLevels));
    // Integer steps avoid drift (0.1 * 10 lands on 1.0 exactly after rounding).
    for (int i = 0; a + i * step <= b + 1e-9; ++i)
      out.push_back(std::round((a + i * step) * 1e9) / 1e9);
  } else {
    for (const std::string& item : split_list(text)) out.push_back(number(item, "noise level"));
  }
  if (out.empty()) throw ConfigError("no noise level given");
  if (out.size() > kMaxNoiseLevels)
    throw ConfigError(
        fmt::format("{} noise levels given; at most {} are allowed", out.size(), kMaxNoiseLevels));
  for (double p : out)
    if (p < 0 || p > 1) throw ConfigError(fmt::format("noise level {} is not in [0, 1]", p));
  return out;
}

bool is_learned_policy(const std::string& name) {
  for (const ParamSpec& p : PolicyRegistry::instance().get(name).params)
    if (p.name == "predictor") return true;
  return false;
}

std::vector<RobustnessRow> run_robustness(const Trace& trace, const Oracle& oracle,
                                          size_t capacity_blocks, const RobustnessOptions& opts) {
  if (opts.redraw != "request" && opts.redraw != "access")
    throw ConfigError("noise redraw '" + opts.redraw + "' is neither request nor access");
  std::vector<PolicySpec> specs = parse_policy_list(opts.policies);
  for (auto& s : specs) PolicyRegistry::instance().get(s.name);  // fail before any replay
  std::vector<RobustnessRow> rows;
  std::vector<RobustnessRow> fixed(specs.size());  // noise-independent results, run once
  std::vector<bool> have(specs.size(), false);
  size_t total = opts.noise.size() * specs.size(), done = 0;
  for (double p : opts.noise) {
    for (size_t i = 0; i < specs.size(); ++i) {
      const PolicySpec& s = specs[i];
      // A spec holding "{p}" takes the level there and nothing else (a wrapper's inner policy:
      // guarded:inner=fpb,inner_params=predictor=noisy;p={p}).
      bool templated = s.params.find(kNoiseSlot) != std::string::npos;
      bool learned = templated || is_learned_policy(s.name);
      if (opts.progress) opts.progress(double(done) / total, fmt::format("{} at p={}", s.name, p));
      ++done;
      if (!learned && have[i]) {
        RobustnessRow r = fixed[i];
        r.noise = p;
        rows.push_back(r);
        continue;
      }
      PolicySpec run = s;
      if (templated) {
        std::string level = fmt::format("{}", p);
        for (size_t at; (at = run.params.find(kNoiseSlot)) != std::string::npos;)
          run.params.replace(at, kNoiseSlot.size(), level);
      } else if (learned) {
        std::string extra = fmt::format("predictor=noisy,p={},redraw={}", p, opts.redraw);
        if (!opts.learned_params.empty()) extra += "," + opts.learned_params;
        run.params = run.params.empty() ? extra : run.params + "," + extra;
      }
      ReplayOptions ro;
      ro.seed = opts.seed;
      ro.cost_model = opts.cost_model;
      ReplayResult res = replay(trace, &oracle, run, capacity_blocks, ro);
      RobustnessRow r;
      r.noise = p;
      r.policy = s.label();
      r.spec = run.label();
      r.learned = learned;
      if (learned && !templated) r.redraw = opts.redraw;
      r.capacity_blocks = capacity_blocks;
      r.capacity_gb = res.capacity_gb;
      r.block_accesses = res.block_accesses;
      r.block_hits = res.block_hits;
      r.block_hit_rate = res.block_hit_rate;
      r.predictor_calls = stat_of(res.policy_stats, "predictor_calls");
      r.predictions = stat_of(res.policy_stats, "predictions");
      r.replay_seconds = res.replay_seconds;
      r.stats = res.policy_stats;
      if (!learned) {
        fixed[i] = r;
        have[i] = true;
      }
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

std::string RobustnessRow::to_json() const {
  std::string frac = capacity_fraction < 0 ? "null" : fmt::format("{}", capacity_fraction);
  std::string s = fmt::format(
      R"({{"noise":{},"policy":{},"spec":{},"learned":{},"redraw":{},"capacity_blocks":{},)"
      R"("capacity_fraction":{},"capacity_gb":{:.3f},"block_hit_rate":{:.6f},"block_hits":{},"block_accesses":{},)"
      R"("predictor_calls":{},"predictions":{},"replay_seconds":{:.6f})",
      noise, json_string(policy), json_string(spec), learned,
      redraw.empty() ? "null" : json_string(redraw), capacity_blocks, frac, capacity_gb,
      block_hit_rate, block_hits, block_accesses, predictor_calls, predictions, replay_seconds);
  if (!stats.empty()) {
    s += R"(,"policy_stats":{)";
    for (size_t i = 0; i < stats.size(); ++i)
      s += fmt::format("{}{}:{}", i ? "," : "", json_string(stats[i].first),
                       std::isfinite(stats[i].second) ? fmt::format("{}", stats[i].second)
                                                      : std::string("null"));
    s += "}";
  }
  return s + "}";
}

std::string RobustnessRow::csv_header() {
  return "noise,policy,redraw,capacity_blocks,capacity_fraction,block_hit_rate,block_hits,"
         "block_accesses,predictor_calls,predictions,replay_seconds,capacity_gb";
}

std::string RobustnessRow::to_csv() const {
  // A label such as laru:b=4,halve_every=0 holds commas: quote it.
  std::string name = policy.find(',') == std::string::npos ? policy : "\"" + policy + "\"";
  return fmt::format(
      "{},{},{},{},{},{:.6f},{},{},{},{},{:.6f},{:.3f}", noise, name, redraw, capacity_blocks,
      capacity_fraction < 0 ? std::string() : fmt::format("{}", capacity_fraction), block_hit_rate,
      block_hits, block_accesses, predictor_calls, predictions, replay_seconds, capacity_gb);
}

}  // namespace kvpolicy
