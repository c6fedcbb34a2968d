// Serve mode against what must hold of any queueing simulation: the M/D/1 mean wait, Little's
// law, every request completing exactly once (preempted or not), replay mode's hit rates when
// nothing interferes, determinism, and clear errors for bad configurations.
#include "kvpolicy/serve/serve.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <numeric>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/percentile.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/generators.h"
#include "support/linear_model.h"
#include "support/random_workload.h"
#include "support/serve_errors.h"

namespace kvpolicy {
namespace {

// n requests of `prompt_blocks` fresh blocks each (nothing is ever shared), Poisson arrivals.
Trace unique_prompts(size_t n, uint32_t prompt_blocks, double rate, uint32_t output_tokens,
                     uint64_t seed) {
  Trace t;
  t.name = "unique";
  t.block_tokens = 16;
  Rng rng(seed);
  double now = 0;
  std::vector<uint64_t> ids(prompt_blocks);
  for (size_t r = 0; r < n; ++r) {
    for (uint32_t j = 0; j < prompt_blocks; ++j) ids[j] = r * prompt_blocks + j + 1;
    t.add_request(static_cast<Time>(now * 1e6), ids, prompt_blocks * 16, output_tokens);
    now += rng.exponential(1.0 / rate);
  }
  return t;
}

using testing::linear_model;

Trace conversations(uint32_t sessions, double session_rate, uint64_t seed) {
  ConversationParams cp;
  cp.sessions = sessions;
  cp.session_rate = session_rate;
  return generate_conversation(cp, seed);
}

void expect_littles_law(const ServeResult& r, const RequestTimeline& t) {
  double sojourn = 0;
  for (size_t i = 0; i < t.arrival.size(); ++i) sojourn += t.finish[i] - t.arrival[i];
  EXPECT_NEAR(r.total_sojourn_s, sojourn, 1e-6 * sojourn);
  // L = lambda W: the time-average in the system is the departures' summed sojourn / time.
  EXPECT_NEAR(r.mean_in_system * r.makespan_s, sojourn, 1e-6 * sojourn);
}

void expect_each_completes_once(const ServeResult& r, const RequestTimeline& t) {
  for (size_t i = 0; i < t.completions.size(); ++i) {
    EXPECT_LE(t.completions[i], 1u) << "request " << i;
    EXPECT_GE(t.finish[i], t.arrival[i]) << "request " << i;
  }
  uint64_t completed = std::accumulate(t.completions.begin(), t.completions.end(), uint64_t{0});
  EXPECT_EQ(completed, r.requests);
  EXPECT_EQ(completed + r.rejected, t.completions.size());
}

TEST(Serve, SingleServerMatchesMD1MeanWait) {
  // One request at a time (max_running 1), fixed prefill, one output token: service is
  // deterministic, D = 64 tokens x 0.1 ms. M/D/1: Wq = rho D / (2 (1 - rho)).
  const double d = 6.4e-3, rho = 0.7;
  Trace trace = unique_prompts(200000, 4, rho / d, 1, 7);
  CostModel cost = linear_model(0.1, 1.0);
  ServeOptions o;
  o.capacity_blocks = 1 << 20;
  o.max_running = 1;
  o.cost_model = &cost;
  ServeResult r = serve(trace, o);
  ASSERT_EQ(r.requests, trace.size());
  double expected_ms = rho * d / (2 * (1 - rho)) * 1e3;
  // Sampling error of 200k M/D/1 waits at rho = 0.7 is about 1 %; 4 % leaves room.
  EXPECT_NEAR(r.queue_wait_ms.mean, expected_ms, 0.04 * expected_ms);
  EXPECT_NEAR(r.ttft_ms.mean, expected_ms + d * 1e3, 0.04 * expected_ms);
  EXPECT_NEAR(r.per_worker[0].busy_seconds / r.makespan_s, rho, 0.02);
}

TEST(Serve, LittlesLawAndCompletionOnEveryConfiguration) {
  ConversationParams cp;
  cp.sessions = 150;
  cp.session_rate = 4;
  cp.think_mean_s = 2;
  Trace trace = generate_conversation(cp, 3);
  for (const char* router : {"round_robin", "least_loaded", "cache_aware", "lbgr"}) {
    for (size_t capacity : {size_t{600}, size_t{100000}}) {
      for (uint32_t clients : {0u, 8u}) {
        ServeOptions o;
        o.workers = 3;
        o.router = parse_router_spec(router);
        o.capacity_blocks = capacity;
        o.clients = clients;
        o.check_victims = true;
        RequestTimeline t;
        ServeResult r = serve(trace, o, &t);
        SCOPED_TRACE(std::string(router) + " capacity " + std::to_string(capacity) + " clients " +
                     std::to_string(clients));
        expect_littles_law(r, t);
        expect_each_completes_once(r, t);
        for (size_t i = 0; i < t.arrival.size(); ++i) {
          if (t.completions[i] == 0) {
            // Rejected: its prompt and answer cannot fit in a worker's whole memory.
            uint64_t answer = (trace.output_tokens[i] + 15) / 16;
            EXPECT_GT(trace.prompt_blocks(i) + answer, capacity) << "request " << i;
            continue;
          }
          EXPECT_GE(t.admitted[i], t.arrival[i]);
          EXPECT_GE(t.first_token[i], t.admitted[i]);
          EXPECT_GE(t.finish[i], t.first_token[i]);
        }
      }
    }
  }
}

// Every registered router (with its defaults), so that a new one is checked without being
// listed: one small configuration with a cache that overflows.
TEST(Serve, LittlesLawAndCompletionForEveryRegisteredRouter) {
  ConversationParams cp;
  cp.sessions = 60;
  cp.session_rate = 4;
  cp.think_mean_s = 2;
  Trace trace = generate_conversation(cp, 5);
  for (const RouterInfo& info : RouterRegistry::instance().all()) {
    SCOPED_TRACE(info.name);
    ServeOptions o;
    o.workers = 3;
    o.router = parse_router_spec(info.name);
    o.capacity_blocks = 600;
    o.check_victims = true;
    RequestTimeline t;
    ServeResult r = serve(trace, o, &t);
    expect_littles_law(r, t);
    expect_each_completes_once(r, t);
  }
}

TEST(Serve, PreemptionNeverLosesARequest) {
  // Long answers in little memory: running requests outgrow it and are preempted.
  ConversationParams cp;
  cp.sessions = 120;
  cp.session_rate = 50;
  cp.answer_tokens_mean = 1500;
  Trace trace = generate_conversation(cp, 5);
  ServeOptions o;
  o.capacity_blocks = 2500;
  o.check_victims = true;
  RequestTimeline t;
  ServeResult r = serve(trace, o, &t);
  EXPECT_GT(r.preemptions, 0u);
  expect_each_completes_once(r, t);
  expect_littles_law(r, t);
  EXPECT_EQ(r.requests + r.rejected, trace.size());
  uint64_t output = 0;
  for (size_t i = 0; i < trace.size(); ++i)
    if (t.completions[i]) output += std::max(1u, trace.output_tokens[i]);
  EXPECT_EQ(r.output_tokens, output);  // every token produced once, none lost to recompute
}

TEST(Serve, RejectsOnlyPromptsLargerThanMemory) {
  Trace trace = unique_prompts(50, 4, 10, 8, 1);
  Trace big = unique_prompts(1, 40, 10, 8, 2);
  trace.add_request_keys(trace.time.back() + 1, big.prompt(0), 640, 8);
  ServeOptions o;
  o.capacity_blocks = 20;
  RequestTimeline t;
  ServeResult r = serve(trace, o, &t);
  EXPECT_EQ(r.rejected, 1u);
  EXPECT_EQ(t.completions.back(), 0u);
  expect_each_completes_once(r, t);
}

TEST(Serve, OneWorkerWithoutInterferenceEqualsReplay) {
  // Requests a second or more apart (no queueing) and answers not cached: a request holds
  // exactly its prompt's blocks while it runs (one output token needs no block of its own) and
  // the policy hears the same calls at the same times as in replay, so at every capacity the
  // same blocks are cached and hit, whatever the policy.
  testing::RandomWorkloadOptions wo;
  wo.requests = 400;
  Trace trace = testing::random_workload(wo);
  for (size_t r = 0; r < trace.size(); ++r) {
    trace.output_tokens[r] = 1;
    trace.time[r] *= 10000;  // 10 ms to 10 s apart: each request is done before the next
  }
  Oracle oracle = compute_oracle(trace);
  for (const std::string& policy : PolicyRegistry::instance().names()) {
    for (size_t capacity : {size_t{60}, size_t{120}, size_t{100000}}) {
      ReplayResult replayed = replay(trace, &oracle, parse_policy_spec(policy), capacity);
      // Every prompt fits one chunk: chunked allocation places it in one cycle, as whole does.
      for (const char* allocation : {"chunked", "whole"}) {
        ServeOptions o;
        o.policy = parse_policy_spec(policy);
        o.capacity_blocks = capacity;
        o.cache_outputs = false;
        o.check_victims = true;
        o.allocation = allocation;
        ServeResult served = serve(trace, o);
        SCOPED_TRACE(policy + " at " + std::to_string(capacity) + ", " + allocation);
        EXPECT_EQ(served.block_hits, replayed.block_hits);
        EXPECT_EQ(served.block_accesses, replayed.block_accesses);
      }
    }
  }
}

TEST(Serve, AnswersAreReusedByTheNextTurn) {
  ConversationParams cp;
  cp.sessions = 50;
  Trace trace = generate_conversation(cp, 9);
  ServeOptions o;
  o.capacity_blocks = 1 << 20;
  o.time_scale = 1e3;
  o.cache_outputs = false;
  ServeResult without = serve(trace, o);
  o.cache_outputs = true;
  ServeResult with = serve(trace, o);
  ReplayResult replayed = replay(trace, nullptr, {"lru", ""}, 1 << 20);
  EXPECT_EQ(without.block_hits, replayed.block_hits);
  // Turn k+1 quotes turn k's answer: cached answers are hits replay mode cannot see.
  EXPECT_GT(with.block_hits, without.block_hits);
}

TEST(Serve, SameSeedSameResult) {
  Trace trace = conversations(80, 10, 4);
  ServeOptions o;
  o.workers = 4;
  o.router = {"random", ""};
  o.policy = {"rlt", ""};
  o.capacity_blocks = 800;
  ServeResult a = serve(trace, o), b = serve(trace, o);
  a.sim_seconds = b.sim_seconds = 0;
  EXPECT_EQ(a.to_json(), b.to_json());
  o.seed = 2;
  ServeResult c = serve(trace, o);
  c.sim_seconds = 0;
  EXPECT_NE(a.to_json(), c.to_json());
}

TEST(Serve, ClosedLoopOneClientNeverOverlaps) {
  ConversationParams cp;
  cp.sessions = 20;
  Trace trace = generate_conversation(cp, 2);
  ServeOptions o;
  o.capacity_blocks = 1 << 16;
  o.clients = 1;
  o.think_time_s = 0.5;
  RequestTimeline t;
  ServeResult r = serve(trace, o, &t);
  ASSERT_EQ(r.requests, trace.size());
  std::vector<size_t> order(trace.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return t.arrival[a] < t.arrival[b]; });
  for (size_t k = 1; k < order.size(); ++k)
    EXPECT_NEAR(t.arrival[order[k]], t.finish[order[k - 1]] + 0.5, 1e-9);
  EXPECT_NEAR(r.mean_in_system * r.makespan_s, r.total_sojourn_s, 1e-6 * r.total_sojourn_s);
}

// Replicates: each arrival is delayed by at most the jitter, in the trace's order, the same for
// the same seed and different for another; a key of their own (resume keeps them apart).
TEST(Serve, ArrivalJitterDelaysEachArrivalWithinItsBoundInOrder) {
  Trace trace = conversations(60, 20, 3);
  ServeOptions o;
  o.workers = 2;
  o.capacity_blocks = 1 << 14;
  RequestTimeline as_traced, jittered, again, other;
  ServeResult base = serve(trace, o, &as_traced);
  o.arrival_jitter_s = 0.05;
  ServeResult a = serve(trace, o, &jittered);
  serve(trace, o, &again);
  o.seed = 2;
  serve(trace, o, &other);
  EXPECT_EQ(jittered.arrival, again.arrival);
  EXPECT_NE(jittered.arrival, other.arrival);
  double moved = 0;
  for (size_t r = 0; r < trace.size(); ++r) {
    EXPECT_GE(jittered.arrival[r], as_traced.arrival[r] - 1e-6) << r;
    // delayed by its own share, or held back behind the request before it
    double bound = as_traced.arrival[r] + 0.05;
    if (r) bound = std::max(bound, jittered.arrival[r - 1]);
    EXPECT_LE(jittered.arrival[r], bound + 1e-6) << r;
    if (r) EXPECT_GE(jittered.arrival[r], jittered.arrival[r - 1]) << r;
    moved += jittered.arrival[r] - as_traced.arrival[r];
  }
  EXPECT_GT(moved / double(trace.size()), 0.01);  // about half the jitter on average
  EXPECT_NE(base.key(), a.key());
  o.arrival_jitter_s = 0;
  o.seed = 1;
  EXPECT_EQ(base.key(), serve(trace, o).key());  // results without jitter keep their key
}

TEST(Serve, TtftOfALoneRequestIsItsPrefill) {
  Trace trace = unique_prompts(1, 10, 1, 5, 1);
  CostModel cost = linear_model(0.1, 2.0);
  ServeOptions o;
  o.capacity_blocks = 100;
  o.cost_model = &cost;
  ServeResult r = serve(trace, o);
  EXPECT_NEAR(r.ttft_ms.mean, 16.0, 1e-9);           // 160 tokens x 0.1 ms
  EXPECT_NEAR(r.e2e_ms.mean, 16.0 + 4 * 2.0, 1e-9);  // then 4 decode steps of 2 ms
  EXPECT_NEAR(r.tpot_ms.mean, 2.0, 1e-9);
}

// The TTFT's median and P99 intervals are the completed requests' TTFTs at the ranks of the
// order-statistic interval (core/percentile.h), bracketing the percentiles; with fewer than 368
// requests the P99 has no upper end, written as null and read back as +infinity.
TEST(Serve, TtftIntervalsAreTheTtftsAtTheIntervalsRanks) {
  CostModel cost = linear_model(0.1, 2.0);
  for (size_t n : {100u, 600u}) {
    SCOPED_TRACE(n);
    Trace trace = unique_prompts(n, 10, 40, 5, 3);  // 40 requests/s against 16 ms prefills
    ServeOptions o;
    o.capacity_blocks = 4000;
    o.cost_model = &cost;
    RequestTimeline t;
    ServeResult r = serve(trace, o, &t);
    ASSERT_EQ(r.requests, n);
    std::vector<double> ttft;
    for (size_t i = 0; i < n; ++i) ttft.push_back((t.first_token[i] - t.arrival[i]) * 1e3);
    std::sort(ttft.begin(), ttft.end());
    auto at = [&](size_t rank) {
      return rank > n ? std::numeric_limits<double>::infinity() : ttft[rank - 1];
    };
    const RankInterval median = percentile_rank_interval(n, 50),
                       tail = percentile_rank_interval(n, 99);
    EXPECT_NEAR(r.ttft_ms.p50_low, at(median.low), 1e-6);
    EXPECT_NEAR(r.ttft_ms.p50_high, at(median.high), 1e-6);
    EXPECT_NEAR(r.ttft_ms.p99_low, at(tail.low), 1e-6);
    EXPECT_LE(r.ttft_ms.p50_low, r.ttft_ms.p50);
    EXPECT_GE(r.ttft_ms.p50_high, r.ttft_ms.p50);
    EXPECT_LE(r.ttft_ms.p99_low, r.ttft_ms.p99);
    EXPECT_GE(r.ttft_ms.p99_high, r.ttft_ms.p99);
    ServeResult back = parse_serve_result(r.to_json(), "row", 1);
    if (n < 368) {
      EXPECT_TRUE(std::isinf(r.ttft_ms.p99_high));
      EXPECT_NE(r.to_json().find("\"ttft_p99_high_ms\":null"), std::string::npos);
      EXPECT_TRUE(std::isinf(back.ttft_ms.p99_high));
    } else {
      EXPECT_NEAR(r.ttft_ms.p99_high, at(tail.high), 1e-6);
      EXPECT_NEAR(back.ttft_ms.p99_high, r.ttft_ms.p99_high, 1e-3);
    }
    EXPECT_NEAR(back.ttft_ms.p99_low, r.ttft_ms.p99_low, 1e-3);
  }
}

TEST(Serve, BadConfigurationsGetOneClearError) {
  Trace trace = unique_prompts(10, 2, 1, 1, 1);
  auto fails = [&](auto edit, const std::string& needle) {
    ServeOptions o;
    o.capacity_blocks = 100;
    edit(o);
    testing::expect_serve_refuses(trace, o, needle);
  };
  fails([](ServeOptions& o) { o.workers = 0; }, "workers");
  fails([](ServeOptions& o) { o.rate = -1; }, "rate");
  fails([](ServeOptions& o) { o.max_batch_tokens = 8; }, "below one block");
  fails([](ServeOptions& o) { o.router = {"nope", ""}; }, "unknown router");
  fails([](ServeOptions& o) { o.policy = {"nope", ""}; }, "unknown policy");
  fails([](ServeOptions& o) { o.capacity_blocks = 0; }, "at least one KV block");
  fails([](ServeOptions& o) { o.arrival_jitter_s = -1; }, "--arrival-jitter");
  fails(
      [](ServeOptions& o) {
        o.arrival_jitter_s = 0.1;
        o.clients = 2;
      },
      "closed loop");
  EXPECT_THROW(CostModel::make("llama-3.1-8b", "tpu"), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
