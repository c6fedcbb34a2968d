// `kvpolicy route-tune`: a small seeded search over one router's parameters in serve mode, tuned
// on the first part of a trace by arrival time and judged on the rest, and the configuration to
// paste into the real system the router models (docs/serve.md, "Autotuning a router: route-tune").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kvpolicy/app/serve.h"
#include "kvpolicy/route/router.h"

namespace kvpolicy::app {

// One searched parameter: a numeric range (linear or log scale) or a list of values.
struct TuneKnob {
  enum class Scale { kLinear, kLog, kList };
  std::string name;
  Scale scale = Scale::kLinear;
  double lo = 0, hi = 0;            // kLinear, kLog
  bool integer = false;             // an integer parameter: values rounded
  std::vector<std::string> values;  // kList: the values tried, in order
  std::string default_value;
  std::string origin;  // how the range was set: "bounds", "around default", "--space"
  // The value at u in [0, 1] (kList: the value at index floor(u x size)), as the parameter's
  // text.
  std::string at(double u) const;
  std::string describe() const;  // "cache_threshold: 0 .. 1 linear (bounds)"
};

// The space searched for router `info`: each int, double, bool and choice parameter, from its
// ParamSpec (bounds; unbounded: default / 4 .. default x 4 on a log scale), minus capacity
// limits (max_tree_tokens), overridden by `space` ("key=lo:hi[:log|:lin]", "key=a|b|c" or
// "key=V" to fix it; comma-separated). Fixed values go to `fixed`. Throws ConfigError naming
// --space on a bad item.
std::vector<TuneKnob> tune_space(const RouterInfo& info, const std::string& space,
                                 std::map<std::string, std::string>* fixed);

// Requests of `trace` with arrival time before `cut` (first) and from it on (second), times of
// the second rebased to start at 0; `cut` = first arrival + fraction x the trace's time span.
// Both are named after the trace and their share of it.
struct TraceSplit {
  Trace tune, held_out;
  double cut_s = 0;  // the cut, seconds after the first arrival
};
TraceSplit split_by_time(const Trace& trace, double fraction);

struct TuneSpec {
  ServeSpec serve;  // one router (name[:fixed params]), policy, worker count and capacity
  std::string space;
  std::string objective = "ttft-p50";  // ttft-p50, ttft-p99, ttft-mean (lowest) or hit (highest)
  std::string search = "grid";         // grid, random (seeded random + local refinement) or cmaes
  size_t budget = 24;                  // router settings run on the tuning part, default included
  double split = 0.5;
  // Each setting is run on this many sample paths, replicate k with seed + k and arrivals
  // jittered (serve.base.arrival_jitter_s, or 1 % of the mean gap between arrivals when it is 0),
  // and judged by the mean of their figures (docs/serve.md, "Replicates"). 1 = one path, as given.
  size_t replicates = 1;
  // --json: the final report (written at the end, atomically); its runs stream meanwhile to
  // json_path + ".runs" (removed once the report is written), which --resume reads.
  std::string json_path;
  bool resume = false;
  // Throws ConfigError naming the flag; returns the router's info.
  const RouterInfo& validate() const;
};

// A setting's figures on one part of the trace.
struct TuneFigures {
  double ttft_p50_ms = 0, ttft_p99_ms = 0, ttft_mean_ms = 0, hit_rate = 0;
  uint64_t requests = 0;
};

struct TuneRun {
  std::string params;  // the setting, key=value,... (fixed values included)
  TuneFigures tune;
  double objective = 0;  // the objective on the tuning part, lower is better (hit: negated)
};

struct TuneResult {
  std::string router, objective, search;
  uint64_t seed = 1;
  size_t budget = 0;
  size_t replicates = 1;
  double arrival_jitter_s = 0;  // the replicates' jitter (0 with one replicate, unless given)
  double split = 0.5, cut_s = 0;
  uint64_t tune_requests = 0, held_requests = 0;
  std::vector<TuneKnob> knobs;
  std::vector<TuneRun> runs;  // in the order run; runs[0] is the default
  std::string default_params, best_params;
  TuneFigures default_tune, default_held, best_tune, best_held;
  bool beats_default_held = false;  // the tuned setting's objective on the held-out part is lower
  // Held out, tuned − default objective per replicate (paired by seed): their mean and standard
  // error (0 with one replicate).
  double held_difference = 0, held_difference_se = 0;
  std::string export_text;      // export_config of the best setting
  std::string to_json() const;  // deterministic: no wall times
};

// Runs the search; `what` names the progress lines.
TuneResult route_tune(const Trace& trace, const TuneSpec& spec);

// The lower-is-better value of `objective` for a result's figures; throws ConfigError naming
// --objective on an unknown one.
double objective_value(const std::string& objective, const TuneFigures& f);

// The configuration to paste for router `router` with `params` (key=value,..., every parameter,
// defaults filled): the real system's flags or YAML for each parameter the export table maps
// (docs/serve.md, "Autotuning a router: route-tune"), then a `kvpolicy` line with `tuned`.
std::string export_config(const std::string& router, const std::string& params,
                          const std::string& tuned);

}  // namespace kvpolicy::app
