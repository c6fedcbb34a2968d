// `kvpolicy bench`: the macro benchmark of docs/architecture.md's budgets (single core, after
// load): replay throughput of every policy on the Mooncake trace (repeated with fresh keys) and on
// a Zipf prefix workload, ratio to LRU, bytes per cached block, eviction-decision latency, trace
// load speed, and serve mode's speed (the Mooncake trace through 8 workers, per router and
// policy, in events per second).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "bench_serve.h"
#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/cache/cache.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/core/percentile.h"
#include "kvpolicy/sim/mrc.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/trace.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Peak resident memory of this process (VmHWM), and a reset of it (clear_refs 5), so each
// workload's peak is its own.
uint64_t peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

struct BenchArgs {
  std::string data;
  std::string policies;  // empty = every registered policy
  bool quick = false;
  bool repeat_given = false;  // --repeat on the command line: --quick keeps it
  int repeat = 3;
  uint64_t seed = 1;
  std::string json;
};

// Delegates to the real policy and times a sample of victim() calls.
class TimedPolicy final : public ForwardingPolicy {
 public:
  static constexpr uint64_t kSampleEvery = 8;
  explicit TimedPolicy(std::unique_ptr<Policy> inner) : ForwardingPolicy(std::move(inner)) {
    samples_.reserve(1 << 16);
  }
  NodeId victim(Time now) override {
    // Calls are sampled at random, not every 8th: a periodic sample aliases with periodic work
    // inside a policy (mt19937_64 refills its state every 312 draws) and hides or inflates it.
    sample_state_ ^= sample_state_ << 13;
    sample_state_ ^= sample_state_ >> 7;
    sample_state_ ^= sample_state_ << 17;
    if (sample_state_ % kSampleEvery != 0) return inner().victim(now);
    auto start = Clock::now();
    NodeId v = inner().victim(now);
    samples_.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count());
    return v;
  }
  std::vector<double>& samples() { return samples_; }

 private:
  uint64_t sample_state_ = 0x9e3779b97f4a7c15ULL;  // xorshift64
  std::vector<double> samples_;
};

struct Latency {
  double p50 = 0, p99 = 0;
  size_t samples = 0;
};

// Replays once more with the timing wrapper (separately, so timing never slows the throughput
// run) and returns victim() latency percentiles in nanoseconds.
Latency victim_latency(const Trace& trace, const Oracle* oracle, const PolicySpec& spec,
                       size_t capacity, uint64_t seed) {
  auto tree = std::make_unique<PrefixTree>(std::min<size_t>(capacity, 1 << 22));
  PolicyContext ctx;
  ctx.tree = tree.get();
  ctx.capacity_blocks = capacity;
  ctx.block_tokens = trace.block_tokens;
  ctx.seed = seed;
  if (oracle) ctx.future = oracle->view(trace);
  auto timed = std::make_unique<TimedPolicy>(make_policy(spec, ctx));
  TimedPolicy* t = timed.get();
  PrefixCache cache(capacity, std::move(timed), std::move(tree));
  for (size_t r = 0; r < trace.size(); ++r) cache.access(request_view(trace, r));
  auto& s = t->samples();
  Latency l;
  l.samples = s.size();
  if (s.empty()) return l;
  auto pct = [&](double p) {
    size_t k = std::min(s.size() - 1, static_cast<size_t>(p * (s.size() - 1) + 0.5));
    std::nth_element(s.begin(), s.begin() + k, s.end());
    return s[k];
  };
  l.p50 = pct(0.50);
  l.p99 = pct(0.99);
  return l;
}

struct PolicyBench {
  std::string policy;
  ReplayResult best;       // the fastest of the repeats
  double cpu_seconds = 0;  // its replay's thread CPU time
  // The median round's CPU time: the headline rate, steadier than the fastest (the machine's
  // speed drifts, and one lucky round is no measure).
  double median_cpu_seconds = 0;
  double ratio_to_lru = 0;
  std::vector<double> round_cpu_seconds;  // one per round, for the per-round ratios
  // Its time over LRU's in the same round, across rounds: the spread shows the machine's noise.
  double round_ratio_median = 0, round_ratio_min = 0, round_ratio_max = 0;
  Latency latency;
  // The hit rate on one copy of a trace the workload repeats with fresh keys (-1: not
  // repeated). The copies' blocks never recur, and frequency-aware policies keep them, so the
  // workload's own hit rate is not the trace's.
  double one_copy_hit_rate = -1;
  std::string error;
};

struct WorkloadBench {
  std::string name;
  size_t unique_blocks = 0;
  size_t capacity = 0;
  double capacity_basis = 0;  // unique blocks the 10 % refers to
  double build_seconds = 0;
  std::vector<PolicyBench> rows;
  // LRU's whole miss-ratio curve in one pass (`kvpolicy mrc`): the stack-distance pass's thread
  // CPU time, the fastest of the rounds.
  double stack_cpu_seconds = 0;
  uint64_t block_accesses = 0;
  // Memory: the peak RSS from building the trace through its oracle and one replay (the
  // caller resets the peak before the build), and the trace's and oracle's own bytes.
  uint64_t peak_rss = 0, trace_bytes = 0, oracle_bytes = 0;
};

template <typename T>
uint64_t column_bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}
uint64_t trace_memory(const Trace& t) {
  return column_bytes(t.time) + column_bytes(t.session) + column_bytes(t.turn) +
         column_bytes(t.category) + column_bytes(t.user) + column_bytes(t.prompt_tokens) +
         column_bytes(t.output_tokens) + column_bytes(t.block_offset) + column_bytes(t.blocks) +
         column_bytes(t.continuation);
}

// A policy that reads the trace's continuation scores by default (LPC) runs its oracle variant
// on a trace without them, and says so on stderr: `bench` times policies, it does not rank them.
void oracle_scores_without_continuation(const Trace& trace, std::vector<PolicySpec>& specs) {
  if (trace.has_continuation()) return;
  for (auto& spec : specs) {
    if (spec.params.find("predictor") != std::string::npos) continue;
    for (auto& p : PolicyRegistry::instance().get(spec.name).params) {
      if (p.name != "predictor" || p.default_value != "trace") continue;
      spec.params = "predictor=oracle";
      fmt::print(stderr,
                 "kvpolicy: {}: this trace carries no continuation scores (build one with "
                 "`kvpolicy trace build --classifier MODEL`); showing {}\n",
                 spec.name, spec.label());
    }
  }
}

// `one_copy`: the trace `trace` repeats with fresh keys, or null; its hit rates are reported.
WorkloadBench bench_workload(const std::string& label, const std::string& name, const Trace& trace,
                             size_t capacity, std::vector<PolicySpec> specs, const BenchArgs& args,
                             const Trace* one_copy = nullptr) {
  oracle_scores_without_continuation(trace, specs);
  WorkloadBench w;
  w.name = name;
  w.capacity = capacity;
  bool need_oracle = false;
  for (auto& s : specs) need_oracle |= needs_future(s);
  Oracle oracle;
  if (need_oracle) oracle = compute_oracle(trace);
  Progress progress("bench " + label);
  // One untimed replay first: the first replay of a process pays for fresh pages and a cold
  // allocator, which would otherwise fall on whichever policy runs first (LRU, the reference).
  replay(trace, nullptr, {"lru", ""}, capacity);
  w.peak_rss = peak_rss_bytes();
  w.trace_bytes = trace_memory(trace);
  w.oracle_bytes = column_bytes(oracle.next_request) + column_bytes(oracle.next_in_session);
  // Repeats go round the policies (LRU, A, B, LRU, A, B, ...), not policy by policy: the
  // machine's speed drifts over seconds, and this way every policy's best replay is drawn from
  // the same stretches of time as LRU's, so the ratios hold still even when the rates do not.
  w.rows.resize(specs.size());
  int rounds = std::max(1, args.repeat);
  for (int k = 0; k < rounds; ++k) {
    for (size_t i = 0; i < specs.size(); ++i) {
      PolicyBench& pb = w.rows[i];
      pb.policy = specs[i].label();
      if (!pb.error.empty()) continue;
      progress.update(double(k * specs.size() + i) / double(rounds * specs.size()),
                      "(" + pb.policy + ")");
      try {
        ReplayOptions opts;
        opts.seed = args.seed;
        // The request loop's own CPU time: after load, without building the cache or the TTFT
        // percentiles computed after the loop.
        ReplayResult r = replay(trace, need_oracle ? &oracle : nullptr, specs[i], capacity, opts);
        double cpu = r.replay_cpu_seconds;
        pb.round_cpu_seconds.push_back(cpu);
        if (k == 0 || cpu < pb.cpu_seconds) {
          pb.best = r;
          pb.cpu_seconds = cpu;
        }
        if (k + 1 == rounds)
          pb.latency =
              victim_latency(trace, need_oracle ? &oracle : nullptr, specs[i], capacity, args.seed);
      } catch (const Error& e) {
        pb.error = e.what();
      }
    }
  }
  if (one_copy) {
    Oracle copy_oracle;
    if (need_oracle) copy_oracle = compute_oracle(*one_copy);
    ReplayOptions opts;
    opts.seed = args.seed;
    for (size_t i = 0; i < specs.size(); ++i)
      if (w.rows[i].error.empty())
        w.rows[i].one_copy_hit_rate =
            replay(*one_copy, need_oracle ? &copy_oracle : nullptr, specs[i], capacity, opts)
                .block_hit_rate;
  }
  for (int k = 0; k < rounds; ++k) {
    double cpu = thread_cpu_seconds();
    std::vector<uint32_t> distances = lru_stack_distances(trace);
    cpu = thread_cpu_seconds() - cpu;
    if (k == 0 || cpu < w.stack_cpu_seconds) w.stack_cpu_seconds = cpu;
  }
  w.block_accesses = trace.num_block_accesses();
  const PolicyBench* lru = nullptr;
  for (auto& r : w.rows)
    if (r.policy == "lru" && r.error.empty()) lru = &r;
  for (auto& r : w.rows) {
    if (!r.error.empty()) continue;
    std::vector<double> cpus = r.round_cpu_seconds;
    std::sort(cpus.begin(), cpus.end());
    r.median_cpu_seconds = percentile_nearest_rank(cpus, 50);
    if (!lru) continue;
    r.ratio_to_lru = r.cpu_seconds / lru->cpu_seconds;
    std::vector<double> ratios;
    for (size_t k = 0; k < r.round_cpu_seconds.size(); ++k)
      ratios.push_back(r.round_cpu_seconds[k] / lru->round_cpu_seconds[k]);
    std::sort(ratios.begin(), ratios.end());
    r.round_ratio_median = percentile_nearest_rank(ratios, 50);
    r.round_ratio_min = ratios.front();
    r.round_ratio_max = ratios.back();
  }
  return w;
}

void print_workload(const WorkloadBench& w) {
  fmt::print("\n{}\n", w.name);
  fmt::print("  capacity {} blocks (10% of {:.0f} unique blocks); {} block accesses\n", w.capacity,
             w.capacity_basis,
             w.rows.empty() || !w.rows[0].error.empty() ? 0 : w.rows[0].best.block_accesses);
  bool copies = !w.rows.empty() && w.rows[0].one_copy_hit_rate >= 0;
  fmt::print("  {:<14} {:>10} {:>17} {:>10} {:>8} {:>8} {:>11} {:>11}\n", "policy", "M acc/s",
             "x LRU by round", "fastest", copies ? "hit % x1" : "hit %", "B/block", "victim p50",
             "victim p99");
  for (auto& r : w.rows) {
    if (!r.error.empty()) {
      fmt::print("  {:<14} failed: {}\n", r.policy, r.error);
      continue;
    }
    double rate = r.best.block_accesses / r.median_cpu_seconds / 1e6;
    std::string rounds = fmt::format("{:.2f} ({:.2f}-{:.2f})", r.round_ratio_median,
                                     r.round_ratio_min, r.round_ratio_max);
    double hit_rate = copies ? r.one_copy_hit_rate : r.best.block_hit_rate;
    fmt::print("  {:<14} {:>10.2f} {:>17} {:>10.2f} {:>8.2f} {:>8.1f} {:>9.0f}ns {:>9.0f}ns\n",
               r.policy, rate, rounds, r.best.block_accesses / r.cpu_seconds / 1e6, hit_rate * 100,
               r.best.bytes_per_block, r.latency.p50, r.latency.p99);
  }
  if (copies)
    fmt::print(
        "  hit % x1: on one copy of the trace at this capacity (the copies' fresh keys never "
        "recur, so over all of them frequency-aware policies score lower: block_hit_rate in "
        "the JSON)\n");
  if (w.block_accesses)
    fmt::print(
        "  memory: peak RSS {:.0f} MB through build + oracle + one replay = {:.1f} B per access "
        "(trace {:.1f}, oracle {:.1f})\n",
        w.peak_rss / 1e6, double(w.peak_rss) / w.block_accesses,
        double(w.trace_bytes) / w.block_accesses, double(w.oracle_bytes) / w.block_accesses);
  if (w.stack_cpu_seconds > 0)
    fmt::print("  lru curve, one pass (stack distances, every capacity at once): {:.2f} M acc/s\n",
               w.block_accesses / w.stack_cpu_seconds / 1e6);
}

std::string json_workload(const WorkloadBench& w) {
  std::string rows;
  for (auto& r : w.rows) {
    if (!rows.empty()) rows += ",";
    if (!r.error.empty()) {
      rows +=
          fmt::format(R"({{"policy":{},"error":{}}})", json_string(r.policy), json_string(r.error));
      continue;
    }
    std::string one_copy =
        r.one_copy_hit_rate < 0 ? "null" : fmt::format("{:.6f}", r.one_copy_hit_rate);
    rows += fmt::format(
        R"({{"policy":{},"accesses_per_second":{:.0f},"median_cpu_seconds":{:.6f},)"
        R"("fastest_accesses_per_second":{:.0f},"cpu_seconds":{:.6f},"wall_seconds":{:.6f},)"
        R"("ratio_to_lru":{:.4f},"round_ratio_median":{:.4f},"round_ratio_min":{:.4f},)"
        R"("round_ratio_max":{:.4f},"block_hit_rate":{:.6f},"one_copy_block_hit_rate":{},)"
        R"("bytes_per_block":{:.2f},"victim_p50_ns":{:.1f},"victim_p99_ns":{:.1f},)"
        R"("victim_samples":{},"evictions":{}}})",
        json_string(r.policy), r.best.block_accesses / r.median_cpu_seconds, r.median_cpu_seconds,
        r.best.block_accesses / r.cpu_seconds, r.cpu_seconds, r.best.replay_seconds, r.ratio_to_lru,
        r.round_ratio_median, r.round_ratio_min, r.round_ratio_max, r.best.block_hit_rate, one_copy,
        r.best.bytes_per_block, r.latency.p50, r.latency.p99, r.latency.samples, r.best.evictions);
  }
  uint64_t accesses = w.rows.empty() ? 0 : w.rows[0].best.block_accesses;
  return fmt::format(
      R"({{"workload":{},"block_accesses":{},"unique_blocks":{},"capacity_blocks":{},)"
      R"("build_seconds":{:.4f},"lru_curve_accesses_per_second":{:.0f},"peak_rss_bytes":{},)"
      R"("trace_bytes":{},"oracle_bytes":{},"policies":[{}]}})",
      json_string(w.name), accesses, w.unique_blocks, w.capacity, w.build_seconds,
      w.stack_cpu_seconds > 0 ? w.block_accesses / w.stack_cpu_seconds : 0.0, w.peak_rss,
      w.trace_bytes, w.oracle_bytes, rows);
}

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
    serve_bench = bench_serve(serve_trace, copies, args.quick, args.seed);
    serve_bench.build_seconds = serve_build;
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
      TimedPolicy::kSampleEvery);
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
  cmd->callback([args, repeat] {
    args->repeat_given = repeat->count() > 0;
    run(*args);
  });
}

CommandRegistrar registrar(70, add);

}  // namespace
}  // namespace kvpolicy::cli
