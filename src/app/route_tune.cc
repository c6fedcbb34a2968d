#include "kvpolicy/app/route_tune.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/core/types.h"
#include "route_tune_search.h"

namespace kvpolicy::app {
namespace {

TuneFigures figures(const ServeResult& r) {
  return {r.ttft_ms.p50, r.ttft_ms.p99, r.ttft_ms.mean, r.block_hit_rate, r.requests};
}

// A setting's figures over its replicates: the mean of each.
TuneFigures mean_figures(const std::vector<TuneFigures>& paths) {
  TuneFigures m;
  for (const TuneFigures& f : paths) {
    m.ttft_p50_ms += f.ttft_p50_ms / double(paths.size());
    m.ttft_p99_ms += f.ttft_p99_ms / double(paths.size());
    m.ttft_mean_ms += f.ttft_mean_ms / double(paths.size());
    m.hit_rate += f.hit_rate / double(paths.size());
  }
  m.requests = paths.front().requests;
  return m;
}

// The replicates' jitter: as given, else 1 % of the mean gap between arrivals as serve replays
// them (docs/serve.md, "Replicates": enough to draw another path, too little to spread a trace's
// simultaneous arrivals apart). A closed loop takes none: its replicates differ by seed only.
double replicate_jitter(const Trace& trace, const ServeOptions& o, size_t replicates) {
  if (replicates < 2 || o.arrival_jitter_s > 0 || o.clients > 0) return o.arrival_jitter_s;
  if (o.rate > 0) return 0.01 / o.rate;
  double span_s = double(trace.time.back() - trace.time.front()) / double(kMicrosPerSecond);
  return 0.01 * span_s * o.time_scale / double(trace.size() - 1);
}

void append_request(const Trace& src, size_t r, Time offset, Trace& dst) {
  dst.add_request_keys(src.time[r] - offset, src.prompt(r), src.prompt_tokens[r],
                       src.output_tokens[r], src.session[r], src.turn[r], src.category[r],
                       src.user[r]);
  if (src.has_continuation()) dst.continuation.push_back(src.continuation[r]);
  if (src.has_priority()) dst.priority.push_back(src.priority[r]);
}

std::string figures_json(const TuneFigures& f) {
  return JsonObject()
      .add("ttft_p50_ms", f.ttft_p50_ms, 3)
      .add("ttft_p99_ms", f.ttft_p99_ms, 3)
      .add("ttft_mean_ms", f.ttft_mean_ms, 3)
      .add("hit_rate", f.hit_rate, 6)
      .add("requests", f.requests)
      .str();
}

}  // namespace

TraceSplit split_by_time(const Trace& trace, double fraction) {
  if (!(fraction > 0 && fraction < 1))
    throw ConfigError(fmt::format("--split must be in (0, 1), not {:g}", fraction));
  if (trace.size() < 2) throw ConfigError("route-tune: the trace has fewer than 2 requests");
  Time first = trace.time.front(), last = trace.time.back();
  double cut = double(first) + fraction * double(last - first);
  TraceSplit out;
  for (Trace* t : {&out.tune, &out.held_out}) {
    t->block_tokens = trace.block_tokens;
    t->category_names = trace.category_names;
    t->assumptions = trace.assumptions;
  }
  int pct = static_cast<int>(std::lround(fraction * 100));
  out.tune.name = fmt::format("{} [first {} % by time]", trace.name, pct);
  out.held_out.name = fmt::format("{} [last {} % by time]", trace.name, 100 - pct);
  size_t r = 0;
  std::vector<std::vector<RetentionHint>> hints_tune, hints_held;
  for (; r < trace.size() && double(trace.time[r]) < cut; ++r) {
    append_request(trace, r, first, out.tune);
    if (trace.has_hints())
      hints_tune.emplace_back(trace.hints_of(r).begin(), trace.hints_of(r).end());
  }
  if (r == 0 || r == trace.size())
    throw ConfigError(fmt::format("--split {:g} leaves no request in the {} part", fraction,
                                  r == 0 ? "tuning" : "held-out"));
  Time held_start = trace.time[r];
  for (size_t i = r; i < trace.size(); ++i) {
    append_request(trace, i, held_start, out.held_out);
    if (trace.has_hints())
      hints_held.emplace_back(trace.hints_of(i).begin(), trace.hints_of(i).end());
  }
  if (trace.has_hints()) out.tune.set_hints(hints_tune), out.held_out.set_hints(hints_held);
  out.cut_s = (cut - double(first)) / double(kMicrosPerSecond);
  return out;
}

double objective_value(const std::string& objective, const TuneFigures& f) {
  if (objective == "ttft-p50") return f.ttft_p50_ms;
  if (objective == "ttft-p99") return f.ttft_p99_ms;
  if (objective == "ttft-mean") return f.ttft_mean_ms;
  if (objective == "hit") return -f.hit_rate;
  throw ConfigError("--objective: '" + objective +
                    "' is not one of ttft-p50, ttft-p99, ttft-mean, hit");
}

const RouterInfo& TuneSpec::validate() const {
  auto routers = parse_router_list(serve.routers);
  if (routers.size() != 1)
    throw ConfigError("--router: route-tune tunes one router, not " + serve.routers);
  const RouterInfo& info = RouterRegistry::instance().get(routers[0].name);
  Params::parse(routers[0].params, info.params, "--router " + info.name);
  objective_value(objective, {});
  if (search != "grid" && search != "random" && search != "cmaes")
    throw ConfigError("--search: '" + search +
                      "' is not grid, random (seeded random + local refinement) or cmaes");
  if (budget < 1 || budget > 10000)
    throw ConfigError(fmt::format("--budget must be in [1, 10000], not {}", budget));
  if (!(split > 0 && split < 1))
    throw ConfigError(fmt::format("--split must be in (0, 1), not {:g}", split));
  if (replicates < 1 || replicates > 1000)
    throw ConfigError(fmt::format("--replicates must be in [1, 1000], not {}", replicates));
  if (resume && json_path.empty()) throw ConfigError("--resume needs --json FILE");
  std::map<std::string, std::string> fixed;
  tune_space(info, space, &fixed);
  auto counts = serve.validate();
  if (counts.size() != 1) throw ConfigError("--workers: route-tune takes one worker count");
  if (split_list(serve.policies).size() != 1)
    throw ConfigError("--policy: route-tune takes one eviction policy");
  if (split_list(serve.capacities).size() != 1)
    throw ConfigError("--capacity: route-tune takes one capacity");
  if (!json_path.empty()) check_writable(json_path);
  return info;
}

TuneResult route_tune(const Trace& trace, const TuneSpec& spec) {
  const RouterInfo& info = spec.validate();
  RouterSpec given = parse_router_list(spec.serve.routers)[0];
  std::map<std::string, std::string> fixed;
  std::vector<TuneKnob> knobs = tune_space(info, spec.space, &fixed);
  for (const std::string& item : split_top_level(given.params)) {  // --router R:k=v fixes k
    if (item.empty()) continue;
    std::string key = item.substr(0, item.find('='));
    fixed[key] = item.substr(item.find('=') + 1);
    std::erase_if(knobs, [&](const TuneKnob& k) { return k.name == key; });
  }
  if (knobs.empty())
    throw ConfigError("route-tune: router " + info.name +
                      " has no parameter left to tune (--space key=lo:hi adds one)");

  TraceSplit split = split_by_time(trace, spec.split);
  CostModel cost = spec.serve.cost_model();
  ServeSpec one = spec.serve;
  one.routers = info.name;
  // Sized on the whole trace, so a share of unique blocks ("10%") is the same memory in both
  // parts.
  ServeOptions base = one.configs(trace, cost).at(0);
  base.cost_model = &cost;
  base.arrival_jitter_s = replicate_jitter(trace, base, spec.replicates);

  // A setting as the router's parameter text: every knob and fixed value, in declaration order.
  auto setting = [&](const std::map<std::string, std::string>& values) {
    std::vector<std::string> items;
    for (const ParamSpec& p : info.params) {
      if (auto it = values.find(p.name); it != values.end())
        items.push_back(p.name + "=" + it->second);
      else if (auto f = fixed.find(p.name); f != fixed.end())
        items.push_back(p.name + "=" + f->second);
    }
    return fmt::format("{}", fmt::join(items, ","));
  };
  auto from_u = [&](const std::vector<double>& u) {
    std::map<std::string, std::string> values;
    for (size_t i = 0; i < knobs.size(); ++i) values[knobs[i].name] = knobs[i].at(u[i]);
    return setting(values);
  };

  std::string runs_path = spec.json_path.empty() ? "" : spec.json_path + ".runs";
  bool resume_now = spec.resume;
  // Each setting's figures on `half`, one per replicate (replicate k: seed + k).
  auto evaluate = [&](const Trace& half, const std::vector<std::string>& settings,
                      const std::string& what) {
    std::vector<ServeOptions> configs;
    for (const std::string& s : settings)
      for (size_t k = 0; k < spec.replicates; ++k) {
        ServeOptions o = base;
        o.router.params = s;
        o.seed = base.seed + k;
        configs.push_back(o);
      }
    SweepSettings sweep;
    sweep.jobs = spec.serve.jobs;
    sweep.json_path = runs_path;
    sweep.resume = resume_now;
    sweep.what = what;
    auto results = run_sweep(serve_cells(half, configs, runs_path), sweep);
    resume_now = !runs_path.empty();  // later batches append to the same file
    std::vector<std::vector<TuneFigures>> paths(settings.size());
    for (size_t i = 0; i < results.size(); ++i)
      paths[i / spec.replicates].push_back(figures(results[i]));
    return paths;
  };

  TuneResult out;
  out.router = info.name;
  out.objective = spec.objective;
  out.search = spec.search;
  out.seed = spec.serve.base.seed;
  out.budget = spec.budget;
  out.replicates = spec.replicates;
  out.arrival_jitter_s = base.arrival_jitter_s;
  out.split = spec.split;
  out.cut_s = split.cut_s;
  out.tune_requests = split.tune.size();
  out.held_requests = split.held_out.size();
  out.knobs = knobs;

  std::map<std::string, std::string> defaults;
  for (const TuneKnob& k : knobs) defaults[k.name] = k.default_value;
  out.default_params = setting(defaults);

  std::set<std::string> seen;
  std::vector<std::vector<double>> coords;  // the u of each run (refinement starts from them)
  auto run_batch = [&](const std::vector<std::string>& settings,
                       const std::vector<std::vector<double>>& u) {
    auto paths = evaluate(split.tune, settings, "route-tune (tuning part)");
    for (size_t i = 0; i < paths.size(); ++i) {
      TuneRun run{settings[i], mean_figures(paths[i]), 0};
      run.objective = objective_value(spec.objective, run.tune);
      out.runs.push_back(run);
      coords.push_back(u[i]);
    }
  };
  auto best_index = [&] {
    size_t best = 0;
    for (size_t i = 1; i < out.runs.size(); ++i)
      if (out.runs[i].objective < out.runs[best].objective) best = i;
    return best;
  };

  // The default's coordinates, for refinement around it.
  std::vector<double> default_u;
  for (const TuneKnob& k : knobs) {
    double u = 0.5;
    if (k.scale == TuneKnob::Scale::kList) {
      auto it = std::find(k.values.begin(), k.values.end(), k.default_value);
      if (it != k.values.end()) u = (double(it - k.values.begin()) + 0.5) / double(k.values.size());
    } else {
      double d = std::stod(k.default_value);
      u = k.scale == TuneKnob::Scale::kLog && d > 0
              ? (std::log(d) - std::log(k.lo)) / (std::log(k.hi) - std::log(k.lo))
              : (d - k.lo) / (k.hi - k.lo);
    }
    default_u.push_back(std::clamp(u, 0.0, 1.0));
  }

  std::vector<std::string> batch{out.default_params};
  std::vector<std::vector<double>> batch_u{default_u};
  seen.insert(out.default_params);
  if (spec.search == "grid") {
    size_t lists = 1, numeric = 0;
    for (const TuneKnob& k : knobs)
      k.scale == TuneKnob::Scale::kList ? lists *= k.values.size() : ++numeric;
    // Levels per numeric knob: the most with levels^numeric x lists <= budget, at least 2.
    size_t levels = 2;
    if (numeric > 0)
      while (true) {
        double next = std::pow(double(levels + 1), double(numeric)) * double(lists);
        if (next > double(spec.budget)) break;
        ++levels;
      }
    std::vector<size_t> radix;
    for (const TuneKnob& k : knobs)
      radix.push_back(k.scale == TuneKnob::Scale::kList ? k.values.size() : levels);
    std::vector<size_t> digit(knobs.size(), 0);
    while (true) {
      std::vector<double> u;
      for (size_t i = 0; i < knobs.size(); ++i)
        u.push_back(knobs[i].scale == TuneKnob::Scale::kList
                        ? (double(digit[i]) + 0.5) / double(radix[i])
                        : double(digit[i]) / double(radix[i] - 1));
      std::string s = from_u(u);
      if (seen.insert(s).second) batch.push_back(s), batch_u.push_back(u);
      size_t i = 0;
      while (i < digit.size() && ++digit[i] == radix[i]) digit[i++] = 0;
      if (i == digit.size()) break;
    }
    // Two levels per numeric knob is the coarsest grid; running more than asked would overrun
    // the budget the user set, so refuse before anything runs.
    if (batch.size() - 1 > spec.budget)
      throw ConfigError(fmt::format(
          "route-tune: the coarsest grid over {}'s {} knobs has {} settings, above --budget {}: "
          "raise --budget, fix knobs with --space key=value, or use --search random",
          spec.serve.routers, knobs.size(), batch.size() - 1, spec.budget));
    run_batch(batch, batch_u);
  } else if (spec.search == "cmaes") {
    // CMA-ES from the default, step 0.3 of each knob's range, generations until the budget is
    // spent or ten in a row bring no new setting (docs/serve.md, "Autotuning a router").
    run_batch(batch, batch_u);
    std::map<std::string, double> objective_of;
    objective_of[out.runs[0].params] = out.runs[0].objective;
    CmaEs es(default_u, 0.3, spec.serve.base.seed * 0x2545f4914f6cdd1dULL + 0xc3a5);
    size_t tried = 0;
    for (int stale = 0; tried < spec.budget && stale < 10;) {
      std::vector<std::vector<double>> points = es.ask();
      std::vector<std::string> names;
      batch.clear(), batch_u.clear();
      for (const std::vector<double>& u : points) {
        names.push_back(from_u(u));
        if (tried + batch.size() < spec.budget && seen.insert(names.back()).second)
          batch.push_back(names.back()), batch_u.push_back(u);
      }
      stale = batch.empty() ? stale + 1 : 0;
      if (!batch.empty()) {
        size_t first = out.runs.size();
        run_batch(batch, batch_u);
        tried += batch.size();
        for (size_t i = first; i < out.runs.size(); ++i)
          objective_of[out.runs[i].params] = out.runs[i].objective;
      }
      std::vector<double> f;  // settings run before are not run again
      for (const std::string& name : names) {
        auto it = objective_of.find(name);
        if (it == objective_of.end()) break;  // the budget ended inside this generation
        f.push_back(it->second);
      }
      if (f.size() == names.size()) es.tell(f);
    }
  } else {
    // Seeded random search over two thirds of the budget, then rounds of 4 settings perturbed
    // around the best so far with a shrinking step (docs/serve.md, "Autotuning a router:
    // route-tune").
    SearchRng rng{spec.serve.base.seed * 0x2545f4914f6cdd1dULL + 0x5eed};
    size_t random = spec.budget - spec.budget / 3, tried = 0;
    auto add = [&](const std::vector<double>& u) {
      std::string s = from_u(u);
      if (!seen.insert(s).second) return false;
      batch.push_back(s), batch_u.push_back(u);
      return true;
    };
    for (size_t attempts = 0; tried < random && attempts < random * 20; ++attempts) {
      std::vector<double> u;
      for (size_t i = 0; i < knobs.size(); ++i) u.push_back(rng.uniform());
      if (add(u)) ++tried;
    }
    run_batch(batch, batch_u);
    double step = 0.2;
    while (tried < spec.budget) {
      batch.clear(), batch_u.clear();
      std::vector<double> centre = coords[best_index()];
      size_t round = std::min<size_t>(4, spec.budget - tried);
      for (size_t attempts = 0; batch.size() < round && attempts < 80; ++attempts) {
        std::vector<double> u = centre;
        for (size_t i = 0; i < knobs.size(); ++i) {
          if (knobs[i].scale == TuneKnob::Scale::kList) {
            if (rng.uniform() < 0.25) u[i] = rng.uniform();
          } else {
            u[i] = std::clamp(u[i] + step * rng.normal(), 0.0, 1.0);
          }
        }
        add(u);
      }
      if (batch.empty()) break;  // the neighbourhood is exhausted
      tried += batch.size();
      run_batch(batch, batch_u);
      step /= 2;
    }
  }

  size_t best = best_index();
  out.best_params = out.runs[best].params;
  out.default_tune = out.runs[0].tune;
  out.best_tune = out.runs[best].tune;
  std::vector<std::string> held{out.default_params};
  if (best != 0) held.push_back(out.best_params);
  auto held_paths = evaluate(split.held_out, held, "route-tune (held-out part)");
  out.default_held = mean_figures(held_paths[0]);
  out.best_held = mean_figures(held_paths.back());
  out.beats_default_held = objective_value(spec.objective, out.best_held) <
                           objective_value(spec.objective, out.default_held);
  // The paired differences' mean and standard error: is the gain larger than the paths' noise?
  std::vector<double> diff;
  for (size_t k = 0; k < spec.replicates; ++k)
    diff.push_back(objective_value(spec.objective, held_paths.back()[k]) -
                   objective_value(spec.objective, held_paths[0][k]));
  for (double d : diff) out.held_difference += d / double(diff.size());
  if (diff.size() > 1) {
    double ss = 0;
    for (double d : diff) ss += (d - out.held_difference) * (d - out.held_difference);
    out.held_difference_se = std::sqrt(ss / double(diff.size() - 1) / double(diff.size()));
  }
  Params full = Params::parse(out.best_params, info.params, "router " + info.name);
  out.export_text = export_config(info.name, full.canonical(), out.best_params);

  if (!spec.json_path.empty()) {
    write_file_atomically(spec.json_path, out.to_json() + "\n");
    std::remove(runs_path.c_str());  // the report holds every run now
  }
  return out;
}

std::string TuneResult::to_json() const {
  std::vector<std::string> knob_rows, run_rows;
  for (const TuneKnob& k : knobs) {
    JsonObject o;
    o.add("name", k.name);
    if (k.scale == TuneKnob::Scale::kList) {
      std::vector<std::string> v;
      for (auto& s : k.values) v.push_back(json_string(s));
      o.add("scale", "list").raw("values", fmt::format("[{}]", fmt::join(v, ",")));
    } else {
      o.add("scale", k.scale == TuneKnob::Scale::kLog ? "log" : "linear")
          .add("lo", k.lo)
          .add("hi", k.hi)
          .raw("integer", k.integer ? "true" : "false");
    }
    knob_rows.push_back(o.add("default", k.default_value).add("origin", k.origin).str());
  }
  for (const TuneRun& r : runs)
    run_rows.push_back(JsonObject()
                           .add("params", r.params)
                           .raw("tune", figures_json(r.tune))
                           .add("objective", r.objective, 6)
                           .str());
  return JsonObject()
      .add("command", "route-tune")
      .add("router", router)
      .add("objective", objective)
      .add("search", search)
      .add("seed", seed)
      .add("budget", budget)
      .add("replicates", replicates)
      .add("arrival_jitter_s", arrival_jitter_s, 6)
      .add("split", split, 4)
      .add("cut_s", cut_s, 3)
      .add("tune_requests", tune_requests)
      .add("held_requests", held_requests)
      .raw("knobs", fmt::format("[{}]", fmt::join(knob_rows, ",")))
      .raw("runs", fmt::format("[{}]", fmt::join(run_rows, ",")))
      .add("default_params", default_params)
      .add("best_params", best_params)
      .raw("default_tune", figures_json(default_tune))
      .raw("default_held", figures_json(default_held))
      .raw("best_tune", figures_json(best_tune))
      .raw("best_held", figures_json(best_held))
      .raw("beats_default_held", beats_default_held ? "true" : "false")
      .add("held_difference", held_difference, 6)
      .add("held_difference_se", held_difference_se, 6)
      .add("export", export_text)
      .str();
}

}  // namespace kvpolicy::app
