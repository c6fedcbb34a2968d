#include "bench_serve.h"

#include <fmt/format.h>

#include <chrono>

#include "common.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/sim/sim.h"

namespace kvpolicy::cli {

// Every (router, policy), one serve() each on this thread, timed around the whole call (the
// workload's sequences are built inside it, the metrics after the event loop).
ServeBench bench_serve(const Trace& trace, size_t copies, bool quick, uint64_t seed) {
  ServeBench b;
  b.done = true;
  b.trace = trace.name;
  b.copies = copies;
  b.requests = trace.size();
  b.block_accesses = trace.num_block_accesses();
  CostModel cost = CostModel::make(kServeModel, kServeGpu).with_block_tokens(trace.block_tokens);
  b.cost_model = cost.label();
  b.capacity_blocks = cost.blocks_for_bytes(kServeGpuBytes);
  std::vector<std::string> routers =
      quick ? std::vector<std::string>{"round_robin", "cache_aware"}
            : std::vector<std::string>{"round_robin", "least_loaded", "session_affinity",
                                       "cache_aware", "dynamo",       "llm_d",
                                       "lbgr",        "random"};
  std::vector<std::string> policies =
      quick ? std::vector<std::string>{"lru"} : std::vector<std::string>{"lru", "rlt"};
  Progress progress("bench serve");
  size_t total = routers.size() * policies.size();
  for (const std::string& router : routers)
    for (const std::string& policy : policies) {
      ServeBenchRow row;
      row.router = router;
      row.policy = policy;
      ServeOptions o;
      o.workers = kServeWorkers;
      o.router = {router, ""};
      o.policy = {policy, ""};
      o.capacity_blocks = b.capacity_blocks;
      o.cost_model = &cost;
      o.seed = seed;
      size_t at = b.rows.size();
      std::string label = "(" + router + " / " + policy + ")";
      o.progress = [&](double f) { progress.update((double(at) + f) / double(total), label); };
      auto t = std::chrono::steady_clock::now();
      double cpu = thread_cpu_seconds();
      try {
        row.result = serve(trace, o);
      } catch (const Error& e) {
        row.error = e.what();
      }
      row.cpu_seconds = thread_cpu_seconds() - cpu;
      row.wall_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
      b.rows.push_back(std::move(row));
    }
  return b;
}

void print_serve(const ServeBench& b) {
  fmt::print(
      "\nserve mode: {} ({} requests, {} block accesses), {} workers x {} blocks ({:.0f} GB "
      "of KV each), cost model {}; one run per row on this thread\n",
      b.trace, b.requests, b.block_accesses, kServeWorkers, b.capacity_blocks, kServeGpuBytes / 1e9,
      b.cost_model);
  fmt::print("  {:<17} {:<6} {:>7} {:>7} {:>11} {:>9} {:>11} {:>8} {:>7} {:>9} {:>9} {:>7}\n",
             "router", "policy", "wall s", "CPU s", "events", "M ev/s", "iterations", "requests",
             "hit %", "TTFT ms", "p99 ms", "< 10 s");
  for (const ServeBenchRow& r : b.rows) {
    if (!r.error.empty()) {
      fmt::print("  {:<17} {:<6} failed: {}\n", r.router, r.policy, r.error);
      continue;
    }
    const ServeResult& s = r.result;
    fmt::print(
        "  {:<17} {:<6} {:>7.2f} {:>7.2f} {:>11} {:>9.2f} {:>11} {:>8} {:>7.2f} {:>9.1f} {:>9.1f} "
        "{:>7}\n",
        r.router, r.policy, r.wall_seconds, r.cpu_seconds, s.events, s.events / r.cpu_seconds / 1e6,
        s.iterations, s.requests, s.block_hit_rate * 100, s.ttft_ms.mean, s.ttft_ms.p99,
        r.within_budget() ? "yes" : "no");
  }
  fmt::print(
      "  (< 10 s: the row's thread CPU time against the budget of {:g} s per (router, "
      "policy); M ev/s = events per CPU second)\n",
      kServeBudgetSeconds);
}

std::string json_serve(const ServeBench& b) {
  if (!b.done) return "null";
  std::string rows;
  for (const ServeBenchRow& r : b.rows) {
    if (!rows.empty()) rows += ",";
    if (!r.error.empty()) {
      rows += fmt::format(R"({{"router":{},"policy":{},"error":{}}})", json_string(r.router),
                          json_string(r.policy), json_string(r.error));
      continue;
    }
    const ServeResult& s = r.result;
    rows +=
        fmt::format(R"({{"router":{},"policy":{},"wall_seconds":{:.6f},"cpu_seconds":{:.6f},)"
                    R"("events":{},"events_per_second":{:.0f},"iterations":{},"requests":{},)"
                    R"("block_hit_rate":{:.6f},"ttft_mean_ms":{:.3f},"ttft_p99_ms":{:.3f},)"
                    R"("preemptions":{},"makespan_s":{:.3f},"within_budget":{}}})",
                    json_string(r.router), json_string(r.policy), r.wall_seconds, r.cpu_seconds,
                    s.events, s.events / r.cpu_seconds, s.iterations, s.requests, s.block_hit_rate,
                    s.ttft_ms.mean, s.ttft_ms.p99, s.preemptions, s.makespan_s, r.within_budget());
  }
  return fmt::format(
      R"({{"trace":{},"copies":{},"requests":{},"block_accesses":{},"workers":{},)"
      R"("capacity_blocks":{},"gpu_bytes":{:.0f},"cost_model":{},"build_seconds":{:.4f},)"
      R"("budget_seconds":{:g},"rows":[{}]}})",
      json_string(b.trace), b.copies, b.requests, b.block_accesses, kServeWorkers,
      b.capacity_blocks, kServeGpuBytes, json_string(b.cost_model), b.build_seconds,
      kServeBudgetSeconds, rows);
}

}  // namespace kvpolicy::cli
