// `kvpolicy serve`: a trace through a simulated cluster of workers behind a router, for every
// (router, policy, workers, capacity) asked; queueing, batching and TTFT included.
#include "kvpolicy/serve/serve.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/capacity.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/hints.h"
#include "pd_options.h"
#include "serve_args.h"

namespace kvpolicy::cli {

void ServeArgs::add(CLI::App* cmd) {
  cmd->add_option("--router,-r", routers, "routers, comma-separated, each name[:key=value,...]")
      ->capture_default_str();
  add_policy_option(cmd, policies, "eviction policies of the workers' caches", {});
  cmd->add_option("--workers,-w", workers, "worker counts, comma-separated")->capture_default_str();
  add_capacity_option(cmd, capacities, false, "0.1",
                      "KV memory per GPU (a worker has --tp times it)");
  add_cost_options(cmd, cost);
  cmd->add_option("--tp", tp, "GPUs per worker (tensor parallel): compute / tp, KV memory x tp")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--rate", base.rate,
                  "rescale arrivals to this mean rate, requests/s (0 = as traced)")
      ->check(finite_in(0, 1e9))
      ->capture_default_str();
  cmd->add_option("--time-scale", base.time_scale, "multiply the trace's arrival times by this")
      ->check(finite_in(1e-9, 1e12))
      ->capture_default_str();
  cmd->add_option("--arrival-jitter", base.arrival_jitter_s,
                  "replicates: delay each arrival by up to this many seconds, uniform and "
                  "seeded by --seed, keeping the trace's order (0 = as traced)")
      ->check(finite_in(0, 1e6))
      ->capture_default_str();
  cmd->add_option("--clients", base.clients,
                  "closed loop: this many clients, each sending a session's turns one after "
                  "another (0 = open loop, arrivals from the trace)")
      ->capture_default_str();
  cmd->add_option("--think-time", base.think_time_s,
                  "closed loop: seconds between a reply and the "
                  "client's next request")
      ->check(finite_in(0, 1e9))
      ->capture_default_str();
  cmd->add_option("--max-batch-tokens", base.max_batch_tokens, "token budget per iteration")
      ->capture_default_str();
  cmd->add_option("--max-running", base.max_running, "running sequences per worker at most")
      ->capture_default_str();
  cmd->add_flag("--no-cache-outputs", no_cache_outputs,
                "do not cache finished answers (by default a next turn reuses them)");
  cmd->add_flag("--stepped", base.stepped,
                "step every decode-only iteration through the event queue instead of skipping "
                "stretches of them (the same results, slower; docs/serve.md)");
  cmd->add_option("--slo", base.slo_ms, "TTFT SLO for the violation rate, ms")
      ->check(finite_in(0, 1e9))
      ->capture_default_str();
  add_pd_options(cmd, base);  // allocation and prefill/decode disaggregation (docs/serve.md)
  cmd->add_option("--seed", base.seed, "seed of routers and randomized policies")
      ->capture_default_str();
  cmd->add_option("--jobs,-j", jobs, "simulations at once (0 = every core)")->capture_default_str();
  output_file(
      cmd->add_option("--json", json_path, "write one JSON object per result to this file"));
  cmd->add_flag("--resume", resume,
                "keep the results already in --json and run only the missing configurations");
  add_tier_options(cmd);
}

void ServeArgs::add_tier_options(CLI::App* cmd) {
  // Memory tiers (docs/serve.md, "Memory tiers").
  const char* size_help =
      "a multiple of the worker's HBM (2, 0.5x) or a capacity (100000b blocks, 2000000t "
      "tokens, 64GB, 1TiB); empty or 0 = none";
  cmd->add_option("--dram", dram, std::string("host DRAM tier of each worker: ") + size_help);
  cmd->add_option("--ssd", ssd, std::string("local SSD tier of each worker: ") + size_help);
  cmd->add_option("--remote", remote,
                  "remote KV pool the cluster shares: a multiple of all workers' HBM or a "
                  "capacity; empty or 0 = none");
  for (auto [tier, policy, admit, link] :
       {std::tuple{"dram", &dram_policy, &dram_admit, &dram_link},
        std::tuple{"ssd", &ssd_policy, &ssd_admit, &ssd_link},
        std::tuple{"remote", &remote_policy, &remote_admit, &remote_link}}) {
    std::string t = tier;
    cmd->add_option("--" + t + "-policy", *policy, "eviction policy of the " + t + " tier")
        ->capture_default_str();
    cmd->add_option("--" + t + "-admit", *admit,
                    "admission filter of the " + t +
                        " tier: all, presence (its parent block is in this tier or above), "
                        "seen>=K or seen>=K@W (offered K times within its last W offers; W "
                        "defaults to the tier's blocks)")
        ->capture_default_str();
    cmd->add_option("--" + t + "-link", *link,
                    "link of the " + t +
                        " tier per GPU: pcie4, pcie5, nvme, rdma-200, rdma-400 or "
                        "custom:GBps[:latency_us]")
        ->capture_default_str();
  }
  cmd->add_option("--placement", placement,
                  "exclusive (a hit moves up) or inclusive (lower tiers keep copies)")
      ->capture_default_str();
  cmd->add_option("--write", write,
                  "write-back (written down when evicted) or write-through (when computed; "
                  "needs --placement inclusive)")
      ->capture_default_str();
  cmd->add_option("--offload-min-priority", offload_min_priority,
                  "minimum retention priority (0-100) an HBM victim needs to be demoted to the "
                  "lower tiers; below it the block is dropped (TensorRT-LLM's "
                  "secondary_offload_min_priority, whose default is 30 in its eviction policy; "
                  "write-back only). Unset: off, every victim may be demoted")
      ->check(CLI::Range(0, 100));
  cmd->add_flag("--overlap-transfers", overlap_transfers,
                "lower-tier reads overlap the forward pass (max of the two) instead of "
                "preceding it");
}

namespace {

void say_ignored_flag(const CLI::App& cmd, const std::string& flag, const std::string& why) {
  if (cmd.count(flag) > 0)
    fmt::print(stderr, "kvpolicy: {}: {} has no effect {}\n", cmd.get_name(), flag, why);
}

}  // namespace

void ServeArgs::say_ignored(const CLI::App& cmd) const {
  if (base.prefill_workers == 0 && base.decode_workers == 0)  // P/D's own flags without pools
    for (const char* flag : {"--decode-router", "--kv-link-bandwidth", "--kv-link-latency",
                             "--kv-link", "--decode-cache", "--kv-transfer"})
      say_ignored_flag(cmd, flag, "without --prefill-workers and --decode-workers");
  auto none = [](const std::string& size) { return size.empty() || size == "0"; };
  if (none(dram) && none(ssd) && none(remote))
    say_ignored_flag(cmd, "--offload-min-priority", "without --dram, --ssd or --remote");
  if (base.clients > 0) {
    for (const char* flag : {"--rate", "--time-scale"})
      say_ignored_flag(cmd, flag,
                       "with --clients (a closed loop: each client sends its next turn "
                       "--think-time after the reply)");
    return;
  }
  say_ignored_flag(cmd, "--think-time",
                   "without --clients (an open loop: arrivals come from the trace)");
  if (base.rate > 0)
    say_ignored_flag(cmd, "--time-scale",
                     "with --rate (the arrivals are rescaled to that mean rate instead)");
}

// Memory tiers: one line under a result's row (docs/serve.md, "Memory tiers").
void print_tier_line(const ServeResult& r) {
  std::string line = fmt::format("  hits by tier: HBM {:.2f} %", r.hbm_hit_rate * 100);
  for (const TierResult& t : r.tiers)
    line += fmt::format(", {} {:.2f} % (written {:.1f} GB, read {:.1f} GB)", t.tier,
                        t.hit_rate * 100, t.bytes_written / 1e9, t.bytes_read / 1e9);
  if (r.offload_min_priority >= 0)
    line += fmt::format("; {} victims below priority {} dropped, not demoted",
                        r.offload_skipped_priority, r.offload_min_priority);
  fmt::print("{}; transfers {:.2f} s\n", line, r.transfer_seconds);
}

void print_serve_table(const Trace& trace, const std::vector<ServeResult>& results,
                       const CostModel& cost) {
  print_assumptions(trace.assumptions);
  fmt::print("trace {}: {} requests, {} block accesses of {} tokens; cost model {}\n", trace.name,
             trace.size(), trace.num_block_accesses(), trace.block_tokens, cost.label());
  double gb_per_block = cost.with_block_tokens(trace.block_tokens).kv_bytes_per_block() / 1e9;
  fmt::print(
      "{:<16} {:<10} {:>3} {:>9} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} "
      "{:>7} {:>6}\n",
      "router", "policy", "W", "blocks/w", "GB/w", "hit %", "TTFT ms", "p50", "p99", "wait ms",
      "e2e p50", "e2e p99", "req/s", "preempt", "slo %");
  for (const ServeResult& r : results) {
    std::string router = r.router_params.empty() ? r.router : r.router + ":" + r.router_params;
    std::string policy = r.params.empty() ? r.policy : r.policy + ":" + r.params;
    fmt::print(
        "{:<16} {:<10} {:>3} {:>9} {:>7.1f} {:>7.2f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} "
        "{:>9.1f} {:>7.2f} {:>7} {:>6.1f}\n",
        router, policy, r.workers, r.capacity_blocks, double(r.capacity_blocks) * gb_per_block,
        r.block_hit_rate * 100, r.ttft_ms.mean, r.ttft_ms.p50, r.ttft_ms.p99, r.queue_wait_ms.mean,
        r.e2e_ms.p50, r.e2e_ms.p99, r.throughput_rps, r.preemptions, r.slo_violation_rate * 100);
    if (r.rejected)
      fmt::print("  {} request(s) never fit in a worker's memory and were rejected\n", r.rejected);
    if (r.prefill_workers)
      fmt::print(
          "  P/D {}P+{}D (decode router {}): {} KV transfers, {:.2f} GB, {:.3f} s summed; "
          "prefill pool {:.1f} % busy, decode pool {:.1f} %\n",
          r.prefill_workers, r.decode_workers, r.decode_router, r.kv_transfers,
          r.kv_bytes_transferred / 1e9, r.kv_transfer_seconds, r.prefill_utilisation * 100,
          r.decode_utilisation * 100);
    if (r.prefill_workers) {  // P/D's second pass (docs/serve.md)
      uint64_t blocks = r.kv_blocks_transferred + r.decode_hit_blocks;
      fmt::print(
          "  KV transfer {}, decode cache {}: decode workers held {:.1f} % of the {} context "
          "blocks\n",
          r.kv_transfer, r.decode_cache ? "on" : "off",
          blocks ? 100.0 * double(r.decode_hit_blocks) / double(blocks) : 0.0, blocks);
    }
    if (!r.tiers.empty()) print_tier_line(r);
  }
}

namespace {

// Hands the rows to `out` once they pass 1 MiB, so a long run's file is not built whole in memory.
void write_when_large(AtomicOutput& out, std::string& text) {
  if (text.size() > (1 << 20)) {
    out.write(text);
    text.clear();
  }
}

// The per-worker trace (docs/serve.md, "Per-worker trace"): CSV, or JSON Lines when the name
// ends in .jsonl; written whole after the run (AtomicOutput), one row per worker per interval.
void write_worker_trace(const std::string& path, const WorkerTrace& t) {
  const bool jsonl = path.ends_with(".jsonl");
  AtomicOutput out(path);
  std::string text;
  // The routers' columns: every name any worker reports, in order of appearance (P/D: the
  // prefill and decode routers' may differ); a worker without one leaves it empty.
  std::vector<std::string> names;
  for (const WorkerSample& x : t.samples)
    for (const auto& [name, value] : x.router_state)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  if (!jsonl) {
    text = "time_s,interval_s,worker,waiting,running,queued_prefill_tokens,kv_blocks,busy_share";
    for (const std::string& name : names) text += "," + name;
    text += "\n";
  }
  for (const WorkerSample& x : t.samples) {
    if (jsonl) {
      text += fmt::format(
          "{{\"time_s\":{},\"interval_s\":{},\"worker\":{},\"waiting\":{},\"running\":{},"
          "\"queued_prefill_tokens\":{},\"kv_blocks\":{},\"busy_share\":{}",
          x.time_s, x.interval_s, x.worker, x.waiting, x.running, x.queued_prefill_tokens,
          x.kv_blocks, x.busy_share);
      for (const auto& [name, value] : x.router_state)
        text += fmt::format(",\"{}\":{}", name, value);
      text += "}\n";
    } else {
      text += fmt::format("{},{},{},{},{},{},{},{}", x.time_s, x.interval_s, x.worker, x.waiting,
                          x.running, x.queued_prefill_tokens, x.kv_blocks, x.busy_share);
      for (const std::string& name : names) {
        auto it = std::find_if(x.router_state.begin(), x.router_state.end(),
                               [&](const auto& kv) { return kv.first == name; });
        text += it == x.router_state.end() ? std::string(",") : fmt::format(",{}", it->second);
      }
      text += "\n";
    }
    write_when_large(out, text);
  }
  out.write(text);
  out.commit();
}

// The per-request log (docs/serve.md, "Per-request log"): CSV, or JSON Lines when the name ends
// in .jsonl; one row per trace request in trace order, written whole after the run. A time the
// request never reached (rejected: never admitted) is empty in CSV and null in JSON.
void write_request_log(const std::string& path, const Trace& trace, const RequestTimeline& t) {
  const bool jsonl = path.ends_with(".jsonl");
  static constexpr const char* kNames[] = {
      "request",       "session",       "worker",       "completed", "arrival_s",
      "admitted_s",    "first_token_s", "finish_s",     "ttft_ms",   "e2e_ms",
      "prompt_tokens", "cached_tokens", "output_tokens"};
  AtomicOutput out(path);
  std::string text;
  if (!jsonl) {
    for (const char* name : kNames) text += std::string(text.empty() ? "" : ",") + name;
    text += "\n";
  }
  auto seconds_or_none = [&](double v, double scale) {
    return v < 0 ? std::string(jsonl ? "null" : "") : fmt::format("{}", v * scale);
  };
  for (size_t r = 0; r < t.arrival.size(); ++r) {
    const bool done = t.completions[r] > 0;
    const uint64_t cached =
        std::min<uint64_t>(uint64_t{t.hit_blocks[r]} * trace.block_tokens, trace.prompt_tokens[r]);
    const std::string values[] = {fmt::format("{}", r),
                                  fmt::format("{}", trace.session[r]),
                                  fmt::format("{}", t.worker[r]),
                                  done ? "true" : "false",
                                  seconds_or_none(t.arrival[r], 1),
                                  seconds_or_none(t.admitted[r], 1),
                                  seconds_or_none(done ? t.first_token[r] : -1, 1),
                                  seconds_or_none(done ? t.finish[r] : -1, 1),
                                  seconds_or_none(done ? t.first_token[r] - t.arrival[r] : -1, 1e3),
                                  seconds_or_none(done ? t.finish[r] - t.arrival[r] : -1, 1e3),
                                  fmt::format("{}", trace.prompt_tokens[r]),
                                  fmt::format("{}", done ? cached : 0),
                                  fmt::format("{}", trace.output_tokens[r])};
    for (size_t i = 0; i < std::size(kNames); ++i) {
      if (jsonl)
        text += fmt::format("{}\"{}\":{}", i ? "," : "{", kNames[i], values[i]);
      else
        text += (i ? "," : "") + values[i];
    }
    text += jsonl ? "}\n" : "\n";
    write_when_large(out, text);
  }
  out.write(text);
  out.commit();
}

void add(CLI::App& app) {
  auto trace_args = std::make_shared<TraceArgs>();
  auto generate = std::make_shared<std::string>();
  auto generate_seed = std::make_shared<uint64_t>(1);
  auto args = std::make_shared<ServeArgs>();
  auto worker_trace_path = std::make_shared<std::string>();
  auto worker_trace = std::make_shared<WorkerTrace>();
  auto request_log_path = std::make_shared<std::string>();
  auto request_log = std::make_shared<RequestTimeline>();
  auto* cmd = app.add_subcommand(
      "serve", "simulate a serving cluster: routers, eviction policies, batching, queueing, TTFT");
  trace_args->add(cmd, false);
  add_hint_options(cmd, *trace_args);
  cmd->add_option("--generate", *generate,
                  "instead of --trace, a generated workload: kind[:key=value,...] (gsp, "
                  "conversation, agent, zipf; see `kvpolicy trace generate --help`)");
  cmd->add_option("--generate-seed", *generate_seed,
                  "seed of the generated workload (--seed sets the routers' and policies')")
      ->capture_default_str();
  args->add(cmd);
  output_file(cmd->add_option("--worker-trace", *worker_trace_path,
                              "write a per-worker time series of one run here (CSV, or JSON "
                              "Lines if it ends in .jsonl): load, busy share and router state "
                              "every --worker-trace-interval"));
  cmd->add_option("--worker-trace-interval", worker_trace->interval_s,
                  "simulated seconds between --worker-trace samples")
      ->check(finite_in(1e-3, 1e9))
      ->capture_default_str();
  output_file(cmd->add_option("--request-log", *request_log_path,
                              "write every request of one run here (CSV, or JSON Lines if it "
                              "ends in .jsonl): worker, arrival, admission, first token, finish, "
                              "TTFT and cached tokens"));
  add_shard_option(cmd, args->shard);
  cmd->callback([cmd, trace_args, generate, generate_seed, args, worker_trace_path, worker_trace,
                 request_log_path, request_log] {
    if (trace_args->path.empty() == generate->empty())
      throw ConfigError("serve: give either --trace FILE or --generate KIND[:params]");
    args->say_ignored(*cmd);
    if (generate->empty()) {
      say_ignored_flag(*cmd, "--generate-seed", "with --trace (it seeds --generate's workload)");
    } else {
      for (const char* flag : {"--format", "--skip-bad-lines", "--block-tokens", "--max-requests",
                               "--sessions", "--session-min-blocks"})
        say_ignored_flag(*cmd, flag, "with --generate (it reads a --trace file)");
    }
    CostModel cost = args->cost_model();
    args->validate();  // bad flags fail before a long load
    parse_hint_rules(trace_args->hints);
    if (args->resume && args->json_path.empty()) throw ConfigError("--resume needs --json FILE");
    if (worker_trace_path->empty()) {
      say_ignored_flag(*cmd, "--worker-trace-interval", "without --worker-trace");
    } else {
      if (args->resume || !args->shard.empty())
        throw ConfigError("--worker-trace records one run: not with --resume or --shard");
      check_writable(*worker_trace_path);
      args->base.worker_trace = worker_trace.get();
    }
    if (!request_log_path->empty()) {
      if (args->resume || !args->shard.empty())
        throw ConfigError("--request-log records one run: not with --resume or --shard");
      check_writable(*request_log_path);
      args->base.timeline = request_log.get();
    }
    SweepPlacement where = sweep_placement(args->shard, args->jobs);
    auto load = [&] {
      if (trace_args->path.empty()) {
        size_t colon = generate->find(':');
        Trace t = generate_workload(generate->substr(0, colon),
                                    colon == std::string::npos ? "" : generate->substr(colon + 1),
                                    *generate_seed);
        apply_hint_rules(t, parse_hint_rules(trace_args->hints), trace_args->hint_seed);
        return t;
      }
      return trace_args->load();
    };
    if (where.worker()) {  // loads the trace on its first cell, prints nothing
      app::work_on_rank(where, [&] {
        auto trace = std::make_shared<const Trace>(load());
        auto model = std::make_shared<const CostModel>(cost);
        auto configs = std::make_shared<std::vector<ServeOptions>>(args->configs(*trace, *model));
        for (auto& c : *configs) c.cost_model = model.get();
        return [trace, model, configs](size_t i) { return serve(*trace, (*configs)[i]).to_json(); };
      });
      return;
    }
    Trace trace = load();
    for (const auto& [flag, path] : {std::pair{"--worker-trace", worker_trace_path.get()},
                                     std::pair{"--request-log", request_log_path.get()}}) {
      if (path->empty()) continue;
      if (size_t runs = args->configs(trace, cost).size(); runs != 1)
        throw ConfigError(std::string(flag) + " records one run, but the flags ask for " +
                          std::to_string(runs) +
                          " (give one router, policy, worker count and capacity)");
    }
    auto results = app::serve_sweep(trace, *args, "serve", where);
    if (!worker_trace_path->empty()) write_worker_trace(*worker_trace_path, *worker_trace);
    if (!request_log_path->empty()) write_request_log(*request_log_path, trace, *request_log);
    print_serve_table(trace, results, cost);
  });
}

CommandRegistrar registrar(25, add);

}  // namespace
}  // namespace kvpolicy::cli
