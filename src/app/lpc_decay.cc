// LPC's decay rate chosen on a validation trace (include/kvpolicy/app/lpc_decay.h).
#include "kvpolicy/app/lpc_decay.h"

#include <fmt/format.h>

#include "kvpolicy/app/inputs.h"
#include "kvpolicy/app/replay.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/predict/continuation_source.h"

namespace kvpolicy::app {

LpcDecayChoice choose_lpc_decay(const Trace& trace, const LpcDecayOptions& o,
                                const CostModel& cost) {
  if (o.scales.empty()) throw ConfigError("lpc-decay: no decay rate to try (--scales)");
  for (double s : o.scales)
    if (!(s > 0)) throw ConfigError(fmt::format("lpc-decay: decay rate {} is not positive", s));
  if (trace.continuation.empty() && o.lpc_params.find("predictor=") == std::string::npos)
    throw ConfigError(fmt::format("lpc-decay: trace '{}': {}", trace.name, kNoContinuationScores));
  std::vector<PolicySpec> specs{{"lru", ""}};
  for (double s : o.scales)
    specs.push_back(
        {"lpc", fmt::format("scale_s={}{}{}", s, o.lpc_params.empty() ? "" : ",", o.lpc_params)});
  ReplayPlan plan = plan_replay_grid(trace, "lru", o.capacities, cost);
  for (const PolicySpec& s : specs) needs_future(s);  // a bad parameter fails before the work
  GridOptions grid;
  grid.jobs = o.jobs;
  grid.cost_model = &cost;
  std::vector<ReplayResult> runs = run_grid(trace, specs, plan.caps, o.seed, grid, {}, &plan.facts);
  // run_grid orders capacities outer, policies inner.
  const size_t np = specs.size(), nc = runs.size() / np;
  if (nc * np != runs.size() || nc == 0) throw Error("lpc-decay: unexpected number of replays");
  LpcDecayChoice c;
  c.scales = o.scales;
  for (size_t k = 0; k < nc; ++k) {
    const ReplayResult& r = runs[k * np];
    c.capacities.push_back(r.capacity_fraction >= 0
                               ? fmt::format("{:.3g}%", r.capacity_fraction * 100)
                               : fmt::format("{} blocks", r.capacity_blocks));
    c.lru_hit_rates.push_back(r.block_hit_rate);
  }
  c.hit_rates.assign(o.scales.size(), std::vector<double>(nc));
  c.mean_hit_rate.assign(o.scales.size(), 0);
  for (size_t i = 0; i < o.scales.size(); ++i) {
    for (size_t k = 0; k < nc; ++k) c.hit_rates[i][k] = runs[k * np + 1 + i].block_hit_rate;
    for (double h : c.hit_rates[i]) c.mean_hit_rate[i] += h / double(nc);
  }
  size_t best = 0;
  for (size_t i = 1; i < o.scales.size(); ++i)
    if (c.mean_hit_rate[i] > c.mean_hit_rate[best]) best = i;
  c.chosen = o.scales[best];
  return c;
}

std::string LpcDecayChoice::json() const {
  auto array = [](const std::vector<double>& v) {
    std::string s = "[";
    for (double x : v) s += (s.size() > 1 ? "," : "") + fmt::format("{:.6f}", x);
    return s + "]";
  };
  JsonObject o;
  o.add("chosen_scale_s", chosen, 6);
  std::string caps = "[";
  for (const auto& c : capacities) caps += (caps.size() > 1 ? "," : "") + json_string(c);
  o.raw("capacities", caps + "]");
  o.raw("lru_hit_rates", array(lru_hit_rates));
  std::string rows = "[";
  for (size_t i = 0; i < scales.size(); ++i) {
    JsonObject r;
    r.add("scale_s", scales[i]).add("mean_hit_rate", mean_hit_rate[i]);
    r.raw("hit_rates", array(hit_rates[i]));
    rows += (rows.size() > 1 ? "," : "") + r.str();
  }
  o.raw("scales", rows + "]");
  return o.str();
}

}  // namespace kvpolicy::app
