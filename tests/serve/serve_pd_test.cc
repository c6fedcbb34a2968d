// Chunked allocation and prefill/decode disaggregation (docs/serve.md): hand-computed timelines
// where whole and chunked allocation differ, one request's P/D timeline against the cost
// model's sum, Little's law and every request completing exactly once with both features on,
// and clear errors for bad P/D configurations.
#include <gtest/gtest.h>

#include <numeric>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/serve/serve.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/generators.h"
#include "support/linear_model.h"
#include "support/random_workload.h"
#include "support/serve_errors.h"

namespace kvpolicy {
namespace {

using testing::linear_model;

// Requests of fresh blocks (nothing shared): (arrival s, prompt blocks, output tokens) each.
Trace fresh_requests(std::initializer_list<std::tuple<double, uint32_t, uint32_t>> requests) {
  Trace t;
  t.name = "hand";
  t.block_tokens = 16;
  uint64_t next_id = 1;
  for (auto [at, blocks, output] : requests) {
    std::vector<uint64_t> ids(blocks);
    for (auto& id : ids) id = next_id++;
    t.add_request(static_cast<Time>(at * 1e6), ids, blocks * 16, output);
  }
  return t;
}

void expect_sound(const ServeResult& r, const RequestTimeline& t) {
  double sojourn = 0;
  for (size_t i = 0; i < t.arrival.size(); ++i) {
    sojourn += t.finish[i] - t.arrival[i];
    EXPECT_LE(t.completions[i], 1u) << "request " << i;
    if (t.completions[i] == 0) continue;
    EXPECT_GE(t.admitted[i], t.arrival[i]) << "request " << i;
    EXPECT_GE(t.first_token[i], t.admitted[i]) << "request " << i;
    EXPECT_GE(t.finish[i], t.first_token[i]) << "request " << i;
  }
  EXPECT_NEAR(r.total_sojourn_s, sojourn, 1e-6 * sojourn);
  EXPECT_NEAR(r.mean_in_system * r.makespan_s, sojourn, 1e-6 * sojourn);  // L = lambda W
  uint64_t completed = std::accumulate(t.completions.begin(), t.completions.end(), uint64_t{0});
  EXPECT_EQ(completed, r.requests);
  EXPECT_EQ(completed + r.rejected, t.completions.size());
}

// A (4 blocks, 4 output tokens) at 0, B (7 blocks, 1 token) at 7 ms; 33 tokens an iteration,
// 0.1 ms a prefill token, 1 ms a decode step. A: chunks of 33 and 31 tokens end at 3.3 and
// 6.4 ms (first token), then it holds 5 blocks (the 65th token starts a block) and decodes.
struct TwoRequests {
  Trace trace = fresh_requests({{0.0, 4, 4}, {0.007, 7, 1}});
  CostModel cost = linear_model(0.1, 1.0);
  ServeResult run(const std::string& allocation, size_t capacity, RequestTimeline* t) const {
    ServeOptions o;
    o.capacity_blocks = capacity;
    o.max_batch_tokens = 33;
    o.allocation = allocation;
    o.cost_model = &cost;
    o.check_victims = true;
    return serve(trace, o, t);
  }
};

TEST(ServeAllocation, WholeCannotAdmitWhatChunkedRuns) {
  TwoRequests w;
  RequestTimeline whole, chunked;
  ServeResult rw = w.run("whole", 10, &whole), rc = w.run("chunked", 10, &chunked);
  // Whole: B's 7 blocks do not fit beside A's 5 in 10; decode-only steps end at 7.4, 8.4 and
  // 9.4 ms (A done), then B is admitted and prefills 112 tokens alone (11.2 ms).
  EXPECT_NEAR(whole.finish[0], 9.4e-3, 1e-9);
  EXPECT_NEAR(whole.admitted[1], 9.4e-3, 1e-9);
  EXPECT_NEAR(whole.first_token[1], 20.6e-3, 1e-9);
  // Chunked: B is admitted at 7.4 ms with its first chunk's 2 blocks; chunks of 32 tokens ride
  // with A's decodes (4.2 ms each: A done at 15.8 ms, B holding 4 blocks: 9 of 10), then 33 and
  // 15 tokens alone (3.3 + 1.5 ms).
  EXPECT_NEAR(chunked.admitted[1], 7.4e-3, 1e-9);
  EXPECT_NEAR(chunked.finish[0], 15.8e-3, 1e-9);
  EXPECT_NEAR(chunked.first_token[1], 20.6e-3, 1e-9);
  EXPECT_EQ(rw.preemptions, 0u);
  EXPECT_EQ(rc.preemptions, 0u);
  EXPECT_EQ(rc.allocation, "chunked");
  EXPECT_EQ(rw.allocation, "whole");
  expect_sound(rw, whole);
  expect_sound(rc, chunked);
}

TEST(ServeAllocation, ChunkedPreemptsTheNewestWhenAChunkDoesNotFit) {
  TwoRequests w;
  RequestTimeline whole, chunked;
  ServeResult rw = w.run("whole", 8, &whole), rc = w.run("chunked", 8, &chunked);
  // Whole: as at 10 blocks (B's 7 fit once A's blocks are unpinned).
  EXPECT_EQ(rw.preemptions, 0u);
  EXPECT_NEAR(whole.admitted[1], 9.4e-3, 1e-9);
  EXPECT_NEAR(whole.first_token[1], 20.6e-3, 1e-9);
  // Chunked: B's first chunk fits (5 + 2 of 8) at 7.4 ms; its second needs 4 blocks (9 of 8):
  // the newest running request, B itself, is preempted at 11.6 ms and nothing is admitted in
  // that step (A's decode alone, done at 12.6 ms). B comes back with its 2 computed blocks
  // cached and prefills 80 tokens: 33 + 33 + 14 (8 ms) from 12.6 ms.
  EXPECT_EQ(rc.preemptions, 1u);
  EXPECT_NEAR(chunked.admitted[1], 7.4e-3, 1e-9);  // the first admission
  EXPECT_NEAR(chunked.finish[0], 12.6e-3, 1e-9);
  EXPECT_NEAR(chunked.first_token[1], 20.6e-3, 1e-9);
  // B's computed chunk, found again, saves prefill (the timeline above) but is its own work:
  // hits count at the first admission only.
  EXPECT_EQ(rc.block_hits, 0u);
  expect_sound(rw, whole);
  expect_sound(rc, chunked);
}

TEST(ServeAllocation, PreemptionNeverLosesARequestEitherWay) {
  ConversationParams cp;
  cp.sessions = 120;
  cp.session_rate = 50;
  cp.answer_tokens_mean = 1500;
  Trace trace = generate_conversation(cp, 5);
  for (const char* allocation : {"chunked", "whole"}) {
    ServeOptions o;
    o.capacity_blocks = 2500;
    o.allocation = allocation;
    o.check_victims = true;
    RequestTimeline t;
    ServeResult r = serve(trace, o, &t);
    SCOPED_TRACE(allocation);
    EXPECT_GT(r.preemptions, 0u);
    expect_sound(r, t);
    uint64_t output = 0;
    for (size_t i = 0; i < trace.size(); ++i)
      if (t.completions[i]) output += std::max(1u, trace.output_tokens[i]);
    EXPECT_EQ(r.output_tokens, output);
  }
}

TEST(ServeAllocation, EveryPolicyHearsOneCycleAPromptInChunks) {
  // Prompts of up to 45 blocks in chunks of 4 blocks, one at a time, answers not cached: the
  // policy hears each prompt in one request cycle at admission, as in replay, so with memory to
  // spare every policy makes replay's hits; in little memory (blocks placed at admission take
  // memory only as chunks reach them, and are dropped if never reached) every victim is
  // checked and every request leaves once.
  testing::RandomWorkloadOptions wo;
  wo.requests = 300;
  Trace trace = testing::random_workload(wo);
  for (size_t r = 0; r < trace.size(); ++r) {
    trace.output_tokens[r] = 1;
    trace.time[r] *= 10000;
  }
  Oracle oracle = compute_oracle(trace);
  Trace long_answers = trace;
  for (auto& tokens : long_answers.output_tokens) tokens = 80;
  uint64_t preemptions = 0, evictions = 0, policies = 0;
  for (const std::string& policy : PolicyRegistry::instance().names()) {
    ++policies;
    ServeOptions o;
    o.policy = parse_policy_spec(policy);
    o.max_batch_tokens = 64;
    o.cache_outputs = false;
    o.check_victims = true;
    o.capacity_blocks = 100000;
    ServeResult served = serve(trace, o);
    ReplayResult replayed = replay(trace, &oracle, o.policy, o.capacity_blocks);
    SCOPED_TRACE(policy);
    EXPECT_EQ(served.block_hits, replayed.block_hits);
    for (size_t capacity : {size_t{50}, size_t{120}}) {
      o.capacity_blocks = capacity;
      o.time_scale = 1e-9;  // everything at once, long answers: chunks compete with decodes
      RequestTimeline t;
      ServeResult r = serve(long_answers, o, &t);
      expect_sound(r, t);
      preemptions += r.preemptions;
      evictions += r.evictions;
      o.time_scale = 1;
    }
  }
  EXPECT_GT(policies, 20u);
  EXPECT_GT(preemptions, policies);
  EXPECT_GT(evictions, 0u);
}

TEST(ServePd, OneRequestIsPrefillPlusTransferPlusDecodes) {
  Trace trace = fresh_requests({{0.0, 10, 5}});
  CostModel cost = linear_model(0.1, 2.0);
  ServeOptions o;
  o.capacity_blocks = 100;
  o.cost_model = &cost;
  o.prefill_workers = 1;
  o.decode_workers = 1;
  o.kv_link_bytes_per_s = 1e9;
  o.kv_link_latency_s = 1e-3;
  RequestTimeline t;
  ServeResult r = serve(trace, o, &t);
  ASSERT_EQ(r.requests, 1u);
  // Prefill 160 tokens x 0.1 ms; the 10 blocks of context cross the link; 4 decode steps.
  double bytes = 10 * cost.kv_bytes_per_block();
  double transfer = bytes / 1e9 + 1e-3;
  EXPECT_NEAR(t.first_token[0], 16e-3, 1e-12);
  EXPECT_NEAR(t.finish[0], 16e-3 + transfer + 4 * 2e-3, 1e-12);
  EXPECT_EQ(t.worker[0], 1u);  // it finished on the decode worker
  EXPECT_EQ(r.kv_transfers, 1u);
  EXPECT_DOUBLE_EQ(r.kv_bytes_transferred, bytes);
  EXPECT_NEAR(r.kv_transfer_seconds, transfer, 1e-12);
  EXPECT_NEAR(r.tpot_ms.mean, (transfer + 8e-3) / 4 * 1e3, 1e-9);
  EXPECT_NEAR(r.prefill_utilisation, 16e-3 / t.finish[0], 1e-9);
  EXPECT_NEAR(r.decode_utilisation, 8e-3 / t.finish[0], 1e-9);
  EXPECT_EQ(r.workers, 2u);
  // One output token: done on the prefill worker, nothing sent.
  Trace one = fresh_requests({{0.0, 10, 1}});
  ServeResult r1 = serve(one, o, &t);
  EXPECT_EQ(r1.kv_transfers, 0u);
  EXPECT_NEAR(t.finish[0], 16e-3, 1e-12);
}

TEST(ServePd, APrefillWorkerHoldsTheKvUntilItHasLeft) {
  // Two prompts of 6 blocks at 0 on one prefill worker of 10 blocks, one prefill an iteration:
  // the first's blocks stay held while its KV crosses the link, so the second is admitted only
  // when the transfer ends (its 6 blocks do not fit beside them).
  Trace trace = fresh_requests({{0.0, 6, 3}, {0.0, 6, 3}});
  CostModel cost = linear_model(0.1, 1.0);
  for (const char* allocation : {"chunked", "whole"}) {
    ServeOptions o;
    o.capacity_blocks = 10;
    o.cost_model = &cost;
    o.max_batch_tokens = 96;
    o.allocation = allocation;
    o.prefill_workers = 1;
    o.decode_workers = 1;
    o.kv_link_bytes_per_s = 1e9;
    o.kv_link_latency_s = 0;
    o.check_victims = true;
    RequestTimeline t;
    ServeResult r = serve(trace, o, &t);
    SCOPED_TRACE(allocation);
    double transfer = 6 * cost.kv_bytes_per_block() / 1e9;
    EXPECT_NEAR(t.first_token[0], 9.6e-3, 1e-12);
    EXPECT_NEAR(t.admitted[1], 9.6e-3 + transfer, 1e-12);
    EXPECT_NEAR(t.first_token[1], 9.6e-3 + transfer + 9.6e-3, 1e-12);
    EXPECT_EQ(r.rejected, 0u);
    expect_sound(r, t);
  }
}

TEST(ServePd, TransfersFromOneWorkerShareItsLink) {
  // Two requests prefilled back to back on one prefill worker: the second's KV waits for the
  // first's to leave the link.
  Trace trace = fresh_requests({{0.0, 10, 3}, {0.0, 10, 3}});
  CostModel cost = linear_model(0.001, 1.0);  // 0.16 ms a prefill, far less than a transfer
  ServeOptions o;
  o.capacity_blocks = 100;
  o.cost_model = &cost;
  o.max_batch_tokens = 160;
  o.prefill_workers = 1;
  o.decode_workers = 2;
  o.kv_link_bytes_per_s = 1e9;
  o.kv_link_latency_s = 0;
  ServeResult r = serve(trace, o);
  double send = 10 * cost.kv_bytes_per_block() / 1e9;
  // First: sent at 0.16 ms, arrives after `send`; second: sent at 0.32 ms, leaves when the
  // link frees at 0.16 ms + send.
  EXPECT_EQ(r.kv_transfers, 2u);
  EXPECT_NEAR(r.kv_transfer_seconds, send + (0.16e-3 + 2 * send - 0.32e-3), 1e-12);
}

TEST(ServePd, LittlesLawAndCompletionOnceWithPoolsOn) {
  ConversationParams cp;
  cp.sessions = 150;
  cp.session_rate = 4;
  cp.think_mean_s = 2;
  cp.answer_tokens_mean = 400;
  Trace trace = generate_conversation(cp, 3);
  uint64_t decode_preemptions = 0;  // the decode pool's recompute path is exercised
  for (const char* router : {"round_robin", "cache_aware", "lbgr"}) {
    for (const char* decode_router : {"least_loaded", "round_robin"}) {
      for (size_t capacity : {size_t{600}, size_t{100000}}) {
        for (const char* allocation : {"chunked", "whole"}) {
          for (uint32_t clients : {0u, 8u}) {
            ServeOptions o;
            o.prefill_workers = 1;
            o.decode_workers = 2;
            o.router = parse_router_spec(router);
            o.decode_router = parse_router_spec(decode_router);
            o.capacity_blocks = capacity;
            o.allocation = allocation;
            o.clients = clients;
            o.check_victims = true;
            RequestTimeline t;
            ServeResult r = serve(trace, o, &t);
            SCOPED_TRACE(std::string(router) + "/" + decode_router + " capacity " +
                         std::to_string(capacity) + " " + allocation + " clients " +
                         std::to_string(clients));
            expect_sound(r, t);
            if (capacity == 100000) EXPECT_EQ(r.rejected, 0u);
            EXPECT_GT(r.kv_transfers, 0u);
            uint64_t multi = 0;
            for (size_t i = 0; i < trace.size(); ++i)
              if (t.completions[i] && trace.output_tokens[i] > 1) {
                ++multi;
                EXPECT_GE(t.worker[i], 1u) << "request " << i << " finished off the decode pool";
              }
            EXPECT_GE(r.kv_transfers, multi);
            for (size_t w = 1; w < r.per_worker.size(); ++w)
              decode_preemptions += r.per_worker[w].preemptions;
          }
        }
      }
    }
  }
  EXPECT_GT(decode_preemptions, 0u);
}

TEST(ServePd, EveryRequestLeavesUnderMemoryPressure) {
  // Long answers in little memory: decode workers preempt and recompute, transferred KV waits
  // for memory; no worker may idle with work queued (serve() throws if a request never leaves).
  ConversationParams cp;
  cp.sessions = 80;
  cp.session_rate = 20;
  cp.answer_tokens_mean = 1500;
  Trace trace = generate_conversation(cp, 11);
  uint64_t preemptions = 0;
  for (auto [p, d] : {std::pair{1u, 1u}, {2u, 1u}, {1u, 3u}}) {
    for (size_t capacity : {size_t{200}, size_t{500}}) {
      for (const char* allocation : {"chunked", "whole"}) {
        for (uint32_t clients : {0u, 4u}) {
          ServeOptions o;
          o.prefill_workers = p;
          o.decode_workers = d;
          o.capacity_blocks = capacity;
          o.allocation = allocation;
          o.clients = clients;
          o.check_victims = true;
          RequestTimeline t;
          ServeResult r = serve(trace, o, &t);
          SCOPED_TRACE(std::to_string(p) + "P+" + std::to_string(d) + "D at " +
                       std::to_string(capacity) + " " + allocation + " clients " +
                       std::to_string(clients));
          expect_sound(r, t);
          preemptions += r.preemptions;
        }
      }
    }
  }
  EXPECT_GT(preemptions, 0u);
}

TEST(ServePd, SameSeedSameResultAndTheJsonReadsBack) {
  ConversationParams cp;
  cp.sessions = 60;
  cp.session_rate = 10;
  Trace trace = generate_conversation(cp, 4);
  ServeOptions o;
  o.prefill_workers = 2;
  o.decode_workers = 2;
  o.router = {"random", ""};
  o.decode_router = {"random", ""};
  o.capacity_blocks = 800;
  ServeResult a = serve(trace, o), b = serve(trace, o);
  a.sim_seconds = b.sim_seconds = 0;
  EXPECT_EQ(a.to_json(), b.to_json());
  ServeResult back = parse_serve_result(a.to_json(), "a.jsonl", 1);
  EXPECT_EQ(back.to_json(), a.to_json());
  EXPECT_EQ(back.key(), a.key());
  EXPECT_NE(a.key().find("pd=2+2"), std::string::npos) << a.key();
  o.seed = 2;
  ServeResult c = serve(trace, o);
  c.sim_seconds = 0;
  EXPECT_NE(a.to_json(), c.to_json());
}

TEST(ServePd, BadConfigurationsGetOneClearError) {
  Trace trace = fresh_requests({{0.0, 2, 1}});
  auto fails = [&](auto edit, const std::string& needle) {
    ServeOptions o;
    o.capacity_blocks = 100;
    edit(o);
    testing::expect_serve_refuses(trace, o, needle);
  };
  fails([](ServeOptions& o) { o.prefill_workers = 2; }, "--decode-workers");
  fails([](ServeOptions& o) { o.decode_workers = 2; }, "--prefill-workers");
  fails(
      [](ServeOptions& o) {
        o.prefill_workers = 2;
        o.decode_workers = 2;
        o.workers = 3;
      },
      "must equal");
  fails(
      [](ServeOptions& o) {
        o.prefill_workers = 1;
        o.decode_workers = 1;
        o.kv_link_bytes_per_s = 0;
      },
      "--kv-link-bandwidth");
  fails(
      [](ServeOptions& o) {
        o.prefill_workers = 1;
        o.decode_workers = 1;
        o.decode_router = {"nope", ""};
      },
      "unknown router");
  fails([](ServeOptions& o) { o.allocation = "lazy"; }, "--allocation");
}

}  // namespace
}  // namespace kvpolicy
