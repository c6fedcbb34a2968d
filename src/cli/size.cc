// `kvpolicy size`: the KV memory per replica a deployment needs for a hit-rate target and/or a
// TTFT SLO, per worker count, by serve-mode runs; set against the GPU's KV memory, with the
// replay cache's answer beside it (docs/serve.md, "Sizing").
#include "kvpolicy/app/size.h"

#include <fmt/format.h>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "pd_options.h"
#include "plot.h"

namespace kvpolicy::cli {
namespace {

struct SizeArgs : app::SizeOptions {
  std::string json_path, plot_path;
};

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string gpu_count(uint64_t n) { return fmt::format("{} GPU{}", n, n == 1 ? "" : "s"); }

std::string workers_text(uint32_t w) { return fmt::format("{} worker{}", w, w == 1 ? "" : "s"); }

// "TTFT P50/P90/P99 9.4/12.6/19.6 ms"
std::string ttft_text(const ServeResult& r) {
  return fmt::format("TTFT P50/P90/P99 {:.1f}/{:.1f}/{:.1f} ms", r.ttft_ms.p50, r.ttft_ms.p90,
                     r.ttft_ms.p99);
}

// "1 H100" or "4 x H100 (tp=4)".
std::string gpus_text(const std::string& gpu, uint32_t tp) {
  return tp == 1 ? "1 " + upper(gpu) : fmt::format("{} x {} (tp={})", tp, upper(gpu), tp);
}

void print_head(const app::SizeRun& run, const SizeArgs& a) {
  const Trace& t = *run.trace;
  const app::GpuKvMemory& g = run.gpu;
  fmt::print("trace {}: {} requests, {} blocks of {} tokens; {} at {:.3g} requests/s{}\n", t.name,
             app::with_commas(t.size()), app::with_commas(t.num_block_accesses()), t.block_tokens,
             a.base.rate > 0 ? "rescaled" : "as traced", run.rate,
             a.no_cache_outputs ? "; answers not cached" : "; answers cached");
  fmt::print("serve mode: router {}, policy {}, cost model {}; target {}\n", run.router, run.policy,
             run.cost.label(), run.targets.text());
  fmt::print("allocation {}", run.allocation);
  if (run.prefill_workers)  // P/D: the one deployment sized
    fmt::print(
        "; P/D: {} prefill + {} decode workers, decode router {}, decode cache {}, KV "
        "link {:g} GB/s + {:g} us ({})",
        run.prefill_workers, run.decode_workers, a.base.decode_router.label(),
        a.base.decode_cache ? "on" : "off", a.base.kv_link_bytes_per_s / 1e9,
        a.base.kv_link_latency_s * 1e6, a.base.kv_transfer);
  fmt::print("\n");
  if (run.cost.is_linear()) {
    fmt::print("a linear cost model has no GPU: no KV memory to compare with\n\n");
    return;
  }
  fmt::print(
      "a replica's KV memory: {} x {:g} GB x {:g} utilisation - {:.2f} GB weights - {:g} GB "
      "reserve (activations, CUDA graphs; --reserve-gb {:g} per GPU) = {}\n\n",
      g.tp, g.gpu_bytes / 1e9, g.utilization, g.weight_bytes / 1e9, g.reserve_bytes / 1e9,
      a.reserve_gb_per_gpu,
      g.kv_bytes > 0 ? fmt::format("{} GB ({} blocks)", app::gb_text(g.kv_bytes / 1e9),
                                   app::with_commas(g.kv_blocks))
                     : "nothing: the weights do not fit");
}

void print_at_gpu(const app::SizeRun& run) {
  if (run.cost.is_linear()) return;
  if (run.gpu.kv_blocks == 0) {
    fmt::print("the weights leave no KV memory on {}: every answer below needs a larger tp\n\n",
               gpus_text(run.gpu.gpu, run.gpu.tp));
    return;
  }
  fmt::print("at the GPU's full KV memory ({} GB per replica), one serve run each:\n",
             app::gb_text(run.gpu.kv_bytes / 1e9));
  fmt::print("{:>4} {:>5} {:>8} {:>8} {:>10} {:>10} {:>10} {:>8} {:>6}\n", "W", "GPUs", "block %",
             "token %", "TTFT p50", "p90", "p99", "preempt", "meets");
  for (const app::SizeSearch& s : run.searches) {
    if (!s.at_gpu) continue;
    const ServeResult& r = *s.at_gpu;
    fmt::print("{:>4} {:>5} {:>8.2f} {:>8.2f} {:>7.1f} ms {:>7.1f} ms {:>7.1f} ms {:>8} {:>6}\n",
               s.workers, s.workers * run.gpu.tp, r.block_hit_rate * 100, r.token_hit_rate * 100,
               r.ttft_ms.p50, r.ttft_ms.p90, r.ttft_ms.p99, r.preemptions,
               run.targets.met(r) ? "yes" : "no");
  }
  fmt::print("\n");
}

// One search's answer: `name` is "2 workers" (at --tp) or "  at tp=4" (searched again there).
void print_search(const app::SizeRun& run, const app::SizeSearch& s, const std::string& name,
                  uint32_t next_tp) {
  const double block_bytes = run.cost.kv_bytes_per_block();
  const app::GpuKvMemory& g = s.gpu;
  if (!s.answer) {
    const ServeResult* best = s.best ? &s.probes[*s.best].result : nullptr;
    fmt::print(
        "  {}: not met up to {} GB per replica (no eviction there){}{}\n", name,
        app::gb_text(double(s.hi_blocks) * block_bytes / 1e9),
        best ? fmt::format("; nearest measured {:.2f} % blocks, {:.2f} % tokens, {}",
                           best->block_hit_rate * 100, best->token_hit_rate * 100, ttft_text(*best))
             : "",
        next_tp ? fmt::format("; the hit rates were met there, TTFT was not: searched again at "
                              "tp={}",
                              next_tp)
                : "");
    return;
  }
  const app::SizeProbe& p = s.probes[*s.answer];
  const ServeResult& r = p.result;
  double gb = double(p.capacity_blocks) * block_bytes / 1e9;
  std::string where;
  if (run.cost.is_linear()) {
    where = "";
  } else if (s.fits()) {
    where = fmt::format("fits in {} at {:g} memory utilisation: {} of {} GB of KV; {}",
                        gpus_text(g.gpu, s.tp), g.utilization, app::gb_text(gb),
                        app::gb_text(g.kv_bytes / 1e9), gpu_count(uint64_t(s.workers) * s.tp));
  } else {
    where = fmt::format(
        "{}; {}",
        g.kv_bytes <= 0
            ? fmt::format("the weights leave no KV memory on {}", gpus_text(g.gpu, s.tp))
            : fmt::format("more than {} holds ({} GB)", gpus_text(g.gpu, s.tp),
                          app::gb_text(g.kv_bytes / 1e9)),
        s.tp_needed ? fmt::format("searched again at tp={}, which holds it:", s.tp_needed)
                    : fmt::format("more than tp={} (--max-tp) would", run.max_tp));
  }
  std::string below;
  if (s.below) {
    const ServeResult& b = s.probes[*s.below].result;
    below = fmt::format(
        "      one step smaller, {} GB: {:.2f} % blocks, {:.2f} % tokens, {}: not met\n",
        app::gb_text(double(s.probes[*s.below].capacity_blocks) * block_bytes / 1e9),
        b.block_hit_rate * 100, b.token_hit_rate * 100, ttft_text(b));
  } else if (s.answer_is_floor) {
    below = "      nothing smaller tried: the least memory that runs every request alone\n";
  }
  fmt::print(
      "  {}: {} GB of KV per replica ({} blocks; {} GB in all): measured {:.2f} % blocks, "
      "{:.2f} % tokens, {}; {} serve runs{}\n{}{}",
      name, app::gb_text(gb), app::with_commas(p.capacity_blocks), app::gb_text(gb * s.workers),
      r.block_hit_rate * 100, r.token_hit_rate * 100, ttft_text(r), s.probes.size(),
      s.non_monotone ? fmt::format("; NOT MONOTONE: a larger capacity measured worse (beyond "
                                   "0.1 point of hit rate or 1 % of TTFT; largest hit-rate dip "
                                   "{:.2f} points), so this is the smallest found, not a proven "
                                   "minimum",
                                   s.dip * 100)
                     : "",
      below, where.empty() ? "" : "      " + where + "\n");
}

void print_answers(const app::SizeRun& run, const SizeArgs& a) {
  fmt::print(
      "smallest KV per replica meeting {} (serve runs, bisection on a log scale to {:g} %):\n",
      run.targets.text(), a.tolerance * 100);
  for (const app::SizeSearch& s : run.searches) {
    // Each search, then the ones at a larger tp; `next_tp`: the tp of the one after it.
    for (size_t i = 0; i <= s.larger_tp.size(); ++i) {
      const app::SizeSearch& at = i == 0 ? s : s.larger_tp[i - 1];
      uint32_t next_tp = i < s.larger_tp.size() ? s.larger_tp[i].tp : 0;
      print_search(run, at,
                   i == 0 ? workers_text(s.workers)
                          : fmt::format("  {} at tp={}", workers_text(s.workers), at.tp),
                   next_tp);
    }
  }
  fmt::print("\n");
}

void print_verdict(const app::SizeRun& run, const SizeArgs& a) {
  const double block_bytes = run.cost.kv_bytes_per_block();
  if (run.chosen) {
    const app::SizeSearch& s = run.searches[*run.chosen];
    const app::SizeProbe& p = s.probes[*s.answer];
    fmt::print(
        "answer (serve mode, {} router, per replica): {} x {} = {} GPU{}, {} GB of KV per "
        "replica (measured {:.2f} % block / {:.2f} % token hits, {})\n",
        run.router, workers_text(s.workers), gpus_text(run.gpu.gpu, run.gpu.tp),
        s.workers * run.gpu.tp, s.workers * run.gpu.tp == 1 ? "" : "s",
        app::gb_text(double(p.capacity_blocks) * block_bytes / 1e9), p.result.block_hit_rate * 100,
        p.result.token_hit_rate * 100, ttft_text(p.result));
  } else if (!run.cost.is_linear()) {
    const app::SizeSearch* best = run.nearest ? &run.searches[*run.nearest] : nullptr;
    fmt::print("answer: no worker count in the range meets {} within {}'s KV memory",
               run.targets.text(), gpus_text(run.gpu.gpu, run.gpu.tp));
    if (best)
      fmt::print("; the nearest there is {}: {:.2f} % block / {:.2f} % token hits, {}",
                 workers_text(best->workers), best->at_gpu->block_hit_rate * 100,
                 best->at_gpu->token_hit_rate * 100, ttft_text(*best->at_gpu));
    fmt::print("\n");
    if (run.wider) {
      const app::SizeSearch& w = run.searches[*run.wider].final();
      const app::SizeProbe& p = w.probes[*w.answer];
      fmt::print(
          "  with more GPUs per replica: {} x {} = {}, {} GB of KV per replica (measured at "
          "tp={}: {:.2f} % block / {:.2f} % token hits, {})\n",
          workers_text(w.workers), gpus_text(run.gpu.gpu, w.tp),
          gpu_count(uint64_t(w.workers) * w.tp),
          app::gb_text(double(p.capacity_blocks) * block_bytes / 1e9), w.tp,
          p.result.block_hit_rate * 100, p.result.token_hit_rate * 100, ttft_text(p.result));
    }
  }
  if (!run.replay_asked) {
    fmt::print("replay cache (mrc --target-hit): not comparable with a TTFT SLO alone\n");
    return;
  }
  if (run.replay_blocks)
    fmt::print(
        "replay cache (what mrc --target-hit answers): {} GB of KV in one LRU cache for the "
        "whole trace ({:.2f} % block / {:.2f} % token hits)\n",
        app::gb_text(double(*run.replay_blocks) * block_bytes / 1e9), run.replay_block_hit * 100,
        run.replay_token_hit * 100);
  else
    fmt::print(
        "replay cache (what mrc --target-hit answers): out of reach; an infinite cache "
        "hits {:.2f} % blocks, {:.2f} % tokens\n",
        run.replay_block_hit * 100, run.replay_token_hit * 100);
  fmt::print(
      "  they differ: replay is one cache shared by every request with no memory for running "
      "requests, no queueing and no answers cached;\n  serve mode gives each replica its own cache "
      "behind the router, holds running requests' KV in the same memory, and {}",
      a.no_cache_outputs ? "does not cache answers either (--no-cache-outputs)"
                         : "caches answers (a next turn hits them)");
  fmt::print("\n");
}

void run(const SizeArgs& a) {
  app::check_size_options(a);
  if (!a.json_path.empty()) check_writable(a.json_path);  // fail before the work
  if (!a.plot_path.empty()) check_writable(a.plot_path);
  app::SizeRun run = app::run_size(a);
  print_head(run, a);
  print_at_gpu(run);
  print_answers(run, a);
  print_verdict(run, a);
  write_rows_and_plot(app::size_rows(run), a.json_path, a.plot_path, "plot_size.py");
}

void add(CLI::App& app) {
  auto args = std::make_shared<SizeArgs>();
  auto* cmd = app.add_subcommand(
      "size",
      "KV memory per replica (and GPUs) a deployment needs for a hit-rate target or TTFT SLO, "
      "per worker count, by serve-mode runs; vs the GPU's memory and the replay cache");
  add_trace_options(cmd, args->trace, true);
  cmd->add_option("--model", args->cost.model, "model preset (its weights and KV size)")
      ->capture_default_str();
  cmd->add_option("--gpu", args->cost.gpu, "GPU preset (its HBM and speed)")->capture_default_str();
  cmd->add_option("--kv-dtype", args->cost.kv_dtype,
                  "KV cache dtype: auto (the model's), fp16, bf16, fp8")
      ->capture_default_str();
  cmd->add_option("--cost-params", args->cost.cost_params,
                  "cost model options, key=value,... (see `kvpolicy cost-model --help`)");
  cmd->add_option("--tp", args->tp, "GPUs per replica (tensor parallel)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--max-tp", args->max_tp,
                  "the largest tp an answer that does not fit --tp's GPUs is searched again at "
                  "(8: one node)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--workers,-w", args->workers,
                  "replica counts to size: comma-separated (1,2,4,8) or a range (1-8); with "
                  "--prefill-workers and --decode-workers, their sum (the one deployment sized)")
      ->capture_default_str();
  cmd->add_option("--router,-r", args->router, "the router, name[:key=value,...]")
      ->capture_default_str();
  cmd->add_option("--policy,-p", args->policy, "the workers' eviction policy")
      ->capture_default_str();
  cmd->add_option("--target-hit", args->target_hit, "block hit rate to reach (30% or 0.3)");
  cmd->add_option("--target-token-hit", args->target_token_hit,
                  "token hit rate to reach (vLLM's prefix-cache hit rate; 30% or 0.3)");
  cmd->add_option("--slo-ttft-p50", args->slo_ttft_p50_ms, "TTFT P50 to stay under, ms")
      ->check(finite_in(0, 1e9));
  cmd->add_option("--slo-ttft-p90", args->slo_ttft_p90_ms, "TTFT P90 to stay under, ms")
      ->check(finite_in(0, 1e9));
  cmd->add_option("--slo-ttft-p99", args->slo_ttft_p99_ms, "TTFT P99 to stay under, ms")
      ->check(finite_in(0, 1e9));
  cmd->add_option("--gpu-memory-utilization", args->gpu_memory_utilization,
                  "share of each GPU's HBM the engine may use (vLLM's flag)")
      ->check(finite_in(1e-6, 1))
      ->capture_default_str();
  cmd->add_option("--reserve-gb", args->reserve_gb_per_gpu,
                  "GB per GPU kept from KV for activations, CUDA graphs and buffers (a stated "
                  "constant, as vLLM's profiling run measures; not modelled)")
      ->check(finite_in(0, 1e6))
      ->capture_default_str();
  cmd->add_option("--tolerance", args->tolerance,
                  "stop the bisection when its bracket is within this share (0.02 = 2 %)")
      ->check(finite_in(1e-6, 1))
      ->capture_default_str();
  cmd->add_option("--rate", args->base.rate,
                  "rescale arrivals to this mean rate, requests/s (0 = the trace's own)")
      ->check(finite_in(0, 1e9))
      ->capture_default_str();
  cmd->add_option("--max-batch-tokens", args->base.max_batch_tokens, "token budget per iteration")
      ->capture_default_str();
  cmd->add_option("--max-running", args->base.max_running, "running sequences per worker at most")
      ->capture_default_str();
  cmd->add_flag("--no-cache-outputs", args->no_cache_outputs,
                "do not cache finished answers (by default a next turn reuses them)");
  add_pd_options(cmd, args->base);  // a P/D deployment: its P + D workers are sized
  cmd->add_option("--seed", args->base.seed, "seed of routers and randomized policies")
      ->capture_default_str();
  cmd->add_option("--jobs,-j", args->jobs, "worker counts searched at once (0 = every core)")
      ->capture_default_str();
  output_file(cmd->add_option(
      "--json", args->json_path,
      "write one JSON object per serve run (kind gpu, probe), per answer and the replay answer"));
  output_file(cmd->add_option(
      "--plot", args->plot_path,
      "draw hit rate and TTFT vs KV per replica to this PNG (the Python package's plot_size.py "
      "through /usr/bin/python3 and Debian's python3-matplotlib)"));
  cmd->callback([args] { run(*args); });
}

CommandRegistrar registrar(23, add);

}  // namespace
}  // namespace kvpolicy::cli
