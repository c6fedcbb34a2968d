// The application layer's functions in the Python module: load_trace, simulate, serve, mrc,
// import_trace and the policy and router listings, each the command line's (src/app/). Rows come
// back as the JSON lines `--json` writes; the package parses them into dicts.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "kvpolicy/app/doctor.h"
#include "kvpolicy/app/import.h"
#include "kvpolicy/app/inputs.h"
#include "kvpolicy/app/leaderboard.h"
#include "kvpolicy/app/lpc_decay.h"
#include "kvpolicy/app/mrc.h"
#include "kvpolicy/app/recommend.h"
#include "kvpolicy/app/replay.h"
#include "kvpolicy/app/route_tune.h"
#include "kvpolicy/app/serve.h"
#include "kvpolicy/app/size.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/route/router.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/hints.h"

namespace py = pybind11;
using namespace kvpolicy;

namespace {

// The trace as the command line loads it (app::load_trace): notes on stderr.
Trace load(const std::string& path, const std::string& format, const std::string& sessions,
           bool skip_bad_lines, uint32_t block_tokens, uint64_t max_requests,
           uint32_t session_min_blocks, const std::vector<std::string>& hints, uint64_t hint_seed) {
  app::TraceOptions o;
  o.path = path;
  o.format = format;
  o.sessions = sessions;
  o.skip_bad_lines = skip_bad_lines;
  o.block_tokens = block_tokens;
  o.max_requests = max_requests;
  o.session_min_blocks = session_min_blocks;
  o.hints = hints;
  o.hint_seed = hint_seed;
  return app::load_trace(o);
}

// One replay per (policy, capacity), on `jobs` threads; each result as the JSON line the CLI
// writes (the package parses it into a dict, so Python and --json share one schema).
std::vector<std::string> simulate(const Trace& trace, const std::vector<std::string>& policies,
                                  const std::vector<std::string>& capacities, uint64_t seed,
                                  unsigned jobs, double dram, const std::string& dram_policy,
                                  const std::string& model, const std::string& gpu,
                                  const std::string& kv_dtype, double xi_ms, double slo_ms) {
  if (policies.empty() || capacities.empty())
    throw ConfigError("simulate needs at least one policy and one capacity");
  if (!std::isfinite(dram) || dram < 0 || dram > 1000)
    throw ConfigError("dram must be a multiple of the HBM capacity in [0, 1000]");
  // The sets online, offline and all, and what the trace cannot feed, as on the command line.
  std::string list;
  for (auto& p : policies) list += (list.empty() ? "" : ",") + p;
  CostModel cost = CostModel::make(model, gpu, kv_dtype == "auto" ? "" : "kv_dtype=" + kv_dtype);
  std::string capacity_list;
  for (auto& c : capacities) capacity_list += (capacity_list.empty() ? "" : ",") + c;
  std::string skipped;
  app::ReplayPlan plan = app::plan_replay_grid(trace, list, capacity_list, cost, &skipped);
  if (!skipped.empty()) {
    py::gil_scoped_acquire gil;  // simulate runs with the GIL released
    PySys_WriteStderr("kvpolicy: %s\n", skipped.c_str());
  }
  app::GridOptions grid;
  grid.dram_ratio = dram;
  grid.dram_policy = parse_policy_spec(dram_policy);
  grid.cost_model = &cost;
  grid.xi_ms = xi_ms;
  grid.slo_ms = slo_ms;
  grid.jobs = jobs;
  std::vector<std::string> out;
  for (const ReplayResult& r :
       app::run_grid(trace, plan.specs, plan.caps, seed, grid, {}, &plan.facts))
    out.push_back(r.to_json());
  return out;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

// Memory tiers (docs/serve.md, "Memory tiers"): serve's tier flags as one dict, keyed by the
// flags' names with underscores (dram, dram_policy, ..., placement, write, overlap_transfers,
// offload_min_priority).
void set_serve_tiers(app::ServeSpec& spec, const py::dict& tiers) {
  std::pair<const char*, std::string*> text[] = {{"dram", &spec.dram},
                                                 {"ssd", &spec.ssd},
                                                 {"remote", &spec.remote},
                                                 {"dram_policy", &spec.dram_policy},
                                                 {"ssd_policy", &spec.ssd_policy},
                                                 {"remote_policy", &spec.remote_policy},
                                                 {"dram_admit", &spec.dram_admit},
                                                 {"ssd_admit", &spec.ssd_admit},
                                                 {"remote_admit", &spec.remote_admit},
                                                 {"dram_link", &spec.dram_link},
                                                 {"ssd_link", &spec.ssd_link},
                                                 {"remote_link", &spec.remote_link},
                                                 {"placement", &spec.placement},
                                                 {"write", &spec.write}};
  for (auto [key, value] : tiers) {
    std::string k = key.cast<std::string>();
    if (k == "overlap_transfers") {
      spec.overlap_transfers = value.cast<bool>();
      continue;
    }
    if (k == "offload_min_priority") {  // None: off (validate() checks the range)
      spec.offload_min_priority = value.is_none() ? -1 : value.cast<int32_t>();
      continue;
    }
    bool known = false;
    for (auto& [name, field] : text)
      if (k == name) {
        *field = py::str(value).cast<std::string>();
        known = true;
      }
    if (!known)
      throw ConfigError("tiers: unknown key '" + k +
                        "' (the tier flags of `kvpolicy serve`, with underscores)");
  }
}

// Allocation and prefill/decode disaggregation, shared by serve() and size() as the CLI's
// pd_options (docs/serve.md); serve() checks the values.
void set_pd_options(ServeOptions& base, const py::dict& options) {
  base.allocation = options["allocation"].cast<std::string>();
  base.prefill_workers = options["prefill_workers"].cast<uint32_t>();
  base.decode_workers = options["decode_workers"].cast<uint32_t>();
  base.decode_router = parse_router_spec(options["decode_router"].cast<std::string>());
  base.kv_link_bytes_per_s = options["kv_link_gb_per_s"].cast<double>() * 1e9;
  base.kv_link_latency_s = options["kv_link_latency_us"].cast<double>() * 1e-6;
  base.decode_cache = options["decode_cache"].cast<bool>();
  base.kv_transfer = options["kv_transfer"].cast<std::string>();
}

// serve's flags from the keywords serve() and route_tune() share.
app::ServeSpec serve_spec(const py::dict& options) {
  app::ServeSpec spec;
  spec.cost.model = options["model"].cast<std::string>();
  spec.cost.gpu = options["gpu"].cast<std::string>();
  spec.cost.kv_dtype = options["kv_dtype"].cast<std::string>();
  spec.cost.cost_params = options["cost_params"].cast<std::string>();
  spec.tp = options["tp"].cast<uint32_t>();
  spec.base.rate = options["rate"].cast<double>();
  spec.base.time_scale = options["time_scale"].cast<double>();
  spec.base.clients = options["clients"].cast<uint32_t>();
  spec.base.think_time_s = options["think_time_s"].cast<double>();
  spec.base.max_batch_tokens = options["max_batch_tokens"].cast<uint32_t>();
  spec.base.max_running = options["max_running"].cast<uint32_t>();
  spec.no_cache_outputs = !options["cache_outputs"].cast<bool>();
  spec.base.stepped = options["stepped"].cast<bool>();
  spec.base.slo_ms = options["slo_ms"].cast<double>();
  spec.base.seed = options["seed"].cast<uint64_t>();
  spec.base.arrival_jitter_s = options["arrival_jitter_s"].cast<double>();
  spec.jobs = options["jobs"].cast<unsigned>();
  set_pd_options(spec.base, options);
  set_serve_tiers(spec, options["tiers"].cast<py::dict>());
  if (spec.tp < 1 || spec.tp > 64) throw ConfigError("tp must be in [1, 64]");
  for (double v :
       {spec.base.rate, spec.base.think_time_s, spec.base.slo_ms, spec.base.arrival_jitter_s})
    if (!std::isfinite(v) || v < 0)
      throw ConfigError("rate, think_time_s, slo_ms and arrival_jitter_s must be >= 0");
  if (!std::isfinite(spec.base.time_scale) || spec.base.time_scale <= 0)
    throw ConfigError("time_scale must be a finite number > 0");
  return spec;
}

// A serve sweep (app::serve_sweep); each result as the JSON line `kvpolicy serve --json` writes.
std::vector<std::string> serve_rows(const Trace& trace, const std::vector<std::string>& routers,
                                    const std::vector<std::string>& policies,
                                    const std::vector<std::string>& workers,
                                    const std::vector<std::string>& capacities,
                                    const py::dict& options) {
  app::ServeSpec spec = serve_spec(options);
  spec.routers = joined(routers);
  spec.policies = joined(policies);
  spec.workers = joined(workers);
  spec.capacities = joined(capacities);
  std::vector<ServeResult> results;
  {
    py::gil_scoped_release release;
    results = app::serve_sweep(trace, spec);
  }
  std::vector<std::string> out;
  for (const ServeResult& r : results) out.push_back(r.to_json());
  return out;
}

// route-tune (app::route_tune): its report as `kvpolicy route-tune --json` writes it.
std::string route_tune_json(const Trace& trace, const std::string& router,
                            const std::string& policy, const std::string& workers,
                            const std::string& capacity, const py::dict& options,
                            const py::dict& tune) {
  app::TuneSpec spec;
  spec.serve = serve_spec(options);
  spec.serve.routers = router;
  spec.serve.policies = policy;
  spec.serve.workers = workers;
  spec.serve.capacities = capacity;
  spec.objective = tune["objective"].cast<std::string>();
  spec.search = tune["search"].cast<std::string>();
  spec.budget = tune["budget"].cast<size_t>();
  spec.split = tune["split"].cast<double>();
  spec.space = tune["space"].cast<std::string>();
  spec.json_path = tune["json"].cast<std::string>();
  spec.resume = tune["resume"].cast<bool>();
  spec.replicates = tune["replicates"].cast<size_t>();
  app::TuneResult r;
  {
    py::gil_scoped_release release;
    r = app::route_tune(trace, spec);
  }
  return r.to_json();
}

// A miss-ratio curve (app::run_mrc); its rows as `kvpolicy mrc --json` writes them.
std::vector<std::string> mrc_rows(const Trace& trace, const std::vector<std::string>& policies,
                                  uint32_t points, const std::string& min, const std::string& max,
                                  bool linear, const std::string& target_hit,
                                  const std::string& model, const std::string& gpu,
                                  const std::string& kv_dtype, const std::string& cost_params,
                                  uint64_t seed, unsigned jobs) {
  app::MrcOptions o;
  o.policies = joined(policies);
  o.points = points;
  o.min = min;
  o.max = max;
  o.linear = linear;
  o.target_hit = target_hit;
  o.cost.model = model;
  o.cost.gpu = gpu;
  o.cost.kv_dtype = kv_dtype;
  o.cost.cost_params = cost_params;
  o.seed = seed;
  o.jobs = jobs;
  return app::mrc_rows(app::run_mrc(o, &trace));
}

// The cross-trace leaderboard (app::run_leaderboard): its tables as text and its rows as
// `kvpolicy leaderboard --board-json` writes them, then the replay rows.
py::tuple leaderboard_rows(const std::string& traces, const py::dict& o) {
  app::LeaderboardOptions spec;
  spec.traces = traces;
  spec.load.format = o["format"].cast<std::string>();
  spec.load.sessions = o["sessions"].cast<std::string>();
  spec.load.block_tokens = o["block_tokens"].cast<uint32_t>();
  spec.load.max_requests = o["max_requests"].cast<uint64_t>();
  spec.capacities = o["capacities"].cast<std::string>();
  spec.policies = o["policies"].cast<std::string>();
  spec.seeds = o["seeds"].cast<std::string>();
  spec.cost.model = o["model"].cast<std::string>();
  spec.cost.gpu = o["gpu"].cast<std::string>();
  spec.cost.kv_dtype = o["kv_dtype"].cast<std::string>();
  spec.seed = o["seed"].cast<uint64_t>();
  spec.min_margin_pt = o["min_margin"].cast<double>();
  spec.grid.jobs = o["jobs"].cast<unsigned>();
  spec.grid.json_path = o["json"].cast<std::string>();
  spec.grid.resume = o["resume"].cast<bool>();
  app::Leaderboard b;
  {
    py::gil_scoped_release release;
    b = app::run_leaderboard(spec);
  }
  std::vector<std::string> results;
  for (const ReplayResult& r : b.results) results.push_back(r.to_json());
  return py::make_tuple(app::leaderboard_text(b), app::leaderboard_rows(b), results);
}

// A deployment's sizing (app::run_size); its rows as `kvpolicy size --json` writes them.
std::vector<std::string> size_rows(const Trace& trace, const py::dict& options) {
  app::SizeOptions o;
  o.cost.model = options["model"].cast<std::string>();
  o.cost.gpu = options["gpu"].cast<std::string>();
  o.cost.kv_dtype = options["kv_dtype"].cast<std::string>();
  o.cost.cost_params = options["cost_params"].cast<std::string>();
  o.tp = options["tp"].cast<uint32_t>();
  o.max_tp = options["max_tp"].cast<uint32_t>();
  o.workers = options["workers"].cast<std::string>();
  o.router = options["router"].cast<std::string>();
  o.policy = options["policy"].cast<std::string>();
  o.target_hit = options["target_hit"].cast<std::string>();
  o.target_token_hit = options["target_token_hit"].cast<std::string>();
  o.slo_ttft_p50_ms = options["slo_ttft_p50_ms"].cast<double>();
  o.slo_ttft_p90_ms = options["slo_ttft_p90_ms"].cast<double>();
  o.slo_ttft_p99_ms = options["slo_ttft_p99_ms"].cast<double>();
  o.gpu_memory_utilization = options["gpu_memory_utilization"].cast<double>();
  o.reserve_gb_per_gpu = options["reserve_gb"].cast<double>();
  o.tolerance = options["tolerance"].cast<double>();
  o.base.rate = options["rate"].cast<double>();
  o.base.max_batch_tokens = options["max_batch_tokens"].cast<uint32_t>();
  o.base.max_running = options["max_running"].cast<uint32_t>();
  o.no_cache_outputs = !options["cache_outputs"].cast<bool>();
  o.base.seed = options["seed"].cast<uint64_t>();
  o.jobs = options["jobs"].cast<unsigned>();
  set_pd_options(o.base, options);
  py::gil_scoped_release release;
  return app::size_rows(app::run_size(o, &trace));
}

py::dict import_summary(const app::ImportSummary& s) {
  py::dict d;
  d["input"] = s.input;
  d["out"] = s.out;
  d["format"] = s.format;
  d["tokenizer"] = s.tokenizer.empty() ? py::object(py::none()) : py::object(py::str(s.tokenizer));
  d["requests"] = s.requests;
  d["sessions"] = s.sessions;
  d["skipped_rows"] = s.skipped_rows;
  d["lines"] = s.lines;
  d["block_accesses"] = s.block_accesses;
  d["block_tokens"] = s.block_tokens;
  d["unique_blocks"] = s.unique_blocks;
  d["prompt_tokens"] = s.prompt_tokens;
  d["output_tokens"] = s.output_tokens;
  d["duration_s"] = s.duration_s;
  d["sorted"] = s.sorted;
  d["assumptions"] =
      s.assumptions.empty() ? py::object(py::none()) : py::object(py::str(s.assumptions.model));
  d["assumptions_statement"] = s.assumptions.statement;
  d["continuations"] = s.continuations;
  d["sanity"] = py::module_::import("json").attr("loads")(s.sanity.to_json());
  d["compression"] = s.compression;
  d["joined_lines"] = s.joined_lines;
  d["responses_without_request"] = s.responses_without_request;
  return d;
}

// `kvpolicy doctor` (app::run_doctor): its findings as the JSON object `--json` writes.
std::string doctor_json(const std::string& trace, const std::string& input, const py::dict& o) {
  app::DoctorSpec spec;
  spec.trace.path = trace;
  spec.log.input = input;
  spec.trace.format = o["format"].cast<std::string>();
  spec.trace.skip_bad_lines = o["skip_bad_lines"].cast<bool>();
  spec.trace.block_tokens = o["block_tokens"].cast<uint32_t>();
  spec.trace.sessions = o["sessions"].cast<std::string>();
  spec.log.map = o["map"].cast<std::string>();
  spec.log.preset = o["preset"].cast<std::string>();
  spec.log.opts.chat_template = o["chat_template"].cast<std::string>();
  spec.log.opts.time_unit = o["time_unit"].cast<std::string>();
  spec.log.tokenizer = o["tokenizer"].cast<std::string>();
  spec.share_input_options();  // as the command line: one format, block size and skip flag
  spec.capacity = o["capacity"].cast<std::string>();
  spec.policy = o["policy"].cast<std::string>();
  spec.workers = o["workers"].cast<uint32_t>();
  spec.skip_routing = !o["routing"].cast<bool>();
  spec.cost.model = o["model"].cast<std::string>();
  spec.cost.gpu = o["gpu"].cast<std::string>();
  spec.cost.kv_dtype = o["kv_dtype"].cast<std::string>();
  spec.seed = o["seed"].cast<uint64_t>();
  spec.jobs = o["jobs"].cast<unsigned>();
  py::gil_scoped_release release;
  return app::run_doctor(spec).to_json();
}

// `kvpolicy recommend` (app::run_recommend): the object `--json` writes.
std::string recommend_json(const std::string& trace, const std::string& results,
                           const py::dict& o) {
  app::RecommendOptions spec;
  spec.trace.path = trace;
  spec.results = results;
  spec.trace.format = o["format"].cast<std::string>();
  spec.trace.sessions = o["sessions"].cast<std::string>();
  spec.trace.block_tokens = o["block_tokens"].cast<uint32_t>();
  spec.capacity = o["capacity"].cast<std::string>();
  spec.among = o["among"].cast<std::string>();
  spec.policy = o["policy"].cast<std::string>();
  spec.cost.model = o["model"].cast<std::string>();
  spec.cost.gpu = o["gpu"].cast<std::string>();
  spec.cost.kv_dtype = o["kv_dtype"].cast<std::string>();
  spec.seed = o["seed"].cast<uint64_t>();
  spec.jobs = o["jobs"].cast<unsigned>();
  py::gil_scoped_release release;
  return app::run_recommend(spec).to_json();
}

// As `kvpolicy policies` lists them: deprecated spellings left out, a nested parameter's choices
// (the learned policies' predictor) each with its own parameters.
py::list param_dicts(const std::vector<ParamSpec>& params) {
  py::list out;
  for (const ParamSpec& p : params) {
    if (p.deprecated) continue;
    py::dict d;
    d["name"] = p.name;
    d["type"] = p.type_name();
    d["default"] = p.default_value;
    d["allowed"] = p.allowed();
    d["help"] = p.help;
    if (p.nested) {
      py::list choices;
      for (const NestedChoice& c : p.nested()) {
        py::dict cd;
        cd["name"] = c.name;
        cd["summary"] = c.summary;
        cd["params"] = param_dicts(c.params);
        if (!c.unavailable.empty()) cd["unavailable"] = c.unavailable;
        choices.append(cd);
      }
      d["choices"] = choices;
    }
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_app(py::module_& m) {
  m.def(
      "generate_trace",
      [](const std::string& kind, const std::string& params, uint64_t seed,
         const std::vector<std::string>& hints, uint64_t hint_seed) {
        Trace t = generate_workload(kind, params, seed);
        apply_hint_rules(t, parse_hint_rules(hints), hint_seed);
        return t;
      },
      py::arg("kind"), py::arg("params") = "", py::arg("seed") = 1,
      py::arg("hints") = std::vector<std::string>{}, py::arg("hint_seed") = 1,
      py::call_guard<py::gil_scoped_release>(),
      "A synthetic workload as `kvpolicy trace generate` and `serve --generate` build it: kind "
      "gsp, conversation, agent or zipf, params key=value,... (see `kvpolicy trace generate "
      "--help`); hints: retention hint rules as --hint takes them (docs/policies.md, hinted).");
  m.def("load_trace", &load, py::arg("path"), py::arg("format") = "auto",
        py::arg("sessions") = "auto", py::arg("skip_bad_lines") = false,
        py::arg("block_tokens") = 0, py::arg("max_requests") = 0, py::arg("session_min_blocks") = 2,
        py::arg("hints") = std::vector<std::string>{}, py::arg("hint_seed") = 1,
        py::call_guard<py::gil_scoped_release>(),
        "Reads a trace (mooncake, bailian, lmbench, oracle-general, native .kvtrace; auto "
        "detects) as the command line's --trace does. sessions: auto infers them from shared "
        "prefixes when the trace has none (a note on stderr), infer always, keep as read. hints: "
        "retention hint rules as --hint takes them (docs/policies.md, hinted); every policy then "
        "follows them.");
  m.def("_serve", &serve_rows, py::arg("trace"), py::arg("routers"), py::arg("policies"),
        py::arg("workers"), py::arg("capacities"), py::arg("options"));
  m.def("_route_tune", &route_tune_json, py::arg("trace"), py::arg("router"), py::arg("policy"),
        py::arg("workers"), py::arg("capacity"), py::arg("options"), py::arg("tune"));
  m.def("_mrc", &mrc_rows, py::arg("trace"), py::arg("policies"), py::arg("points"), py::arg("min"),
        py::arg("max"), py::arg("linear"), py::arg("target_hit"), py::arg("model"), py::arg("gpu"),
        py::arg("kv_dtype"), py::arg("cost_params"), py::arg("seed"), py::arg("jobs"),
        py::call_guard<py::gil_scoped_release>());
  m.def("_leaderboard", &leaderboard_rows, py::arg("traces"), py::arg("options"));
  m.def("_size", &size_rows, py::arg("trace"), py::arg("options"));
  m.def(
      "_lpc_decay",
      [](const Trace& trace, const std::vector<double>& scales, const std::string& capacities,
         const std::string& lpc_params, uint64_t seed, unsigned jobs) {
        app::LpcDecayOptions o;
        o.scales = scales;
        o.capacities = capacities;
        o.lpc_params = lpc_params;
        o.seed = seed;
        o.jobs = jobs;
        // The command line's default cost model: capacities in GB or tokens read the same.
        const CostModel kv = app::CostOptions{}.make().with_block_tokens(trace.block_tokens);
        return app::choose_lpc_decay(trace, o, kv).json();
      },
      py::arg("trace"), py::arg("scales"), py::arg("capacities"), py::arg("lpc_params"),
      py::arg("seed"), py::arg("jobs"), py::call_guard<py::gil_scoped_release>());
  m.def(
      "_import_trace",
      [](const std::string& input, const std::string& map, const std::string& out,
         const std::string& format, const std::string& time_unit, uint32_t block_tokens,
         const std::string& tokenizer, bool skip_bad_lines, const std::string& preset,
         const std::string& chat_template, const std::optional<std::string>& assume) {
        app::ImportSpec spec;
        spec.input = input;
        spec.map = map;
        spec.preset = preset;
        spec.opts.chat_template = chat_template;
        spec.out = out;
        spec.tokenizer = tokenizer;
        spec.opts.format = format;
        spec.opts.time_unit = time_unit;
        spec.opts.block_tokens = block_tokens;
        spec.opts.skip_bad_lines = skip_bad_lines;
        spec.opts.assume = assume;
        if (block_tokens < 1) throw ConfigError("block_tokens must be at least 1");
        app::ImportSummary s;
        {
          py::gil_scoped_release release;
          s = app::import_to_native(spec);
        }
        return import_summary(s);
      },
      py::arg("input"), py::arg("map"), py::arg("out"), py::arg("format"), py::arg("time_unit"),
      py::arg("block_tokens"), py::arg("tokenizer"), py::arg("skip_bad_lines"), py::arg("preset"),
      py::arg("chat_template"), py::arg("assume"));
  m.def("_doctor", &doctor_json, py::arg("trace"), py::arg("input"), py::arg("options"));
  m.def("_recommend", &recommend_json, py::arg("trace"), py::arg("results"), py::arg("options"));
  m.def("_policies", [] {
    py::list out;
    for (const PolicyInfo& p : PolicyRegistry::instance().all()) {
      py::dict d;
      d["name"] = p.name;
      d["summary"] = p.summary;
      d["paper"] = p.paper;
      d["offline"] = needs_future(PolicySpec{p.name, ""});
      d["randomized"] = p.randomized;
      d["params"] = param_dicts(p.params);
      out.append(d);
    }
    return out;
  });
  m.def("_routers", [] {
    py::list out;
    for (const RouterInfo& r : RouterRegistry::instance().all()) {
      py::dict d;
      d["name"] = r.name;
      d["summary"] = r.summary;
      d["source"] = r.source;
      d["randomized"] = r.randomized;
      d["max_workers"] = r.max_workers;
      d["needs_future"] = r.needs_future;
      d["params"] = param_dicts(r.params);
      out.append(d);
    }
    return out;
  });
  m.def("_simulate", &simulate, py::arg("trace"), py::arg("policies"), py::arg("capacities"),
        py::arg("seed"), py::arg("jobs"), py::arg("dram"), py::arg("dram_policy"), py::arg("model"),
        py::arg("gpu"), py::arg("kv_dtype"), py::arg("xi_ms"), py::arg("slo_ms"),
        py::call_guard<py::gil_scoped_release>());
}
