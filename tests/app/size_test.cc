// `size`: the search finds a measured capacity that meets the target while one step smaller does
// not (or says the curve is not monotone), the GPU arithmetic is the cost model's, bad options
// are errors before any work.
#include "kvpolicy/app/size.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kvpolicy/core/error.h"
#include "kvpolicy/sim/mrc.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/json_record.h"

namespace kvpolicy::app {
namespace {

Trace small_trace() { return generate_workload("conversation", "sessions=40,turns=4", 3); }

std::string cost_at_tp_label(uint32_t tp) {
  return CostModel::make("llama-3.1-8b", "h100", fmt::format("tp={},kv_dtype=auto", tp)).label();
}

SizeOptions small_options() {
  SizeOptions o;
  o.cost.model = "llama-3.1-8b";
  o.cost.gpu = "h100";
  o.workers = "1,2";
  o.router = "round_robin";
  o.policy = "lru";
  o.jobs = 2;
  return o;
}

ServeResult serve_at(const Trace& trace, const SizeOptions& o, const CostModel& cost,
                     uint32_t workers, size_t blocks) {
  ServeOptions s = o.base;
  s.workers = workers;
  s.router = {o.router, ""};
  s.policy = {o.policy, ""};
  s.capacity_blocks = blocks;
  s.cost_model = &cost;
  return serve(trace, s);
}

TEST(Size, AnswerIsMeasuredToMeetAndOneStepSmallerDoesNot) {
  Trace trace = small_trace();
  SizeOptions o = small_options();
  // Half of what a cache that never evicts reaches: reachable, and not at the floor.
  SizeOptions probe = o;
  probe.target_hit = "100%";
  SizeRun best = run_size(probe, &trace);
  ASSERT_FALSE(best.searches[0].answer.has_value());
  ASSERT_TRUE(best.searches[0].best.has_value());
  double top = best.searches[0].probes[*best.searches[0].best].result.block_hit_rate;
  ASSERT_GT(top, 0.1);
  o.target_hit = std::to_string(top * 0.6);
  SizeRun run = run_size(o, &trace);
  ASSERT_EQ(run.searches.size(), 2u);
  size_t bracketed = 0;  // searches that bisected (not answered at their floor)
  for (const SizeSearch& s : run.searches) {
    SCOPED_TRACE(testing::Message() << s.workers << " workers");
    ASSERT_TRUE(s.answer.has_value());
    const SizeProbe& a = s.probes[*s.answer];
    EXPECT_TRUE(a.meets);
    EXPECT_GE(a.result.block_hit_rate, top * 0.6);
    // Serve is deterministic: a run at the answer measures the same.
    ServeResult again = serve_at(trace, o, run.cost, s.workers, a.capacity_blocks);
    EXPECT_EQ(again.block_hits, a.result.block_hits);
    EXPECT_TRUE(run.targets.met(again));
    if (s.answer_is_floor) continue;
    ++bracketed;
    ASSERT_TRUE(s.below.has_value());
    const SizeProbe& b = s.probes[*s.below];
    EXPECT_LT(b.capacity_blocks, a.capacity_blocks);
    // One step of the tolerance (or one block) below the answer.
    EXPECT_TRUE(double(a.capacity_blocks) <= double(b.capacity_blocks) * (1 + o.tolerance) ||
                a.capacity_blocks == b.capacity_blocks + 1);
    ServeResult smaller = serve_at(trace, o, run.cost, s.workers, b.capacity_blocks);
    EXPECT_TRUE(!run.targets.met(smaller) || s.non_monotone);
    // Every probe below the answer that meets would make the answer not the smallest found.
    for (const SizeProbe& p : s.probes)
      if (p.capacity_blocks < a.capacity_blocks) EXPECT_TRUE(!p.meets || s.non_monotone);
  }
  EXPECT_GT(bracketed, 0u);
  // The replay cache's answer: LRU's stack curve, the same number mrc gives.
  EXPECT_TRUE(run.replay_asked);
  ASSERT_TRUE(run.replay_blocks.has_value());
  EXPECT_GE(run.replay_block_hit, top * 0.6);
  EXPECT_EQ(run.replay_blocks,
            lru_capacity_for_hit_rate(lru_stack_distances(trace), *run.targets.block_hit));
}

TEST(Size, ParallelSearchesGiveTheSameRows) {
  Trace trace = small_trace();
  SizeOptions o = small_options();
  o.target_token_hit = "20%";
  o.workers = "1-3";
  o.jobs = 1;
  auto one = size_rows(run_size(o, &trace));
  o.jobs = 3;
  EXPECT_EQ(size_rows(run_size(o, &trace)), one);
}

TEST(Size, AnAnswerTheGpuCannotHoldIsSearchedAgainAtTheTpThatHoldsIt) {
  Trace trace = small_trace();
  SizeOptions o = small_options();
  o.target_hit = "20%";
  o.workers = "1";
  // A reserve that leaves one H100 0.05 GB of KV (a few blocks), and 2 x H100 tens of GB.
  CostModel h100 = CostModel::make("llama-3.1-8b", "h100", "tp=1");
  o.reserve_gb_per_gpu = (0.9 * h100.gpu().mem_bytes - h100.weight_bytes()) / 1e9 - 0.05;
  SizeRun run = run_size(o, &trace);
  ASSERT_EQ(run.searches.size(), 1u);
  const SizeSearch& s = run.searches[0];
  ASSERT_TRUE(s.answer.has_value());
  EXPECT_FALSE(s.fits());
  EXPECT_GT(s.tp_needed, 1u);
  ASSERT_FALSE(s.larger_tp.empty());
  const SizeSearch& w = s.final();
  EXPECT_EQ(w.tp, s.tp_needed);
  EXPECT_EQ(w.cost_model, cost_at_tp_label(w.tp));
  ASSERT_TRUE(w.fits());
  EXPECT_TRUE(w.probes[*w.answer].meets);
  EXPECT_FALSE(run.chosen);
  EXPECT_EQ(run.wider, std::optional<size_t>(0));
  // Its rows carry their tp and the KV memory of that many GPUs.
  bool saw = false;
  for (const std::string& line : size_rows(run)) {
    JsonRecord r(line, "rows", 1);
    if (r.str("kind") != "answer" || r.num_or("tp", 0) != w.tp) continue;
    saw = true;
    EXPECT_TRUE(r.boolean("fits_gpu"));
    EXPECT_NEAR(r.num_or("gpu_kv_gb", 0), w.gpu.kv_bytes / 1e9, 1e-5);
  }
  EXPECT_TRUE(saw);
}

TEST(Size, ATtftSloOnlyALargerTpMeetsIsSearchedThere) {
  Trace trace = small_trace();
  SizeOptions o = small_options();
  o.workers = "1";
  o.base.rate = 20;  // enough load that prefill speed shows in TTFT
  // TTFT P90 with memory that never evicts, at tp=1 and tp=2: an SLO between them.
  auto p90_at = [&](uint32_t tp) {
    CostModel cost = CostModel::make("llama-3.1-8b", "h100", fmt::format("tp={}", tp))
                         .with_block_tokens(trace.block_tokens);
    return serve_at(trace, o, cost, 1, size_t(1) << 30).ttft_ms.p90;
  };
  double slow = p90_at(1), fast = p90_at(2);
  ASSERT_LT(fast, slow * 0.9);
  o.slo_ttft_p90_ms = std::sqrt(slow * fast);
  SizeRun run = run_size(o, &trace);
  const SizeSearch& s = run.searches.at(0);
  EXPECT_FALSE(s.answer);
  ASSERT_FALSE(s.larger_tp.empty());
  EXPECT_EQ(s.larger_tp[0].tp, 2u);
  const SizeSearch& w = s.final();
  ASSERT_TRUE(w.answer);
  EXPECT_LE(w.probes[*w.answer].result.ttft_ms.p90, o.slo_ttft_p90_ms);
  EXPECT_EQ(run.wider, std::optional<size_t>(0));
}

TEST(Size, UnreachableTargetIsSaidWithTheBestMeasured) {
  Trace trace = small_trace();
  SizeOptions o = small_options();
  o.target_hit = "99.9%";
  o.workers = "2";
  SizeRun run = run_size(o, &trace);
  ASSERT_EQ(run.searches.size(), 1u);
  EXPECT_FALSE(run.searches[0].answer);
  EXPECT_FALSE(run.chosen);
  auto rows = size_rows(run);
  // The answer row: not met, capacity null; the replay one out of reach too.
  bool saw_answer = false;
  for (const std::string& line : rows) {
    JsonRecord r(line, "rows", 1);
    if (r.str("kind") != "answer") continue;
    saw_answer = true;
    EXPECT_FALSE(r.boolean("meets"));
    EXPECT_NE(line.find("\"capacity_blocks\":null"), std::string::npos) << line;
  }
  EXPECT_TRUE(saw_answer);
}

TEST(Size, GpuKvMemoryIsTheCostModelsArithmetic) {
  CostModel h100 = CostModel::make("llama-3.1-8b", "h100", "tp=1");
  // Utilisation 1 and no reserve: what `kvpolicy cost-model` prints as the memory left for KV.
  GpuKvMemory all = gpu_kv_memory(h100, 1.0, 0);
  EXPECT_DOUBLE_EQ(all.kv_bytes, h100.gpu().mem_bytes - h100.weight_bytes());
  EXPECT_EQ(all.kv_blocks, h100.blocks_for_bytes(all.kv_bytes));
  GpuKvMemory g = gpu_kv_memory(h100, 0.9, 2);
  EXPECT_DOUBLE_EQ(g.kv_bytes, 0.9 * h100.gpu().mem_bytes - h100.weight_bytes() - 2e9);
  EXPECT_GT(g.kv_bytes, 40e9);  // an 8B model on an 80 GB GPU leaves tens of GB
  EXPECT_LT(g.kv_bytes, all.kv_bytes);
  CostModel tp4 = CostModel::make("llama-3.1-8b", "h100", "tp=4");
  GpuKvMemory g4 = gpu_kv_memory(tp4, 0.9, 2);
  EXPECT_DOUBLE_EQ(g4.kv_bytes, 4 * (0.9 * h100.gpu().mem_bytes - 2e9) - h100.weight_bytes());
  // The smallest power-of-two multiple of tp that holds a size.
  EXPECT_EQ(tp_that_holds(h100, g.kv_bytes, 0.9, 2), 1u);
  EXPECT_EQ(tp_that_holds(h100, g.kv_bytes + 1e9, 0.9, 2), 2u);
  EXPECT_EQ(tp_that_holds(h100, g4.kv_bytes, 0.9, 2), 4u);
  EXPECT_EQ(tp_that_holds(h100, 1e15, 0.9, 2), 0u);
  // A 70B model does not fit one GPU: no KV memory.
  GpuKvMemory big = gpu_kv_memory(CostModel::make("llama-3.1-70b", "h100", "tp=1"), 0.9, 2);
  EXPECT_LE(big.kv_bytes, 0);
  EXPECT_EQ(big.kv_blocks, 0u);
}

TEST(Size, BadOptionsAreErrorsNamingTheFlag) {
  auto expect_error = [](SizeOptions o, const std::string& words) {
    try {
      check_size_options(o);
      ADD_FAILURE() << "no error for " << words;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  SizeOptions o = small_options();
  expect_error(o, "give a target");
  o.target_hit = "30%";
  EXPECT_NO_THROW(check_size_options(o));
  SizeOptions bad = o;
  bad.target_hit = "150%";
  expect_error(bad, "--target-hit");
  bad.target_hit = "abc";
  expect_error(bad, "--target-hit");
  bad = o;
  bad.target_token_hit = "-1";
  expect_error(bad, "--target-token-hit");
  bad = o;
  bad.workers = "0";
  expect_error(bad, "--workers");
  bad.workers = "4-2";
  expect_error(bad, "--workers");
  bad.workers = "";
  expect_error(bad, "--workers");
  bad = o;
  bad.router = "round_robin,cache_aware";
  expect_error(bad, "one router");
  bad = o;
  bad.policy = "lru,fifo";
  expect_error(bad, "one policy");
  bad = o;
  bad.gpu_memory_utilization = 1.5;
  expect_error(bad, "--gpu-memory-utilization");
  bad = o;
  bad.tp = 4;
  bad.max_tp = 2;
  expect_error(bad, "--max-tp");
  bad = o;
  bad.tolerance = 0;
  expect_error(bad, "--tolerance");
  bad = o;
  bad.slo_ttft_p90_ms = -5;
  expect_error(bad, "--slo-ttft-p90");
  EXPECT_THROW(check_size_options([&] {
                 SizeOptions r = o;
                 r.router = "nope";
                 return r;
               }()),
               ConfigError);
  EXPECT_EQ(parse_worker_counts("1-3,8,2"), (std::vector<uint32_t>{1, 2, 3, 8}));
}

}  // namespace
}  // namespace kvpolicy::app
