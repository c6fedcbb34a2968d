// route-tune (docs/serve.md, "Autotuning a router: route-tune"): the space from each router's
// ParamSpecs, the time split, the seeded search, the grid on a case with a known best, the
// export text, and bad flags.
#include "kvpolicy/app/route_tune.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "kvpolicy/core/error.h"
#include "kvpolicy/serve/serve.h"
#include "support/random_workload.h"

namespace kvpolicy::app {
namespace {

// `prefixes` shared prefixes in turn, one request every `gap_us`: request r is prefix r mod
// `prefixes` (`shared` blocks) then `shared` fresh blocks, so the best match a router can see
// covers exactly half the prompt. No session column: only the prefixes tie requests together.
Trace half_shared_trace(uint32_t prefixes, uint32_t requests, uint32_t shared, Time gap_us) {
  Trace t;
  t.name = "half-shared";
  t.block_tokens = 16;
  uint64_t fresh = 1'000'000;
  for (uint32_t r = 0; r < requests; ++r) {
    uint32_t p = r % prefixes;
    std::vector<uint64_t> ids;
    for (uint32_t b = 0; b < shared; ++b) ids.push_back(uint64_t{p} * 1000 + b);
    for (uint32_t b = 0; b < shared; ++b) ids.push_back(fresh++);
    t.add_request(Time{r} * gap_us, ids, 2 * shared * 16, 4);
  }
  return t;
}

TuneSpec small_spec(const std::string& router) {
  TuneSpec spec;
  spec.serve.routers = router;
  spec.serve.workers = "4";
  spec.serve.capacities = "20000";
  spec.serve.jobs = 2;
  return spec;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RouteTune, SpaceOfCacheAwareFollowsItsParamSpecs) {
  std::map<std::string, std::string> fixed;
  auto knobs = tune_space(RouterRegistry::instance().get("cache_aware"), "", &fixed);
  ASSERT_EQ(knobs.size(), 3u);  // max_tree_tokens is a memory bound, not a knob
  EXPECT_EQ(knobs[0].describe(), "balance_abs: 8 .. 128 log integer (around default)");
  EXPECT_EQ(knobs[1].describe(), "balance_rel: 1 .. 4.0004 log (around default)");
  EXPECT_EQ(knobs[2].describe(), "cache_threshold: 0 .. 1 linear (bounds)");
  EXPECT_TRUE(fixed.empty());
  std::map<std::string, std::string> dyn;
  for (const TuneKnob& k : tune_space(RouterRegistry::instance().get("dynamo"), "", &fixed))
    dyn[k.name] = k.describe();
  EXPECT_EQ(dyn["overlap_weight"], "overlap_weight: 0.25 .. 4 log (around default)");
  EXPECT_EQ(dyn["events"], "events: exact | approx (choices)");
  EXPECT_EQ(dyn["ttl_s"], "ttl_s: 30 .. 480 log (around default)");
}

TEST(RouteTune, EveryRoutersSpaceStaysInsideItsParamSpecs) {
  // Whatever routers are registered (those added later included): every value the search can
  // take is one the declaration accepts.
  for (const RouterInfo& info : RouterRegistry::instance().all()) {
    std::map<std::string, std::string> fixed;
    for (const TuneKnob& k : tune_space(info, "", &fixed)) {
      const ParamSpec* spec = nullptr;
      for (auto& p : info.params)
        if (p.name == k.name) spec = &p;
      ASSERT_NE(spec, nullptr) << info.name << " " << k.name;
      for (int i = 0; i <= 40; ++i) {
        std::string v = k.at(i / 40.0);
        EXPECT_TRUE(spec->accepts(v)) << info.name << ": " << k.name << " = " << v;
      }
      EXPECT_TRUE(spec->accepts(k.at(-3))) << info.name << " " << k.name;  // clamped
      EXPECT_TRUE(spec->accepts(k.at(7))) << info.name << " " << k.name;
    }
  }
}

TEST(RouteTune, SpaceOverrides) {
  const RouterInfo& ca = RouterRegistry::instance().get("cache_aware");
  std::map<std::string, std::string> fixed;
  auto knobs = tune_space(ca, "cache_threshold=0.1:0.9,balance_abs=1000,balance_rel=1|2", &fixed);
  ASSERT_EQ(knobs.size(), 2u);
  EXPECT_EQ(knobs[0].describe(), "balance_rel: 1 | 2 (--space)");
  EXPECT_EQ(knobs[1].describe(), "cache_threshold: 0.1 .. 0.9 linear (--space)");
  EXPECT_EQ(fixed.at("balance_abs"), "1000");
  auto error = [&](const std::string& space) {
    try {
      tune_space(ca, space, &fixed);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("nope=1:2").find("--space: router cache_aware has no parameter 'nope'"),
            std::string::npos);
  EXPECT_NE(error("cache_threshold=0.2:3").find("--space"), std::string::npos);
  EXPECT_NE(error("cache_threshold=0.5:0.2").find("lo must be below hi"), std::string::npos);
  EXPECT_NE(error("cache_threshold").find("--space"), std::string::npos);
  EXPECT_NE(error("balance_abs=-1").find("--space"), std::string::npos);
  EXPECT_NE(error("cache_threshold=0:1:cubic").find("log or lin"), std::string::npos);
}

TEST(RouteTune, SplitIsByTimeAndDisjoint) {
  Trace t = testing::random_workload({.seed = 3, .requests = 200});
  for (size_t r = 0; r < t.size(); ++r) t.time[r] = Time(r * r) * 1000;  // uneven arrivals
  TraceSplit s = split_by_time(t, 0.5);
  ASSERT_EQ(s.tune.size() + s.held_out.size(), t.size());
  Time cut = t.time.front() + (t.time.back() - t.time.front()) / 2;
  for (size_t r = 0; r < s.tune.size(); ++r) EXPECT_LT(t.time[r], cut);
  EXPECT_GE(t.time[s.tune.size()], cut);
  // By time, not by count: with arrivals spreading out, the first half of the span holds more
  // than half the requests.
  EXPECT_GT(s.tune.size(), t.size() / 2 + 20);
  EXPECT_EQ(s.held_out.time.front(), 0u);
  for (size_t r = 0; r < s.held_out.size(); ++r) {
    size_t orig = s.tune.size() + r;
    EXPECT_EQ(s.held_out.time[r], t.time[orig] - t.time[s.tune.size()]);
    ASSERT_EQ(s.held_out.prompt_blocks(r), t.prompt_blocks(orig));
    EXPECT_TRUE(std::equal(s.held_out.prompt(r).begin(), s.held_out.prompt(r).end(),
                           t.prompt(orig).begin()));
  }
  EXPECT_NEAR(s.cut_s, double(cut) / 1e6, 1e-6);
  s.tune.validate();
  s.held_out.validate();
  EXPECT_THROW(split_by_time(t, 1.0), ConfigError);
  EXPECT_THROW(split_by_time(t, 0), ConfigError);
}

TEST(RouteTune, GridFindsTheLowThresholdThatServeConfirms) {
  // Every prompt is half a shared prefix: cache_aware routes by prefix only when the threshold
  // is below 0.5, and otherwise to the smallest tree, which here is the next worker in turn:
  // 41 prefixes on 4 workers, so a prefix never meets the worker that has it.
  Trace t = half_shared_trace(41, 164, 8, 200'000);
  TuneSpec spec = small_spec("cache_aware");
  spec.objective = "hit";
  spec.space = "cache_threshold=0:1,balance_abs=1000,balance_rel=1.0001";  // no imbalance branch
  spec.budget = 5;
  TuneResult r = route_tune(t, spec);
  ASSERT_EQ(r.runs.size(), 5u);  // 0.5 (the default, run first), 0, 0.25, 0.75, 1
  EXPECT_EQ(r.default_params, "balance_abs=1000,balance_rel=1.0001,cache_threshold=0.5");
  EXPECT_EQ(r.best_params, "balance_abs=1000,balance_rel=1.0001,cache_threshold=0");
  EXPECT_GT(r.best_tune.hit_rate, r.default_tune.hit_rate + 0.2);
  EXPECT_TRUE(r.beats_default_held);
  // serve itself, on the held-out part, agrees.
  TraceSplit split = split_by_time(t, 0.5);
  ServeSpec s = spec.serve;
  CostModel cost = s.cost_model();
  double hit[2];
  const char* settings[2] = {"balance_abs=1000,balance_rel=1.0001,cache_threshold=0",
                             "balance_abs=1000,balance_rel=1.0001,cache_threshold=0.5"};
  for (int i = 0; i < 2; ++i) {
    ServeOptions o = s.configs(t, cost).at(0);
    o.router = {"cache_aware", settings[i]};
    o.cost_model = &cost;
    hit[i] = serve(split.held_out, o).block_hit_rate;
  }
  EXPECT_DOUBLE_EQ(hit[0], r.best_held.hit_rate);
  EXPECT_DOUBLE_EQ(hit[1], r.default_held.hit_rate);
  EXPECT_GT(hit[0], hit[1] + 0.2);
}

TEST(RouteTune, CmaesSpendsTheBudgetAndFindsTheLowThreshold) {
  // The grid test's case, searched by CMA-ES from the default (0.5): every setting below 0.5 gains
  // about a fifth of the blocks, so the search must leave the default's side.
  Trace t = half_shared_trace(41, 164, 8, 200'000);
  TuneSpec spec = small_spec("cache_aware");
  spec.objective = "hit";
  spec.space = "cache_threshold=0:1,balance_abs=1000,balance_rel=1.0001";
  spec.search = "cmaes";
  spec.budget = 8;
  TuneResult r = route_tune(t, spec);
  ASSERT_EQ(r.runs.size(), 9u);  // the default, then two generations of 4
  std::set<std::string> distinct;
  for (const TuneRun& run : r.runs) distinct.insert(run.params);
  EXPECT_EQ(distinct.size(), 9u);
  double threshold = std::stod(r.best_params.substr(r.best_params.rfind('=') + 1));
  EXPECT_LT(threshold, 0.5) << r.best_params;
  EXPECT_GT(r.best_tune.hit_rate, r.default_tune.hit_rate + 0.2);
  EXPECT_TRUE(r.beats_default_held);
  EXPECT_EQ(route_tune(t, spec).to_json(), r.to_json());  // seeded
  spec.serve.base.seed = 2;
  EXPECT_NE(route_tune(t, spec).runs[1].params, r.runs[1].params);
}

TEST(RouteTune, DeterministicPerSeedAndWrittenAtTheEnd) {
  Trace t = testing::random_workload({.seed = 5, .requests = 240});
  for (size_t r = 0; r < t.size(); ++r) t.time[r] = Time(r) * 20'000;
  std::string dir = ::testing::TempDir();
  auto run = [&](uint64_t seed, const std::string& out) {
    TuneSpec spec = small_spec("cache_aware");
    spec.search = "random";
    spec.budget = 7;
    spec.serve.base.seed = seed;
    spec.json_path = out;
    route_tune(t, spec);
    EXPECT_FALSE(std::filesystem::exists(out + ".runs"));  // the work file is gone
    return read_file(out);
  };
  std::string a = run(1, dir + "/route_tune_a.json");
  std::string b = run(1, dir + "/route_tune_b.json");
  std::string c = run(2, dir + "/route_tune_c.json");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a.find("\"search\":\"random\""), std::string::npos);
  // 7 settings besides the default: 5 random, then refinement rounds around the best.
  size_t runs = 0;
  for (size_t p = a.find("\"params\""); p != std::string::npos; p = a.find("\"params\"", p + 1))
    ++runs;
  EXPECT_EQ(runs, 8u);
}

TEST(RouteTune, ReplicatesAreTheMeanOfSeededJitteredPaths) {
  // Each setting's figures are the means of serve itself over seeds s..s+2 with arrivals
  // jittered by 1 % of the mean gap; the held-out difference is paired by seed.
  Trace t = testing::random_workload({.seed = 7, .requests = 240});
  for (size_t r = 0; r < t.size(); ++r) t.time[r] = Time(r) * 20'000;
  TuneSpec spec = small_spec("cache_aware");
  spec.space = "cache_threshold=0:1,balance_abs=4,balance_rel=1.0001";
  spec.budget = 2;
  spec.objective = "ttft-p99";
  spec.replicates = 3;
  spec.serve.base.seed = 4;
  spec.serve.base.rate = 400;  // overloaded: the paths differ
  TuneResult r = route_tune(t, spec);
  EXPECT_EQ(r.replicates, 3u);
  EXPECT_DOUBLE_EQ(r.arrival_jitter_s, 0.01 / 400);
  TraceSplit split = split_by_time(t, 0.5);
  CostModel cost = spec.serve.cost_model();
  auto mean_over_seeds = [&](const Trace& part, const std::string& params) {
    TuneFigures m;
    std::vector<double> p99;
    for (uint64_t seed : {4, 5, 6}) {
      ServeOptions o = spec.serve.configs(t, cost).at(0);
      o.router = {"cache_aware", params};
      o.cost_model = &cost;
      o.seed = seed;
      o.arrival_jitter_s = 0.01 / 400;
      ServeResult s = serve(part, o);
      m.ttft_p50_ms += s.ttft_ms.p50 / 3;
      m.ttft_p99_ms += s.ttft_ms.p99 / 3;
      m.hit_rate += s.block_hit_rate / 3;
      p99.push_back(s.ttft_ms.p99);
    }
    return std::make_pair(m, p99);
  };
  for (const TuneRun& run : r.runs) {
    auto [m, unused] = mean_over_seeds(split.tune, run.params);
    EXPECT_NEAR(run.tune.ttft_p50_ms, m.ttft_p50_ms, 1e-9 * m.ttft_p50_ms) << run.params;
    EXPECT_NEAR(run.tune.ttft_p99_ms, m.ttft_p99_ms, 1e-9 * m.ttft_p99_ms) << run.params;
    EXPECT_NEAR(run.tune.hit_rate, m.hit_rate, 1e-12) << run.params;
  }
  // The jitter draws other paths: the seeds' P99s are not all one.
  auto [held_default, default_p99] = mean_over_seeds(split.held_out, r.default_params);
  auto [held_best, best_p99] = mean_over_seeds(split.held_out, r.best_params);
  EXPECT_FALSE(default_p99[0] == default_p99[1] && default_p99[1] == default_p99[2]);
  EXPECT_NEAR(r.default_held.ttft_p99_ms, held_default.ttft_p99_ms,
              1e-9 * held_default.ttft_p99_ms);
  EXPECT_NEAR(r.best_held.ttft_p99_ms, held_best.ttft_p99_ms, 1e-9 * held_best.ttft_p99_ms);
  double mean = 0, ss = 0;
  for (int k = 0; k < 3; ++k) mean += (best_p99[k] - default_p99[k]) / 3;
  for (int k = 0; k < 3; ++k) ss += std::pow(best_p99[k] - default_p99[k] - mean, 2);
  EXPECT_NEAR(r.held_difference, mean, 1e-9 * (1 + std::abs(mean)));
  EXPECT_NEAR(r.held_difference_se, std::sqrt(ss / 2 / 3), 1e-9 * (1 + std::sqrt(ss)));
  EXPECT_NE(r.to_json().find("\"replicates\":3"), std::string::npos);
}

TEST(RouteTune, ResumeReadsTheRunsFile) {
  // An interrupted run leaves FILE.runs with the settings it finished; --resume takes them from
  // there instead of running them again. The planted row carries a TTFT no run would give.
  Trace t = half_shared_trace(8, 120, 4, 200'000);
  std::string out = ::testing::TempDir() + "/route_tune_resume.json";
  std::remove(out.c_str());
  TuneSpec spec = small_spec("cache_aware");
  spec.space = "cache_threshold=0:1,balance_abs=1000";
  spec.budget = 4;  // the coarsest grid over cache_threshold and balance_rel
  spec.json_path = out;
  TuneResult fresh = route_tune(t, spec);
  TraceSplit split = split_by_time(t, 0.5);
  CostModel cost = spec.serve.cost_model();
  ServeOptions o = spec.serve.configs(t, cost).at(0);
  o.router = {"cache_aware", fresh.default_params};
  o.cost_model = &cost;
  ServeResult planted = serve(split.tune, o);
  EXPECT_DOUBLE_EQ(planted.ttft_ms.p50, fresh.default_tune.ttft_p50_ms);
  planted.ttft_ms.p50 = 12345;
  {
    std::ofstream runs(out + ".runs");
    runs << planted.to_json() << "\n";
  }
  spec.resume = true;
  TuneResult resumed = route_tune(t, spec);
  EXPECT_DOUBLE_EQ(resumed.runs[0].tune.ttft_p50_ms, 12345);
  ASSERT_EQ(resumed.runs.size(), fresh.runs.size());
  for (size_t i = 1; i < fresh.runs.size(); ++i)
    EXPECT_EQ(resumed.runs[i].params, fresh.runs[i].params);
  EXPECT_FALSE(std::filesystem::exists(out + ".runs"));
}

TEST(RouteTune, NothingWrittenOnFailure) {
  std::string out = ::testing::TempDir() + "/route_tune_fail.json";
  {
    std::ofstream f(out);
    f << "keep me\n";
  }
  Trace one = half_shared_trace(1, 1, 2, 1000);  // too short to split
  TuneSpec spec = small_spec("cache_aware");
  spec.json_path = out;
  EXPECT_THROW(route_tune(one, spec), ConfigError);
  EXPECT_EQ(read_file(out), "keep me\n");
  EXPECT_FALSE(std::filesystem::exists(out + ".runs"));
}

TEST(RouteTune, GridAboveTheBudgetIsRefusedBeforeAnyRun) {
  // dynamo has ten knobs: its coarsest grid (two levels each) is 1,024 settings.
  std::string out = ::testing::TempDir() + "/route_tune_over_budget.json";
  std::remove(out.c_str());
  Trace t = half_shared_trace(8, 120, 4, 200'000);
  TuneSpec spec = small_spec("dynamo");
  spec.budget = 24;
  spec.json_path = out;
  try {
    route_tune(t, spec);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--budget 24"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out + ".runs"));
  // Fixing all but three knobs makes the grid fit.
  spec.space =
      "overlap_score_credit=1,overlap_score_credit_decay=0,host_cache_hit_weight=0.75,"
      "disk_cache_hit_weight=0.25,router_temperature=0,prefill_load=cluster,prefill_decay=linear";
  spec.json_path.clear();
  // 3 x 3 levels (overlap_weight, ttl_s) x 2 events; the default is one of them.
  EXPECT_EQ(route_tune(t, spec).runs.size(), 18u);
}

TEST(RouteTune, BadFlagsNameTheFlag) {
  auto error = [](auto change) {
    TuneSpec spec = small_spec("cache_aware");
    change(spec);
    try {
      spec.validate();
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error([](TuneSpec& s) { s.objective = "fast"; }).find("--objective"),
            std::string::npos);
  EXPECT_NE(error([](TuneSpec& s) { s.search = "cma"; }).find("--search"), std::string::npos);
  EXPECT_NE(error([](TuneSpec& s) { s.budget = 0; }).find("--budget"), std::string::npos);
  EXPECT_NE(error([](TuneSpec& s) { s.split = 1.5; }).find("--split"), std::string::npos);
  EXPECT_NE(error([](TuneSpec& s) { s.replicates = 0; }).find("--replicates"), std::string::npos);
  EXPECT_NE(error([](TuneSpec& s) { s.resume = true; }).find("--resume"), std::string::npos);
  EXPECT_NE(error([](TuneSpec& s) { s.serve.routers = "cache_aware,dynamo"; }).find("--router"),
            std::string::npos);
  EXPECT_NE(error([](TuneSpec& s) { s.serve.routers = "cache_aware:nope=1"; }).find("nope"),
            std::string::npos);
  EXPECT_NE(error([](TuneSpec& s) { s.serve.workers = "2,4"; }).find("--workers"),
            std::string::npos);
  EXPECT_NE(error([](TuneSpec& s) { s.serve.policies = "lru,rlt"; }).find("--policy"),
            std::string::npos);
  EXPECT_NE(error([](TuneSpec& s) { s.space = "x=1"; }).find("--space"), std::string::npos);
  EXPECT_EQ(error([](TuneSpec&) {}), "no error");
}

TEST(RouteTune, ExportCacheAware) {
  EXPECT_EQ(export_config("cache_aware",
                          "balance_abs=8,balance_rel=1.5,cache_threshold=0.25,max_tree_tokens=64",
                          "balance_abs=8,balance_rel=1.5,cache_threshold=0.25"),
            "# SGLang router (the same flags on the SGLang model gateway)\n"
            "python -m sglang_router.launch_router --policy cache_aware --cache-threshold 0.25 "
            "--balance-abs-threshold 8 --balance-rel-threshold 1.5\n"
            "# kvpolicy flags\n"
            "--router cache_aware:balance_abs=8,balance_rel=1.5,cache_threshold=0.25\n");
}

TEST(RouteTune, ExportDynamo) {
  EXPECT_EQ(export_config("dynamo", "events=approx,overlap_weight=2,ttl_s=60",
                          "overlap_weight=2,events=approx,ttl_s=60"),
            "# NVIDIA Dynamo frontend, KV router\n"
            "python -m dynamo.frontend --router-mode kv --kv-overlap-score-weight 2 "
            "--no-kv-events\n"
            "# not in the export (kvpolicy's own model): ttl_s=60\n"
            "# kvpolicy flags\n"
            "--router dynamo:overlap_weight=2,events=approx,ttl_s=60\n");
}

TEST(RouteTune, ExportLlmD) {
  EXPECT_EQ(export_config("llm_d", "kv_weight=0.5,prefix_weight=3,queue_weight=1",
                          "prefix_weight=3,kv_weight=0.5,queue_weight=1"),
            "# llm-d inference scheduler (EndpointPickerConfig)\n"
            "apiVersion: inference.networking.x-k8s.io/v1alpha1\n"
            "kind: EndpointPickerConfig\n"
            "plugins:\n"
            "- type: single-profile-handler\n"
            "- type: prefix-cache-scorer\n"
            "- type: kv-cache-utilization-scorer\n"
            "- type: queue-scorer\n"
            "- type: max-score-picker\n"
            "schedulingProfiles:\n"
            "- name: default\n"
            "  plugins:\n"
            "  - pluginRef: prefix-cache-scorer\n"
            "    weight: 3\n"
            "  - pluginRef: kv-cache-utilization-scorer\n"
            "    weight: 0.5\n"
            "  - pluginRef: queue-scorer\n"
            "    weight: 1\n"
            "  - pluginRef: max-score-picker\n"
            "# kvpolicy flags\n"
            "--router llm_d:prefix_weight=3,kv_weight=0.5,queue_weight=1\n");
}

TEST(RouteTune, ExportWithoutARowIsTheKvpolicyLineOnly) {
  EXPECT_EQ(export_config("lbgr", "decay=0.5,p0=1000", "decay=0.5"),
            "# kvpolicy flags\n--router lbgr:decay=0.5\n");
}

}  // namespace
}  // namespace kvpolicy::app
