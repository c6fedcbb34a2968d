// Serve mode's skipped decode-only stretches against the stepped loop (ServeOptions::stepped):
// every result field but the wall time and every request's timeline the same doubles, on
// generated and real traces, every kind of router, open and closed loop, small memories that
// preempt, answers cached or not (docs/serve.md, "Speed").
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <utility>

#include "kvpolicy/cache/tier_store.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/links.h"
#include "kvpolicy/serve/serve.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/trace.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy {
namespace {

void expect_same_latency(const LatencyStats& a, const LatencyStats& b, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.mean, b.mean);
  EXPECT_EQ(a.p50, b.p50);
  EXPECT_EQ(a.p90, b.p90);
  EXPECT_EQ(a.p95, b.p95);
  EXPECT_EQ(a.p99, b.p99);
  EXPECT_EQ(a.max, b.max);
}

// Every field of ServeResult but sim_seconds (doubles compared with ==: bit-identical).
void expect_same_result(const ServeResult& a, const ServeResult& b) {
  EXPECT_EQ(a.requests, b.requests);
  EXPECT_EQ(a.rejected, b.rejected);
  EXPECT_EQ(a.block_accesses, b.block_accesses);
  EXPECT_EQ(a.block_hits, b.block_hits);
  EXPECT_EQ(a.prompt_tokens, b.prompt_tokens);
  EXPECT_EQ(a.token_hits, b.token_hits);
  EXPECT_EQ(a.evictions, b.evictions);
  EXPECT_EQ(a.block_hit_rate, b.block_hit_rate);
  EXPECT_EQ(a.token_hit_rate, b.token_hit_rate);
  EXPECT_EQ(a.slo_violation_rate, b.slo_violation_rate);
  EXPECT_EQ(a.policy_stats, b.policy_stats);
  EXPECT_EQ(a.preemptions, b.preemptions);
  EXPECT_EQ(a.output_tokens, b.output_tokens);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.makespan_s, b.makespan_s);
  EXPECT_EQ(a.throughput_rps, b.throughput_rps);
  EXPECT_EQ(a.output_tokens_per_s, b.output_tokens_per_s);
  EXPECT_EQ(a.mean_in_system, b.mean_in_system);
  EXPECT_EQ(a.total_sojourn_s, b.total_sojourn_s);
  expect_same_latency(a.queue_wait_ms, b.queue_wait_ms, "queue wait");
  expect_same_latency(a.ttft_ms, b.ttft_ms, "ttft");
  expect_same_latency(a.tpot_ms, b.tpot_ms, "tpot");
  expect_same_latency(a.e2e_ms, b.e2e_ms, "e2e");
  ASSERT_EQ(a.per_worker.size(), b.per_worker.size());
  for (size_t w = 0; w < a.per_worker.size(); ++w) {
    SCOPED_TRACE("worker " + std::to_string(w));
    EXPECT_EQ(a.per_worker[w].requests, b.per_worker[w].requests);
    EXPECT_EQ(a.per_worker[w].block_accesses, b.per_worker[w].block_accesses);
    EXPECT_EQ(a.per_worker[w].block_hits, b.per_worker[w].block_hits);
    EXPECT_EQ(a.per_worker[w].preemptions, b.per_worker[w].preemptions);
    EXPECT_EQ(a.per_worker[w].evictions, b.per_worker[w].evictions);
    EXPECT_EQ(a.per_worker[w].busy_seconds, b.per_worker[w].busy_seconds);
  }
  EXPECT_EQ(a.router_stats, b.router_stats);
  // The configuration echoed: the same JSON once the wall time is equal.
  ServeResult x = a, y = b;
  x.sim_seconds = y.sim_seconds = 0;
  EXPECT_EQ(x.to_json(), y.to_json());
}

void expect_same_timeline(const RequestTimeline& a, const RequestTimeline& b) {
  EXPECT_EQ(a.arrival, b.arrival);
  EXPECT_EQ(a.admitted, b.admitted);
  EXPECT_EQ(a.first_token, b.first_token);
  EXPECT_EQ(a.finish, b.finish);
  EXPECT_EQ(a.worker, b.worker);
  EXPECT_EQ(a.completions, b.completions);
}

// Little's law and every request completing once (or rejected), on the skipping run.
void expect_sound(const ServeResult& r, const RequestTimeline& t) {
  double sojourn = 0;
  for (size_t i = 0; i < t.arrival.size(); ++i) {
    EXPECT_LE(t.completions[i], 1u) << "request " << i;
    EXPECT_GE(t.finish[i], t.arrival[i]) << "request " << i;
    sojourn += t.finish[i] - t.arrival[i];
  }
  EXPECT_NEAR(r.total_sojourn_s, sojourn, 1e-6 * sojourn);
  EXPECT_NEAR(r.mean_in_system * r.makespan_s, sojourn, 1e-6 * sojourn);
  uint64_t completed = std::accumulate(t.completions.begin(), t.completions.end(), uint64_t{0});
  EXPECT_EQ(completed, r.requests);
  EXPECT_EQ(completed + r.rejected, t.completions.size());
}

// Runs `o` skipping and stepping; returns the skipping run's result.
ServeResult expect_same_as_stepped(const Trace& trace, ServeOptions o) {
  o.stepped = true;
  RequestTimeline stepped_t, fast_t;
  ServeResult stepped = serve(trace, o, &stepped_t);
  o.stepped = false;
  ServeResult fast = serve(trace, o, &fast_t);
  expect_same_result(stepped, fast);
  expect_same_timeline(stepped_t, fast_t);
  expect_sound(fast, fast_t);
  return fast;
}

const char* const kRouters[] = {
    "round_robin", "least_loaded",     "cache_aware", "lbgr",
    "dynamo",      "session_affinity", "llm_d",       "dynamo:events=approx"};

TEST(ServeSpeed, SkippingEqualsSteppingOnConversations) {
  ConversationParams cp;
  cp.sessions = 120;
  cp.session_rate = 6;
  cp.think_mean_s = 2;
  Trace trace = generate_conversation(cp, 11);
  for (const char* router : kRouters)
    for (uint32_t clients : {0u, 6u})
      for (bool cache_outputs : {true, false}) {
        SCOPED_TRACE(std::string(router) + " clients " + std::to_string(clients) +
                     (cache_outputs ? " cached answers" : " no cached answers"));
        ServeOptions o;
        o.workers = 3;
        o.router = parse_router_spec(router);
        o.capacity_blocks = 3000;
        o.clients = clients;
        o.cache_outputs = cache_outputs;
        expect_same_as_stepped(trace, o);
      }
}

TEST(ServeSpeed, SkippingEqualsSteppingWhenMemoryPreempts) {
  // Long answers in small memories: decodes need new blocks all the time and preempt.
  ConversationParams cp;
  cp.sessions = 50;
  cp.session_rate = 40;
  cp.answer_tokens_mean = 1200;
  Trace trace = generate_conversation(cp, 5);
  for (const char* router : {"round_robin", "least_loaded", "cache_aware", "lbgr"})
    for (size_t capacity : {size_t{500}, size_t{1200}})
      for (uint32_t clients : {0u, 12u}) {
        SCOPED_TRACE(std::string(router) + " capacity " + std::to_string(capacity) + " clients " +
                     std::to_string(clients));
        ServeOptions o;
        o.workers = 2;
        o.router = parse_router_spec(router);
        o.capacity_blocks = capacity;
        o.clients = clients;
        o.max_running = 24;
        o.check_victims = true;
        ServeResult r = expect_same_as_stepped(trace, o);
        if (capacity == 500 && clients == 0) EXPECT_GT(r.preemptions, 0u);
      }
}

TEST(ServeSpeed, SkippingEqualsSteppingWithEveryIssue37Feature) {
  // Whole allocation, prefill/decode pools (KV arrivals and freed prefill memory end a stretch)
  // and memory tiers (reads charged at admission), in memories small enough to preempt.
  ConversationParams cp;
  cp.sessions = 50;
  cp.session_rate = 40;
  cp.answer_tokens_mean = 600;
  Trace trace = generate_conversation(cp, 7);
  for (const char* allocation : {"whole", "chunked"})
    for (bool pd : {false, true})
      for (bool tiers : {false, true})
        for (size_t capacity : {size_t{500}, size_t{1500}}) {
          SCOPED_TRACE(std::string(allocation) + (pd ? " P/D" : "") + (tiers ? " tiers" : "") +
                       " capacity " + std::to_string(capacity));
          ServeOptions o;
          o.workers = 3;
          o.router = parse_router_spec("cache_aware");
          o.capacity_blocks = capacity;
          o.allocation = allocation;
          o.max_running = 24;
          o.check_victims = true;
          if (pd) {
            o.prefill_workers = 1;
            o.decode_workers = 2;
          }
          if (tiers) {
            TierSpec dram;
            dram.name = "dram";
            dram.capacity_blocks = 2 * capacity;
            dram.policy = parse_policy_spec("lru");
            dram.admission = parse_admission("all", "dram");
            dram.link = find_link("pcie4");
            o.tiers = {dram};
          }
          expect_same_as_stepped(trace, o);
        }
}

TEST(ServeSpeed, SkippingEqualsSteppingOnGeneratedKinds) {
  // The generators of `trace generate`, with a linear cost model whose decode step grows with
  // the context, one with a fixed overhead per pass and one with free decodes, and a token budget
  // that a full batch of decodes can exhaust.
  CostModel::Options lo;
  lo.block_tokens = 16;
  CostModel linear = CostModel::linear(2, 0.05, 1e-6, 8, 1e-4, 131072, lo);
  CostModel with_overhead = CostModel::make("llama-3.1-8b", "h100", "overhead_ms=3");
  // Decodes that take no time: a stretch's iterations all end when it starts.
  CostModel free_decode = CostModel::linear(1, 0.05, 0, 0, 0, 131072, lo);
  const std::pair<const char*, const char*> kinds[] = {
      {"gsp", "groups=16,prompts=20,output_tokens=300,rate=8"},
      {"conversation", "sessions=150,session_rate=5,think_s=3"},
      {"zipf", "requests=600,rate=200"}};
  for (auto [kind, params] : kinds) {
    Trace trace = generate_workload(kind, params, 3);
    for (const CostModel* cost : {&linear, &with_overhead, &free_decode})
      for (const char* router : {"least_loaded", "cache_aware", "lbgr"}) {
        SCOPED_TRACE(std::string(kind) + " " + router + " " + cost->label());
        ServeOptions o;
        o.workers = 4;
        o.router = parse_router_spec(router);
        o.capacity_blocks = 4000;
        o.cost_model = cost;
        o.max_batch_tokens = 64;  // a batch of 64 decodes leaves no budget
        o.max_running = 80;
        expect_same_as_stepped(trace, o);
      }
  }
}

TEST(ServeSpeed, SkippingEqualsSteppingOnMooncake) {
  const char* dir = std::getenv("KVPOLICY_DATA");
  std::string path =
      dir ? std::string(dir) + "/mooncake-conversation/conversation_trace.jsonl" : std::string();
  if (path.empty() || !std::filesystem::exists(path))
    GTEST_SKIP() << "KVPOLICY_DATA does not hold the Mooncake trace";
  ReadOptions ro;
  ro.max_requests = 2500;
  Trace trace = read_trace(path, "mooncake", ro);
  infer_sessions(trace);
  CostModel cost = CostModel::make("llama-3.1-8b", "h100");
  for (const char* router : kRouters)
    for (uint32_t clients : {0u, 40u}) {
      SCOPED_TRACE(std::string(router) + " clients " + std::to_string(clients));
      ServeOptions o;
      o.workers = 4;
      o.router = parse_router_spec(router);
      o.cost_model = &cost;
      o.capacity_blocks = 600;  // 512-token blocks: a few dozen long prompts
      o.clients = clients;
      expect_same_as_stepped(trace, o);
    }
}

}  // namespace
}  // namespace kvpolicy
