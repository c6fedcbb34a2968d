// P/D's second pass (docs/serve.md, "Prefill/decode disaggregation"): decode workers' prefix
// caches (a session's second turn sends only the blocks its decode worker lacks), layer-wise KV
// transfer against its closed form, and Little's law and once-only completion with every option
// on.
#include <gtest/gtest.h>

#include <numeric>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/serve/serve.h"
#include "kvpolicy/trace/generators.h"
#include "support/linear_model.h"

namespace kvpolicy {
namespace {

using testing::linear_model;

// One session: turn 1 has 10 blocks (160 tokens) and a 32-token answer (2 blocks); turn 2, at
// 1 s, quotes them and adds 3 blocks: 15 blocks, 240 tokens.
Trace two_turns() {
  Trace t;
  t.name = "turns";
  t.block_tokens = 16;
  std::vector<uint64_t> first(10), second(15);
  std::iota(first.begin(), first.end(), 1);
  std::iota(second.begin(), second.end(), 1);
  t.add_request(0, first, 160, 32, 7, 1);
  t.add_request(1'000'000, second, 240, 4, 7, 2);
  return t;
}

ServeOptions pools(const CostModel& cost, uint32_t decode_workers) {
  ServeOptions o;
  o.capacity_blocks = 200;
  o.cost_model = &cost;
  o.prefill_workers = 1;
  o.decode_workers = decode_workers;
  o.kv_link_bytes_per_s = 1e9;
  o.kv_link_latency_s = 0;
  o.check_victims = true;
  return o;
}

TEST(ServePdCache, ASecondTurnSendsOnlyTheBlocksItsDecodeWorkerLacks) {
  Trace trace = two_turns();
  CostModel cost = linear_model(0.1, 1.0);
  ServeOptions o = pools(cost, 1);
  RequestTimeline on_t, off_t;
  ServeResult on = serve(trace, o, &on_t);
  // Turn 1 sends its 10 blocks; turn 2's decode worker holds those and the answer's 2 (the
  // prefill worker still computes the answer, which it never saw), so 3 blocks cross.
  EXPECT_EQ(on.kv_transfers, 2u);
  EXPECT_EQ(on.kv_blocks_transferred, 10u + 3u);
  EXPECT_EQ(on.decode_hit_blocks, 12u);
  EXPECT_DOUBLE_EQ(on.kv_bytes_transferred, 13 * cost.kv_bytes_per_block());
  EXPECT_TRUE(on.decode_cache);
  // The prefill worker hit turn 1's prompt only: 10 of 25 prompt blocks.
  EXPECT_EQ(on.block_hits, 10u);
  // Turn 2: prefill 80 uncached tokens (8 ms), 3 blocks over the link, 3 decode steps.
  double send3 = 3 * cost.kv_bytes_per_block() / 1e9;
  EXPECT_NEAR(on_t.first_token[1], 1.0 + 8e-3, 1e-12);
  EXPECT_NEAR(on_t.finish[1], 1.0 + 8e-3 + send3 + 3e-3, 1e-12);

  o.decode_cache = false;  // the first pass: the whole context crosses every time
  ServeResult off = serve(trace, o, &off_t);
  EXPECT_EQ(off.kv_blocks_transferred, 10u + 15u);
  EXPECT_EQ(off.decode_hit_blocks, 0u);
  EXPECT_DOUBLE_EQ(off.kv_bytes_transferred, 25 * cost.kv_bytes_per_block());
  EXPECT_FALSE(off.decode_cache);
  EXPECT_NEAR(off_t.finish[1], 1.0 + 8e-3 + 15 * cost.kv_bytes_per_block() / 1e9 + 3e-3, 1e-12);
  EXPECT_EQ(off.block_hits, on.block_hits);
  EXPECT_NE(on.key(), off.key());
}

TEST(ServePdCache, ACacheAwareDecodeRouterFindsTheWorkerHoldingTheSession) {
  Trace trace = two_turns();
  CostModel cost = linear_model(0.1, 1.0);
  ServeOptions o = pools(cost, 2);
  o.decode_router = parse_router_spec("round_robin");  // turn 2 goes to the other decode worker
  RequestTimeline t;
  ServeResult rr = serve(trace, o, &t);
  EXPECT_NE(t.worker[0], t.worker[1]);
  EXPECT_EQ(rr.decode_hit_blocks, 0u);
  EXPECT_EQ(rr.kv_blocks_transferred, 25u);
  o.decode_router = parse_router_spec("cache_aware");
  ServeResult ca = serve(trace, o, &t);
  EXPECT_EQ(t.worker[0], t.worker[1]);
  EXPECT_EQ(ca.decode_hit_blocks, 12u);
  EXPECT_EQ(ca.kv_blocks_transferred, 13u);
}

TEST(ServePdCache, AnIdleDecodeWorkerTakesBackHoldsThatBlockItsQueue) {
  // 20 blocks a worker, 2 prefill workers (round robin), 1 decode worker. X (blocks 1-6) leaves
  // them cached on the decode worker. B (1-16, on X's prefill worker) is handed off at 156 ms,
  // holding 1-6 there and sending 10 blocks (arrival 177 ms); C (19 fresh blocks, on the other
  // prefill worker) arrives first, at 170 ms, to an idle decode worker, and needs all 20 blocks:
  // B's hold goes, C runs, and B, its held prefix gone, is recomputed there.
  Trace t;
  t.name = "holds";
  t.block_tokens = 16;
  std::vector<uint64_t> x(6), c(19), b(16);
  std::iota(x.begin(), x.end(), 1);
  std::iota(c.begin(), c.end(), 100);
  std::iota(b.begin(), b.end(), 1);
  t.add_request(0, x, 96, 2);
  t.add_request(100'000, c, 304, 3);
  t.add_request(140'000, b, 256, 3);
  CostModel cost = linear_model(0.1, 1.0);
  ServeOptions o = pools(cost, 1);
  o.prefill_workers = 2;
  o.capacity_blocks = 20;
  RequestTimeline tl;
  ServeResult r = serve(t, o, &tl);
  EXPECT_EQ(r.requests, 3u);
  EXPECT_EQ(r.rejected, 0u);
  EXPECT_EQ(r.decode_hit_blocks, 6u);          // B's, at its hand-off
  EXPECT_EQ(r.per_worker[2].preemptions, 1u);  // B recomputed on the decode worker
  EXPECT_GT(tl.finish[2], tl.finish[1]);
  EXPECT_NEAR(tl.first_token[2], 0.14 + 16e-3, 1e-12);
}

TEST(ServePdCache, LayerwiseTransferHidesAllButItsClosedForm) {
  // One request on a model with layers: its prefill is one iteration of P seconds; with the KV
  // taking T on the link, layer-wise streaming leaves max(T / L, T - P (L - 1) / L) exposed.
  Trace trace;
  trace.name = "one";
  trace.block_tokens = 16;
  std::vector<uint64_t> ids(10);
  std::iota(ids.begin(), ids.end(), 1);
  trace.add_request(0, ids, 160, 5);
  CostModel cost = CostModel().with_block_tokens(16);
  const double L = cost.model().layers;
  ASSERT_GT(L, 1);
  ServeOptions o = pools(cost, 1);
  o.kv_link_latency_s = 20e-6;
  RequestTimeline base;
  ServeResult first = serve(trace, o, &base);
  const double P = base.first_token[0];
  const double bytes = first.kv_bytes_transferred;
  ASSERT_GT(P, 0);
  for (double ratio : {0.1, 0.5, 3.0}) {  // T = ratio x P: both sides of T = P
    SCOPED_TRACE(ratio);
    const double T = ratio * P;
    o.kv_link_bytes_per_s = bytes / T;
    o.kv_transfer = "after-prefill";
    RequestTimeline after, layer;
    ServeResult ra = serve(trace, o, &after);
    o.kv_transfer = "layerwise";
    ServeResult rl = serve(trace, o, &layer);
    EXPECT_NEAR(ra.kv_transfer_seconds, T + 20e-6, 1e-12);
    double exposed = std::max(T / L, T - P * (L - 1) / L);
    EXPECT_NEAR(rl.kv_transfer_seconds, exposed + 20e-6, 1e-12);
    EXPECT_NEAR(layer.first_token[0], after.first_token[0], 1e-12);
    EXPECT_NEAR(after.finish[0] - layer.finish[0], T - exposed, 1e-9);
    EXPECT_EQ(rl.kv_transfer, "layerwise");
    EXPECT_NE(rl.key(), ra.key());
  }
  // A linear cost model has no layers: a clear error.
  CostModel linear = linear_model(0.1, 1.0);
  o.cost_model = &linear;
  EXPECT_THROW(serve(trace, o), ConfigError);
  o.cost_model = &cost;
  o.kv_transfer = "streamed";
  EXPECT_THROW(serve(trace, o), ConfigError);
}

TEST(ServePdCache, LayerwiseTransfersFromOneWorkerQueueOnItsLink) {
  // Two requests prefilled one after the other (P each) on one prefill worker, T = 3P each: the
  // first's last layer leaves at P/L + T; the second's (prefilled in [P, 2P]) waits for the
  // link, leaving T after that.
  Trace trace;
  trace.name = "two";
  trace.block_tokens = 16;
  std::vector<uint64_t> a(10), b(10);
  std::iota(a.begin(), a.end(), 1);
  std::iota(b.begin(), b.end(), 100);
  trace.add_request(0, a, 160, 3);
  trace.add_request(0, b, 160, 3);
  CostModel cost = CostModel().with_block_tokens(16);
  const double L = cost.model().layers;
  ServeOptions o = pools(cost, 2);
  o.kv_transfer = "layerwise";
  RequestTimeline t;
  ServeResult probe = serve(trace, o, &t);
  const double P = t.first_token[0];
  ASSERT_NEAR(t.first_token[1], 2 * P, 1e-12);  // the second arrived as the first's began
  const double T = 3 * P;
  o.kv_link_bytes_per_s = probe.kv_bytes_transferred / 2 / T;
  ServeResult r = serve(trace, o, &t);
  const double first = P / L + T, second = first + T;
  EXPECT_NEAR(r.kv_transfer_seconds, (first - P) + (second - 2 * P), 1e-9);
  EXPECT_NEAR(t.finish[1] - t.finish[0], second - first, 1e-9);  // decodes alike on D1 and D0
}

TEST(ServePdCache, LittlesLawAndCompletionOnceWithEveryOptionOn) {
  ConversationParams cp;
  cp.sessions = 120;
  cp.session_rate = 4;
  cp.think_mean_s = 2;
  cp.answer_tokens_mean = 300;
  Trace trace = generate_conversation(cp, 5);
  uint64_t saved = 0, preemptions = 0;
  for (const char* decode_router : {"least_loaded", "cache_aware"}) {
    for (size_t capacity : {size_t{500}, size_t{100000}}) {
      for (const char* allocation : {"chunked", "whole"}) {
        for (uint32_t clients : {0u, 8u}) {
          ServeOptions o;
          o.prefill_workers = 2;
          o.decode_workers = 2;
          o.router = parse_router_spec("cache_aware");
          o.decode_router = parse_router_spec(decode_router);
          o.capacity_blocks = capacity;
          o.allocation = allocation;
          o.clients = clients;
          o.kv_transfer = "layerwise";
          o.check_victims = true;
          RequestTimeline t;
          ServeResult r = serve(trace, o, &t);
          SCOPED_TRACE(std::string(decode_router) + " capacity " + std::to_string(capacity) + " " +
                       allocation + " clients " + std::to_string(clients));
          double sojourn = 0;
          for (size_t i = 0; i < trace.size(); ++i) {
            sojourn += t.finish[i] - t.arrival[i];
            EXPECT_LE(t.completions[i], 1u) << "request " << i;
          }
          EXPECT_NEAR(r.total_sojourn_s, sojourn, 1e-6 * sojourn);
          EXPECT_NEAR(r.mean_in_system * r.makespan_s, sojourn, 1e-6 * sojourn);
          uint64_t done = std::accumulate(t.completions.begin(), t.completions.end(), uint64_t{0});
          EXPECT_EQ(done, r.requests);
          EXPECT_EQ(done + r.rejected, trace.size());
          double per_block = r.capacity_gb * 1e9 / double(capacity);
          EXPECT_NEAR(r.kv_bytes_transferred, double(r.kv_blocks_transferred) * per_block,
                      1e-9 * r.kv_bytes_transferred);
          saved += r.decode_hit_blocks;
          preemptions += r.preemptions;
          ServeResult back = parse_serve_result(r.to_json(), "mem", 1);
          EXPECT_EQ(back.to_json(), r.to_json());
        }
      }
    }
  }
  EXPECT_GT(saved, 0u);
  EXPECT_GT(preemptions, 0u);
}

}  // namespace
}  // namespace kvpolicy
