// `kvpolicy bench`: the macro benchmark of docs/architecture.md's budgets (single core, after
// load): replay throughput of every policy on the Mooncake trace (repeated with fresh keys) and on
// a Zipf prefix workload, ratio to LRU, bytes per cached block, eviction-decision latency, trace
// load speed, and serve mode's speed (the Mooncake trace through 8 workers, per router and
// policy, in events per second).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "bench_replay.h"
#include "bench_serve.h"
#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/trace.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::cli {
namespace {

struct Timing {
  double wall = 1e300, cpu = 1e300;  // the best of the repeats, each
};

struct LoadSpeed {
  bool done = false;
  uint64_t jsonl_bytes = 0, native_bytes = 0;
  Timing jsonl, native;
};

template <typename F>
Timing best_time(int repeat, F&& f) {
  Timing best;
  for (int k = 0; k < std::max(1, repeat); ++k) {
    auto t = Clock::now();
    double cpu = thread_cpu_seconds();
    f();
    best.cpu = std::min(best.cpu, thread_cpu_seconds() - cpu);
    best.wall = std::min(best.wall, seconds_since(t));
  }
  return best;
}

void run(BenchArgs args) {
  if (args.quick && !args.repeat_given) args.repeat = 1;
  std::vector<PolicySpec> specs;
  if (args.policies.empty()) {
    for (auto& n : PolicyRegistry::instance().names()) specs.push_back({n, ""});
  } else {
    specs = parse_policy_list(args.policies);
  }
  for (auto& s : specs) PolicyRegistry::instance().get(s.name);
  // LRU first: the ratios refer to it.
  auto lru_at = std::find_if(specs.begin(), specs.end(),
                             [](const PolicySpec& s) { return s.label() == "lru"; });
  if (lru_at == specs.end()) {
    specs.insert(specs.begin(), {"lru", ""});
  } else {
    std::rotate(specs.begin(), lru_at, lru_at + 1);
  }
  const uint64_t mooncake_target = args.quick ? 1'000'000 : 5'000'000;
  const uint64_t zipf_target = args.quick ? 2'000'000 : 10'000'000;

  std::vector<WorkloadBench> results;
  LoadSpeed load;
  ServeBench serve_bench;
  std::string data = args.data;
  if (data.empty()) {
    const char* env = std::getenv("KVPOLICY_DATA");
    if (env) data = env;
  }
  std::string mooncake = data + "/mooncake-conversation/conversation_trace.jsonl";
  if (data.empty() || !std::filesystem::exists(mooncake)) {
    fmt::print("mooncake: skipped ({}); pass --data DIR or set KVPOLICY_DATA\n",
               data.empty() ? "no data directory" : mooncake + " not found");
  } else if (args.serve_only) {
    // The serve section alone, on the copies (a) would use.
    Trace base = read_trace(mooncake, "mooncake", ReadOptions{});
    uint64_t per_copy = std::max<uint64_t>(1, base.num_block_accesses());
    size_t copies = (mooncake_target + per_copy - 1) / per_copy;
    auto t0 = Clock::now();
    infer_sessions(base);
    Trace serve_trace = repeat_with_fresh_keys(base, copies);
    double serve_build = seconds_since(t0);
    serve_bench = bench_serve(serve_trace, copies, args);
    serve_bench.build_seconds = serve_build;
  } else {
    // (a) The Mooncake conversation trace, repeated with fresh keys.
    ReadOptions ro;
    Trace base;
    load.jsonl_bytes = std::filesystem::file_size(mooncake);
    load.jsonl = best_time(args.repeat, [&] { base = read_trace(mooncake, "mooncake", ro); });
    auto tmp = std::filesystem::temp_directory_path() /
               fmt::format("kvpolicy-bench-{}.kvtrace", static_cast<long>(::getpid()));
    write_native(base, tmp.string());
    load.native_bytes = std::filesystem::file_size(tmp);
    load.native = best_time(args.repeat, [&] { read_trace(tmp.string(), "native", ro); });
    std::filesystem::remove(tmp);
    load.done = true;

    reset_peak_rss();
    auto t0 = Clock::now();
    uint64_t per_copy = std::max<uint64_t>(1, base.num_block_accesses());
    Trace big = repeat_with_fresh_keys(base, (mooncake_target + per_copy - 1) / per_copy);
    double build = seconds_since(t0);
    // 10 % of the trace's own unique blocks: every copy then sees the cache the budget names.
    size_t base_unique = count_unique_blocks(base);
    size_t cap = std::max<size_t>(1, base_unique / 10);
    WorkloadBench w =
        bench_workload("mooncake",
                       fmt::format("mooncake conversation trace x{} copies",
                                   big.num_block_accesses() / base.num_block_accesses()),
                       big, cap, specs, args, &base);
    w.unique_blocks = count_unique_blocks(big);
    w.capacity_basis = double(base_unique);
    w.build_seconds = build;
    results.push_back(std::move(w));

    // (c) Serve mode on the same copies, with sessions inferred as `kvpolicy serve` does by
    // default (a next turn then extends the previous turn's cached answer).
    t0 = Clock::now();
    size_t copies = big.size() / std::max<size_t>(1, base.size());
    big = Trace();
    Trace with_sessions = base;
    infer_sessions(with_sessions);
    Trace serve_trace = repeat_with_fresh_keys(with_sessions, copies);
    double serve_build = seconds_since(t0);
    serve_bench = bench_serve(serve_trace, copies, args);
    serve_bench.build_seconds = serve_build;
  }

  if (args.serve_only) {
    if (!serve_bench.done)
      throw ConfigError("bench: --serve-only needs the Mooncake trace (--data or KVPOLICY_DATA)");
    print_serve(serve_bench);
    if (!args.json.empty())
      write_file_atomically(
          args.json,
          fmt::format(R"({{"quick":{},"repeat":{},"workloads":[],"load":null,"serve":{}}})",
                      args.quick, args.repeat, json_serve(serve_bench)) +
              "\n");
    return;
  }

  // (b) A Zipf prefix workload.
  ZipfParams zp;
  zp.requests = zipf_target / (zp.prefix_blocks + zp.suffix_blocks);
  reset_peak_rss();
  auto t0 = Clock::now();
  Trace zipf = generate_zipf(zp, args.seed);
  double zipf_build = seconds_since(t0);
  size_t zipf_unique = count_unique_blocks(zipf);
  WorkloadBench w = bench_workload(
      "zipf",
      fmt::format("zipf prefix workload (requests={}, prefixes={}, alpha={:g}, {}+{} blocks)",
                  zp.requests, zp.prefixes, zp.alpha, zp.prefix_blocks, zp.suffix_blocks),
      zipf, std::max<size_t>(1, zipf_unique / 10), specs, args);
  w.unique_blocks = zipf_unique;
  w.capacity_basis = double(zipf_unique);
  w.build_seconds = zipf_build;
  results.push_back(std::move(w));

  fmt::print(
      "kvpolicy bench: single thread, after load; rates from the thread's CPU time of the median "
      "of {} replay(s) per policy (fastest apart)\n",
      args.repeat);
  for (auto& r : results) print_workload(r);
  fmt::print(
      "\n  victim p50/p99: one eviction decision in {} (at random) timed with steady_clock "
      "(the clock's own cost, ~20-40 ns, is included)\n",
      kVictimSampleEvery);
  fmt::print("\nzipf workload generated in {:.2f} s ({:.1f} M block accesses)\n", zipf_build,
             zipf.num_block_accesses() / 1e6);
  if (load.done) {
    auto line = [](const char* what, uint64_t bytes, const Timing& t) {
      fmt::print("trace load, {}: {:.1f} MB in {:.4f} s CPU = {:.0f} MB/s ({:.0f} MB/s wall)\n",
                 what, bytes / 1e6, t.cpu, bytes / 1e6 / t.cpu, bytes / 1e6 / t.wall);
    };
    line("Mooncake JSONL", load.jsonl_bytes, load.jsonl);
    line("native cache  ", load.native_bytes, load.native);
  }
  if (serve_bench.done) print_serve(serve_bench);
  if (!args.json.empty()) {
    std::string ws;
    for (auto& r : results) ws += (ws.empty() ? "" : ",") + json_workload(r);
    std::string ls = "null";
    if (load.done)
      ls = fmt::format(
          R"({{"jsonl_bytes":{},"jsonl_cpu_seconds":{:.6f},"jsonl_wall_seconds":{:.6f},)"
          R"("native_bytes":{},"native_cpu_seconds":{:.6f},"native_wall_seconds":{:.6f}}})",
          load.jsonl_bytes, load.jsonl.cpu, load.jsonl.wall, load.native_bytes, load.native.cpu,
          load.native.wall);
    write_file_atomically(
        args.json,
        fmt::format(R"({{"quick":{},"repeat":{},"workloads":[{}],"load":{},"serve":{}}})",
                    args.quick, args.repeat, ws, ls, json_serve(serve_bench)) +
            "\n");
  }
}

void add(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand(
      "bench",
      "replay throughput, memory, eviction latency and trace load speed per policy; serve "
      "mode's events per second per router");
  cmd->add_option("--data", args->data,
                  "directory of the real traces (default: $KVPOLICY_DATA); without it the "
                  "Mooncake part is skipped");
  cmd->add_option("--policy,-p", args->policies, "policies (default: all; lru is always added)");
  cmd->add_flag("--quick", args->quick,
                "small workloads (1 M + 2 M accesses), one repeat unless --repeat is given, "
                "and serve mode with 2 routers and LRU only");
  auto* repeat =
      cmd->add_option("--repeat", args->repeat,
                      "replays per policy; the median counts (the fastest is shown apart)");
  repeat->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of the Zipf workload and randomized policies")
      ->capture_default_str();
  output_file(cmd->add_option("--json", args->json, "also write the results as one JSON object"));
  cmd->add_flag("--serve-only", args->serve_only,
                "run only the serve-mode section (needs the Mooncake trace)");
  cmd->add_option("--serve-routers", args->serve_routers,
                  "serve section: these routers only, comma-separated (default: all of it)");
  cmd->add_option("--serve-workers", args->serve_workers,
                  "serve section: extra rows of round_robin and cache_aware with lru at these "
                  "worker counts (comma-separated, 1-64; \"\" for none)")
      ->capture_default_str();
  cmd->add_flag("--serve-stepped", args->serve_stepped,
                "serve section: the stepped event loop (serve --stepped) instead of skipping "
                "decode-only stretches");
  cmd->callback([args, repeat] {
    args->repeat_given = repeat->count() > 0;
    run(*args);
  });
}

CommandRegistrar registrar(70, add);

}  // namespace
}  // namespace kvpolicy::cli
