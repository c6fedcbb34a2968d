#include "bench_serve.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "common.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/route/router.h"
#include "kvpolicy/sim/sim.h"

namespace kvpolicy::cli {

// Every (router, policy), one serve() each on this thread, timed around the whole call (the
// workload's sequences are built inside it, the metrics after the event loop).
ServeBench bench_serve(const Trace& trace, size_t copies, const BenchArgs& args) {
  const bool quick = args.quick;
  ServeBench b;
  b.stepped = args.serve_stepped;
  b.done = true;
  b.trace = trace.name;
  b.copies = copies;
  b.requests = trace.size();
  b.block_accesses = trace.num_block_accesses();
  CostModel cost = CostModel::make(kServeModel, kServeGpu).with_block_tokens(trace.block_tokens);
  b.cost_model = cost.label();
  b.capacity_blocks = cost.blocks_for_bytes(kServeGpuBytes);
  // The budget holds for every router: the full section runs every online one in the registry.
  std::vector<std::string> routers =
      quick ? std::vector<std::string>{"round_robin", "cache_aware"} : online_router_names();
  if (!args.serve_routers.empty()) routers = split_list(args.serve_routers);
  std::vector<std::string> policies =
      quick ? std::vector<std::string>{"lru"} : std::vector<std::string>{"lru", "rlt"};
  std::vector<ServeBenchRow> plan;
  for (const std::string& router : routers)
    for (const std::string& policy : policies) {
      ServeBenchRow row;
      row.router = router;
      row.policy = policy;
      plan.push_back(row);
    }
  for (const std::string& w : split_list(args.serve_workers)) {
    uint32_t workers = 0;
    try {
      workers = static_cast<uint32_t>(std::stoul(w));
    } catch (const std::exception&) {
      throw ConfigError("bench: --serve-workers: '" + w + "' is not a worker count");
    }
    if (workers == 0 || workers > 64)
      throw ConfigError("bench: --serve-workers: " + w + " is not in 1..64");
    for (const char* router : {"round_robin", "cache_aware"})
      if (std::find(routers.begin(), routers.end(), router) != routers.end()) {
        ServeBenchRow row;
        row.router = router;
        row.policy = "lru";
        row.workers = workers;
        plan.push_back(row);
      }
  }
  Progress progress("bench serve");
  size_t total = plan.size();
  for (ServeBenchRow row : plan) {
    const std::string& router = row.router;
    const std::string& policy = row.policy;
    ServeOptions o;
    o.workers = row.workers;
    o.stepped = args.serve_stepped;
    o.router = {router, ""};
    o.policy = {policy, ""};
    o.capacity_blocks = b.capacity_blocks;
    o.cost_model = &cost;
    o.seed = args.seed;
    size_t at = b.rows.size();
    std::string label = fmt::format("({} / {} / {} workers)", router, policy, row.workers);
    o.progress = [&](double f) { progress.update((double(at) + f) / double(total), label); };
    auto t = std::chrono::steady_clock::now();
    double cpu = thread_cpu_seconds();
    try {
      row.result = serve(trace, o);
    } catch (const Error& e) {
      row.error = e.what();
    }
    row.cpu_seconds = thread_cpu_seconds() - cpu;
    row.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    b.rows.push_back(std::move(row));
  }
  return b;
}

void print_serve(const ServeBench& b) {
  fmt::print(
      "\nserve mode: {} ({} requests, {} block accesses), {} workers x {} blocks ({:.0f} GB "
      "of KV each), cost model {}; one run per row on this thread{}\n",
      b.trace, b.requests, b.block_accesses, kServeWorkers, b.capacity_blocks, kServeGpuBytes / 1e9,
      b.cost_model, b.stepped ? "; the stepped loop (--serve-stepped)" : "");
  fmt::print(
      "  {:<17} {:<6} {:>3} {:>7} {:>7} {:>9} {:>11} {:>9} {:>11} {:>8} {:>7} {:>9} {:>9} {:>7}\n",
      "router", "policy", "W", "wall s", "CPU s", "us/req", "events", "M ev/s", "iterations",
      "requests", "hit %", "TTFT ms", "p99 ms", fmt::format("< {:g} s", kServeBudgetSeconds));
  for (const ServeBenchRow& r : b.rows) {
    if (!r.error.empty()) {
      fmt::print("  {:<17} {:<6} {:>3} failed: {}\n", r.router, r.policy, r.workers, r.error);
      continue;
    }
    const ServeResult& s = r.result;
    fmt::print(
        "  {:<17} {:<6} {:>3} {:>7.2f} {:>7.2f} {:>9.2f} {:>11} {:>9.2f} {:>11} {:>8} {:>7.2f} "
        "{:>9.1f} {:>9.1f} {:>7}\n",
        r.router, r.policy, r.workers, r.wall_seconds, r.cpu_seconds,
        r.cpu_seconds / double(std::max<uint64_t>(s.requests, 1)) * 1e6, s.events,
        s.events / r.cpu_seconds / 1e6, s.iterations, s.requests, s.block_hit_rate * 100,
        s.ttft_ms.mean, s.ttft_ms.p99, r.within_budget() ? "yes" : "no");
  }
  fmt::print(
      "  (< {0:g} s: the row's thread CPU time against the budget of {0:g} s per (router, "
      "policy); us/req = CPU microseconds per request; M ev/s = events per CPU second, an event "
      "being an iteration or an arrival, skipped or not)\n",
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
    rows += fmt::format(R"({{"router":{},"policy":{},"workers":{},"wall_seconds":{:.6f},)"
                        R"("cpu_seconds":{:.6f},)"
                        R"("events":{},"events_per_second":{:.0f},"iterations":{},"requests":{},)"
                        R"("block_hit_rate":{:.6f},"ttft_mean_ms":{:.3f},"ttft_p99_ms":{:.3f},)"
                        R"("preemptions":{},"makespan_s":{:.3f},"within_budget":{}}})",
                        json_string(r.router), json_string(r.policy), r.workers, r.wall_seconds,
                        r.cpu_seconds, s.events, s.events / r.cpu_seconds, s.iterations, s.requests,
                        s.block_hit_rate, s.ttft_ms.mean, s.ttft_ms.p99, s.preemptions,
                        s.makespan_s, r.within_budget());
  }
  return fmt::format(
      R"({{"trace":{},"copies":{},"requests":{},"block_accesses":{},"workers":{},)"
      R"("capacity_blocks":{},"gpu_bytes":{:.0f},"cost_model":{},"build_seconds":{:.4f},)"
      R"("budget_seconds":{:g},"stepped":{},"rows":[{}]}})",
      json_string(b.trace), b.copies, b.requests, b.block_accesses, kServeWorkers,
      b.capacity_blocks, kServeGpuBytes, json_string(b.cost_model), b.build_seconds,
      kServeBudgetSeconds, b.stepped, rows);
}

}  // namespace kvpolicy::cli
