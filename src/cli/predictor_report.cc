// `kvpolicy predictor-report`: how good the online GBM next-access predictor is on a trace
// (error and ranking against the oracle) and what it buys LARU, FPB and HF against LRU and
// Belady, in sync and async mode, with its inference and training costs.
#include <fmt/format.h>

#include <chrono>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/key_map.h"
#include "kvpolicy/predict/predictor.h"
#include "kvpolicy/sim/sim.h"

namespace kvpolicy::cli {
namespace {

struct ReportArgs {
  TraceArgs trace;
  CapacityArgs capacities;
  CostArgs cost;
  std::string mode = "both";
  std::string policies = "laru,fpb,hf";
  std::string gbm;
  uint64_t seed = 1;
  std::string json;
};

double get(const PolicyStats& s, const char* name) {
  for (auto& [k, v] : s)
    if (k == name) return v;
  return 0;
}

// The GBM on the whole access stream, as if the cache were infinite: one id per block key, so
// no block's history is lost to an eviction. Separates what the model can learn from what a
// small cache leaves it. Then times the model on batches of real feature rows.
void predictor_alone(const Trace& trace, const Oracle& oracle, const GbmConfig& cfg,
                     uint64_t seed) {
  auto owned = std::make_unique<GbmPredictor>(cfg, trace.block_tokens);
  GbmPredictor* gbm = owned.get();
  AuditedPredictor audited(std::move(owned), oracle.view(trace), seed);
  KeyMap ids(trace.num_block_accesses() / 2 + 16);
  NodeId next_id = 0;
  std::vector<NodeId> path;
  std::vector<Time> out;
  for (size_t r = 0; r < trace.size(); ++r) {
    path.clear();
    AccessInfo info;
    info.now = trace.time[r];
    info.req = RequestIndex(r);
    info.session = trace.session[r];
    info.turn = trace.turn[r];
    info.category = trace.category[r];
    info.prompt_blocks = trace.prompt_blocks(r);
    for (uint64_t a = trace.block_offset[r]; a < trace.block_offset[r + 1]; ++a) {
      bool fresh;
      NodeId id = ids.get_or_insert(trace.blocks[a], next_id, &fresh);
      if (fresh) ++next_id;
      info.access = a;
      info.position = uint32_t(a - trace.block_offset[r]);
      info.kind = fresh ? AccessKind::kInserted : AccessKind::kReused;
      audited.on_access(id, info);
      path.push_back(id);
    }
    out.resize(path.size());
    audited.predict(path, out);
  }
  PolicyStats st = audited.stats();
  fmt::print(
      "GBM on the whole access stream (infinite cache, sync): {:.0f} samples, {:.0f} fits, "
      "{:.3f} s/fit; MALE {:.3f}, rank {:.3f}, far {:.1f}%\n",
      get(st, "samples"), get(st, "retrains"),
      get(st, "retrains") ? get(st, "train_seconds") / get(st, "retrains") : 0,
      get(st, "audit_mean_abs_log_error"), get(st, "audit_ranking_accuracy"),
      get(st, "audit_far_future_share") * 100);
  if (gbm->version() == 0) return;
  // Inference cost per row against batch size, on rows of blocks seen at least twice.
  std::vector<float> rows;
  for (NodeId n = 0; n < next_id && rows.size() < 4096 * size_t(FeatureTracker::kFeatures); ++n)
    if (gbm->features().accesses(n) >= 2) {
      rows.resize(rows.size() + FeatureTracker::kFeatures);
      gbm->features().row(n, rows.data() + rows.size() - FeatureTracker::kFeatures);
    }
  size_t avail = rows.size() / FeatureTracker::kFeatures;
  std::vector<float> res(avail);
  fmt::print("inference (XGBoosterPredictFromDense, last model):");
  for (size_t batch : {size_t{1}, size_t{16}, size_t{256}, size_t{4096}}) {
    if (batch > avail) break;
    size_t reps = std::max<size_t>(1, 20000 / batch);
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < reps; ++i) gbm->predict_rows(rows.data(), batch, res.data());
    double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    fmt::print(" batch {} {:.2f} us/row;", batch, us / double(reps * batch));
  }
  fmt::print("\n\n");
}

void add(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand(
      "predictor-report", "quality and cost of the GBM next-access predictor, and its hit rates");
  args->trace.add(cmd, true);
  args->capacities.add(cmd, "0.02,0.05,0.1");
  args->cost.add(cmd);
  cmd->add_option("--mode,-m", args->mode, "sync, async or both")
      ->check(CLI::IsMember({"sync", "async", "both"}))
      ->capture_default_str();
  add_policy_option(cmd, args->policies, "learned policies to run with the GBM");
  cmd->add_option("--gbm", args->gbm, "extra GBM parameters, e.g. window=20000,trees=100");
  cmd->add_option("--seed", args->seed, "seed")->capture_default_str();
  output_file(cmd->add_option("--json", args->json, "write one JSON object per row"));
  cmd->callback([args] {
    args->capacities.specs();  // fail before loading
    CostModel cost = args->cost.make();
    auto learned = expand_policy_sets(args->policies);
    Params::parse(args->gbm, predictor_param_specs(), "--gbm");  // fail before loading
    for (auto& s : learned) PolicyRegistry::instance().get(s.name);
    std::vector<std::string> modes;
    if (args->mode != "async") modes.push_back("sync");
    if (args->mode != "sync") modes.push_back("async");
    Trace trace = args->trace.load();
    Oracle oracle = compute_oracle(trace);
    TraceFacts facts = trace_facts(trace);
    cost = cost.with_block_tokens(trace.block_tokens);
    auto caps = args->capacities.resolve(facts.unique_blocks, cost);
    print_assumptions(trace.assumptions);
    fmt::print("trace {}: {} requests, {} block accesses, {} unique blocks\n", trace.name,
               facts.requests, facts.block_accesses, facts.unique_blocks);
    for (auto& c : caps) fmt::print("capacity {}\n", c.label());
    {
      PredictorConfig pc = predictor_config(
          Params::parse("predictor=gbm" + (args->gbm.empty() ? "" : "," + args->gbm),
                        predictor_param_specs(), "--gbm"));
      predictor_alone(trace, oracle, pc.gbm, args->seed);
    }
    fmt::print(
        "MALE: mean |log1p(predicted gap) - log1p(true gap)|, gaps in s, over model answers "
        "with a finite truth; rank: share of sampled prediction pairs ordered as the truth; "
        "far: share answered 'far future' (< 2 accesses or no model yet)\n\n");
    fmt::print("{:>6} {:<8} {:<6} {:>7} {:>6} {:>6} {:>6} {:>5} {:>8} {:>9} {:>9} {:>9} {:>7}\n",
               "cap", "policy", "mode", "hit %", "MALE", "rank", "far %", "fits", "s/fit", "us/row",
               "us/evict", "replay s", "pred %");
    std::vector<std::string> json;
    Progress progress("predictor-report");
    size_t total = caps.size() * (2 + modes.size() * learned.size()), done = 0;
    for (auto& resolved : caps) {
      size_t blocks = resolved.blocks;
      auto run = [&](const PolicySpec& spec) {
        ReplayOptions opts;
        opts.seed = args->seed;
        opts.cost_model = &cost;
        std::string detail = fmt::format("({} at {})", spec.label(), resolved.written());
        opts.progress = [&](double f) { progress.update((done + f) / total, detail); };
        ReplayResult r = replay(trace, &oracle, spec, blocks, opts);
        r.capacity_fraction = resolved.capacity.fraction();
        ++done;
        return r;
      };
      for (const char* base : {"lru", "belady"}) {
        ReplayResult r = run({base, ""});
        fmt::print("{:>6} {:<8} {:<6} {:>7.2f}\n", resolved.written(), base, "-",
                   r.block_hit_rate * 100);
        json.push_back(r.to_json());
      }
      for (auto& mode : modes) {
        for (auto& s : learned) {
          PolicySpec spec = s;
          std::string extra = "predictor=gbm,audit=1,mode=" + mode;
          if (!args->gbm.empty()) extra += "," + args->gbm;
          spec.params = spec.params.empty() ? extra : spec.params + "," + extra;
          ReplayResult r = run(spec);
          const PolicyStats& st = r.policy_stats;
          double fits = get(st, "retrains"), rows = get(st, "model_rows");
          double evictions = std::max(1.0, double(r.evictions));
          double pred_s = get(st, "predict_seconds"), train_s = get(st, "train_seconds");
          // Async training runs beside the replay, so only inline work counts against it.
          double share = (pred_s + (mode == "sync" ? train_s : 0)) / r.replay_seconds;
          fmt::print(
              "{:>6} {:<8} {:<6} {:>7.2f} {:>6.3f} {:>6.3f} {:>6.1f} {:>5.0f} {:>8.3f} {:>9.2f} "
              "{:>9.2f} {:>9.2f} {:>7.1f}\n",
              resolved.written(), s.label(), mode, r.block_hit_rate * 100,
              get(st, "audit_mean_abs_log_error"), get(st, "audit_ranking_accuracy"),
              get(st, "audit_far_future_share") * 100, fits, fits ? train_s / fits : 0,
              rows ? get(st, "model_seconds") / rows * 1e6 : 0, pred_s / evictions * 1e6,
              r.replay_seconds, share * 100);
          json.push_back(r.to_json());
        }
      }
    }
    if (!args->json.empty()) {
      std::string out;
      for (auto& j : json) out += j + '\n';
      write_file_atomically(args->json, out);
    }
  });
}

CommandRegistrar registrar(31, add);

}  // namespace
}  // namespace kvpolicy::cli
