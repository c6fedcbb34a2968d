#include "kvpolicy/app/size.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>

#include "kvpolicy/app/progress.h"
#include "kvpolicy/app/serve.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/route/router.h"
#include "kvpolicy/sim/mrc.h"

namespace kvpolicy::app {
namespace {

// "30%" or 0.3 (as mrc's --target-hit).
double parse_share(const std::string& flag, const std::string& text) {
  bool percent = !text.empty() && text.back() == '%';
  std::optional<double> read = read_number(percent ? text.substr(0, text.size() - 1) : text);
  if (!read || !std::isfinite(*read))
    throw ConfigError(flag + " '" + text + "' is not a number (write 30% or 0.3)");
  double v = *read;
  if (percent || v > 1) v /= 100;
  if (v <= 0 || v > 1) throw ConfigError(flag + " '" + text + "' must be in (0%, 100%]");
  return v;
}

std::optional<double> slo(const std::string& flag, double ms) {
  if (!std::isfinite(ms) || ms < 0) throw ConfigError(flag + " must be a number of ms >= 0");
  return ms > 0 ? std::optional<double>(ms) : std::nullopt;
}

// Tolerances of the monotonicity check: a larger capacity that hits less by more than this
// (absolute share), or has a TTFT percentile higher by more than this factor, is a dip. Below
// them, a difference is the noise of one request routed or batched otherwise.
constexpr double kHitDip = 0.001, kTtftRise = 1.01;

bool worse(const SizeTargets& t, const ServeResult& small, const ServeResult& large) {
  bool hit_asked = t.block_hit || t.token_hit || !t.any();
  if (hit_asked && (large.block_hit_rate < small.block_hit_rate - kHitDip ||
                    large.token_hit_rate < small.token_hit_rate - kHitDip))
    return true;
  auto rose = [](double a, double b) { return b > a * kTtftRise + 1e-9; };
  return (t.ttft_p50 && rose(small.ttft_ms.p50, large.ttft_ms.p50)) ||
         (t.ttft_p90 && rose(small.ttft_ms.p90, large.ttft_ms.p90)) ||
         (t.ttft_p99 && rose(small.ttft_ms.p99, large.ttft_ms.p99));
}

// The smallest worker memory that runs every request alone (its prompt and its answer), and one
// that never evicts: every block any request could insert (unique prompt blocks, every answer's
// blocks) and every request's private blocks.
std::pair<size_t, size_t> search_range(const Trace& trace) {
  size_t lo = 1, hi = count_unique_blocks(trace);
  const uint32_t B = trace.block_tokens;
  for (size_t r = 0; r < trace.size(); ++r) {
    size_t out = (size_t(trace.output_tokens[r]) + B - 1) / B + 1;
    lo = std::max(lo, size_t(trace.prompt_blocks(r)) + out);
    hi += out;
  }
  return {lo, std::max(lo, hi)};
}

// The cost model of a replica of `tp` GPUs, exactly as serve builds it, at the trace's block size.
CostModel cost_at(const SizeOptions& o, uint32_t tp, uint32_t block_tokens) {
  ServeSpec spec;
  spec.cost = o.cost;
  spec.tp = tp;
  return spec.cost_model().with_block_tokens(block_tokens);
}

struct Searcher {
  const Trace& trace;
  const SizeOptions& o;
  const SizeTargets& targets;
  size_t lo_min, hi_max;

  ServeResult run(uint32_t workers, size_t blocks, const CostModel& cost) const {
    ServeOptions s = o.base;
    s.workers = workers;
    s.router = parse_router_list(o.router).front();
    s.policy = expand_policy_sets(o.policy).front();
    s.capacity_blocks = blocks;
    s.capacity_fraction = -1;
    s.cache_outputs = !o.no_cache_outputs;
    s.cost_model = &cost;
    return serve(trace, s);
  }

  // The search at --tp; while its answer needs more GPUs per replica than it has, the search
  // again at the tp that holds it (a faster prefill changes batching and timing, so the answer
  // there is measured, not assumed).
  // So is a search that met no target only because of TTFT (its largest memory, which never
  // evicts, met the hit rates but not the SLO): at twice the tp, whose prefill is faster.
  SizeSearch search(uint32_t workers) const {
    SizeSearch first = search_at(workers, o.tp);
    const SizeSearch* last = &first;
    for (;;) {
      uint32_t next = 0;
      if (last->answer && last->tp_needed > last->tp) next = last->tp_needed;
      if (!last->answer && ttft_bound(*last) && last->tp * 2 <= o.max_tp) next = last->tp * 2;
      if (next == 0) break;
      size_t hint = last->answer ? last->probes[*last->answer].capacity_blocks : 0;
      SizeSearch wider = search_at(workers, next, hint);
      first.larger_tp.push_back(std::move(wider));
      last = &first.larger_tp.back();
    }
    return first;
  }

  bool ttft_bound(const SizeSearch& s) const {
    if (s.probes.empty() || !(targets.ttft_p50 || targets.ttft_p90 || targets.ttft_p99))
      return false;
    const ServeResult& top = s.probes.back().result;  // the largest memory tried
    return s.probes.back().capacity_blocks >= hi_max && targets.hits_met(top);
  }

  // `hint`: a previous answer of this worker count (0: none).
  SizeSearch search_at(uint32_t workers, uint32_t tp, size_t hint = 0) const {
    const CostModel cost = cost_at(o, tp, trace.block_tokens);
    SizeSearch out;
    out.workers = workers;
    out.tp = tp;
    out.gpu = gpu_kv_memory(cost, o.gpu_memory_utilization, o.reserve_gb_per_gpu);
    out.cost_model = cost.label();
    out.lo_blocks = lo_min;
    out.hi_blocks = hi_max;
    auto probe = [&](size_t blocks) {
      for (const SizeProbe& p : out.probes)
        if (p.capacity_blocks == blocks) return p.meets;
      ServeResult r = run(workers, blocks, cost);
      bool meets = targets.met(r);
      out.probes.push_back({blocks, meets, std::move(r)});
      return meets;
    };
    // The bracket: hi the smallest capacity run that met, lo the largest below it that failed
    // (0: none yet).
    size_t lo = 0, hi = 0;
    auto bracket = [&] {
      hi = 0;
      for (const SizeProbe& p : out.probes)
        if (p.meets && (hi == 0 || p.capacity_blocks < hi)) hi = p.capacity_blocks;
      lo = 0;
      for (const SizeProbe& p : out.probes)
        if (!p.meets && (hi == 0 || p.capacity_blocks < hi)) lo = std::max(lo, p.capacity_blocks);
    };
    // The GPU's full memory first: the operator's first question, and a bracket end.
    const size_t gpu_blocks = out.gpu.kv_blocks;
    if (gpu_blocks > 0) {
      probe(gpu_blocks);
      out.at_gpu = out.probes.back().result;
    }
    // Near a previous answer (the same worker count at a smaller tp), steps of 25 % from it find
    // the bracket in a few runs; without one, the range's ends are the next runs.
    const double step = hint ? 1.25 : 1e18;
    if (hint) probe(std::clamp(hint, lo_min, hi_max));
    bracket();
    // Not met yet: more memory, up to one where nothing is ever evicted (met there, or never).
    for (size_t c = std::max({lo, hint, lo_min}); hi == 0 && c < hi_max;) {
      c = static_cast<size_t>(std::min(double(hi_max), std::ceil(double(c) * step)));
      probe(c);
      bracket();
    }
    // Met with nothing failing below: less memory, down to the least that runs every request.
    while (hi != 0 && lo == 0) {
      if (hi <= lo_min) {
        out.answer_is_floor = true;
        break;
      }
      probe(std::max<size_t>(lo_min, static_cast<size_t>(double(hi) / step)));
      bracket();
    }
    // Bisection on a log scale: the bracket (lo fails, hi meets) narrows to the tolerance.
    if (hi != 0 && !out.answer_is_floor) {
      while (hi > lo + 1 && double(hi) > double(lo) * (1 + o.tolerance)) {
        size_t mid = static_cast<size_t>(std::llround(std::sqrt(double(lo) * double(hi))));
        probe(std::clamp(mid, lo + 1, hi - 1));
        bracket();
      }
    }
    std::sort(out.probes.begin(), out.probes.end(), [](const SizeProbe& a, const SizeProbe& b) {
      return a.capacity_blocks < b.capacity_blocks;
    });
    for (size_t i = 0; i < out.probes.size(); ++i) {
      const SizeProbe& p = out.probes[i];
      if (hi != 0 && p.capacity_blocks == hi) out.answer = i;
      if (lo != 0 && p.capacity_blocks == lo) out.below = i;
      if (!out.best ||
          targets.closeness(p.result) > targets.closeness(out.probes[*out.best].result))
        out.best = i;
      for (size_t j = i + 1; j < out.probes.size(); ++j) {
        const ServeResult& q = out.probes[j].result;
        if (worse(targets, p.result, q) || (p.meets && !out.probes[j].meets))
          out.non_monotone = true;
        out.dip = std::max({out.dip, p.result.block_hit_rate - q.block_hit_rate,
                            p.result.token_hit_rate - q.token_hit_rate});
      }
    }
    if (out.answer) {
      double need = double(out.probes[*out.answer].capacity_blocks) * cost.kv_bytes_per_block();
      // Doubling from --tp: tp_that_holds starts at the cost model's tp.
      out.tp_needed = tp_that_holds(cost_at(o, o.tp, trace.block_tokens), need,
                                    o.gpu_memory_utilization, o.reserve_gb_per_gpu, o.max_tp);
      if (out.tp_needed != 0 && out.tp_needed < tp) out.tp_needed = tp;
    }
    return out;
  }
};

}  // namespace

GpuKvMemory gpu_kv_memory(const CostModel& cost, double utilization, double reserve_gb_per_gpu) {
  GpuKvMemory g;
  g.tp = cost.tensor_parallel();
  g.utilization = utilization;
  if (cost.is_linear()) return g;  // no GPU: the linear model has no memory to compare with
  g.gpu = cost.gpu().name;
  g.gpu_bytes = cost.gpu().mem_bytes;
  g.weight_bytes = cost.weight_bytes();
  g.reserve_bytes = g.tp * reserve_gb_per_gpu * 1e9;
  g.kv_bytes = g.tp * g.gpu_bytes * utilization - g.weight_bytes - g.reserve_bytes;
  g.kv_blocks = g.kv_bytes > 0 ? cost.blocks_for_bytes(g.kv_bytes) : 0;
  return g;
}

uint32_t tp_that_holds(const CostModel& cost, double kv_bytes, double utilization,
                       double reserve_gb_per_gpu, uint32_t max_tp) {
  if (cost.is_linear()) return 0;
  for (uint32_t tp = cost.tensor_parallel(); tp <= max_tp; tp *= 2) {
    double free =
        tp * (cost.gpu().mem_bytes * utilization - reserve_gb_per_gpu * 1e9) - cost.weight_bytes();
    if (free >= kv_bytes) return tp;
  }
  return 0;
}

bool SizeTargets::hits_met(const ServeResult& r) const {
  if (r.requests == 0 || r.rejected > 0) return false;  // every request must be served
  if (block_hit && r.block_hit_rate < *block_hit) return false;
  if (token_hit && r.token_hit_rate < *token_hit) return false;
  return true;
}

bool SizeTargets::met(const ServeResult& r) const {
  if (!hits_met(r)) return false;
  if (ttft_p50 && r.ttft_ms.p50 > *ttft_p50) return false;
  if (ttft_p90 && r.ttft_ms.p90 > *ttft_p90) return false;
  if (ttft_p99 && r.ttft_ms.p99 > *ttft_p99) return false;
  return true;
}

double SizeTargets::closeness(const ServeResult& r) const {
  if (r.requests == 0) return 0;
  double c = 1;
  auto floor = [&](std::optional<double> want, double got) {
    if (want) c = std::min(c, got / *want);
  };
  auto ceiling = [&](std::optional<double> want, double got) {
    if (want) c = std::min(c, got > 0 ? *want / got : 1.0);
  };
  floor(block_hit, r.block_hit_rate);
  floor(token_hit, r.token_hit_rate);
  ceiling(ttft_p50, r.ttft_ms.p50);
  ceiling(ttft_p90, r.ttft_ms.p90);
  ceiling(ttft_p99, r.ttft_ms.p99);
  return c;
}

std::string SizeTargets::text() const {
  std::vector<std::string> parts;
  if (block_hit) parts.push_back(fmt::format("block hit >= {:g} %", *block_hit * 100));
  if (token_hit) parts.push_back(fmt::format("token hit >= {:g} %", *token_hit * 100));
  if (ttft_p50) parts.push_back(fmt::format("TTFT P50 <= {:g} ms", *ttft_p50));
  if (ttft_p90) parts.push_back(fmt::format("TTFT P90 <= {:g} ms", *ttft_p90));
  if (ttft_p99) parts.push_back(fmt::format("TTFT P99 <= {:g} ms", *ttft_p99));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::vector<uint32_t> parse_worker_counts(const std::string& text) {
  std::vector<uint32_t> out;
  for (const std::string& item : split_list(text)) {
    size_t dash = item.find('-');
    if (dash != std::string::npos && dash > 0) {
      uint64_t a = checked_uint(item.substr(0, dash), 1, 4096, "--workers (a range's start)");
      uint64_t b = checked_uint(item.substr(dash + 1), 1, 4096, "--workers (a range's end)");
      if (b < a) throw ConfigError("--workers '" + item + "': the range ends before it starts");
      for (uint64_t w = a; w <= b; ++w) out.push_back(static_cast<uint32_t>(w));
    } else {
      out.push_back(
          static_cast<uint32_t>(checked_uint(item, 1, 4096, "--workers (a worker count)")));
    }
  }
  if (out.empty()) throw ConfigError("--workers: no worker count given");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// P/D (docs/serve.md, "Sizing"): the pools and the link as serve checks them; with pools the
// deployment has P + D workers, so --workers is either left out or that sum.
void check_size_pools(const SizeOptions& o) {
  const ServeOptions& b = o.base;
  if (!b.prefill_workers && !b.decode_workers) return;
  if (!b.prefill_workers || !b.decode_workers)
    throw ConfigError("size: P/D needs both --prefill-workers and --decode-workers (got " +
                      std::to_string(b.prefill_workers) + " and " +
                      std::to_string(b.decode_workers) + ")");
  const std::string total = std::to_string(o.base.prefill_workers + o.base.decode_workers);
  if (o.workers != kDefaultSizeWorkers && o.workers != total)
    throw ConfigError("size: with --prefill-workers and --decode-workers the deployment has " +
                      total + " workers; leave --workers out or give " + total + " (not '" +
                      o.workers + "')");
}

SizeTargets check_size_options(const SizeOptions& o) {
  SizeTargets t;
  if (!o.target_hit.empty()) t.block_hit = parse_share("--target-hit", o.target_hit);
  if (!o.target_token_hit.empty())
    t.token_hit = parse_share("--target-token-hit", o.target_token_hit);
  t.ttft_p50 = slo("--slo-ttft-p50", o.slo_ttft_p50_ms);
  t.ttft_p90 = slo("--slo-ttft-p90", o.slo_ttft_p90_ms);
  t.ttft_p99 = slo("--slo-ttft-p99", o.slo_ttft_p99_ms);
  if (!t.any())
    throw ConfigError(
        "size: give a target: --target-hit, --target-token-hit or --slo-ttft-p50/p90/p99");
  parse_worker_counts(o.workers);
  auto routers = parse_router_list(o.router);
  if (routers.size() != 1) throw ConfigError("size: --router takes one router (size runs one)");
  RouterRegistry::instance().get(routers[0].name);
  auto policies = expand_policy_sets(o.policy);
  if (policies.size() != 1) throw ConfigError("size: --policy takes one policy (size runs one)");
  PolicyRegistry::instance().get(policies[0].name);
  if (!(o.gpu_memory_utilization > 0 && o.gpu_memory_utilization <= 1))
    throw ConfigError("--gpu-memory-utilization must be in (0, 1]");
  if (!(o.reserve_gb_per_gpu >= 0 && std::isfinite(o.reserve_gb_per_gpu)))
    throw ConfigError("--reserve-gb must be a number of GB >= 0");
  if (!(o.tolerance > 0 && o.tolerance <= 1)) throw ConfigError("--tolerance must be in (0, 1]");
  if (o.tp < 1 || o.tp > 64) throw ConfigError("--tp must be in [1, 64]");
  if (o.max_tp < o.tp || o.max_tp > 64)
    throw ConfigError("--max-tp must be in [--tp, 64] (it is " + std::to_string(o.max_tp) + ")");
  if (!(o.base.rate >= 0 && std::isfinite(o.base.rate)))
    throw ConfigError("--rate must be >= 0 requests per second");
  check_size_pools(o);
  return t;
}

SizeRun run_size(const SizeOptions& o, const Trace* given) {
  SizeRun run;
  run.targets = check_size_options(o);
  std::vector<uint32_t> counts = parse_worker_counts(o.workers);
  if (o.base.prefill_workers && o.base.decode_workers)
    counts = {o.base.prefill_workers + o.base.decode_workers};  // P/D: the one deployment
  run.allocation = o.base.allocation;
  run.prefill_workers = o.base.prefill_workers;
  run.decode_workers = o.base.decode_workers;
  ServeSpec spec;  // the cost model exactly as serve builds it (tp and the KV dtype)
  spec.cost = o.cost;
  spec.tp = o.tp;
  CostModel cost = spec.cost_model();
  run.trace = given ? std::make_shared<const Trace>(*given)
                    : std::make_shared<const Trace>(load_trace(o.trace));
  const Trace& trace = *run.trace;
  if (trace.size() == 0) throw InputError(trace.name, 0, "", "the trace has no requests");
  run.cost = cost.with_block_tokens(trace.block_tokens);
  run.gpu = gpu_kv_memory(run.cost, o.gpu_memory_utilization, o.reserve_gb_per_gpu);
  run.max_tp = o.max_tp;
  run.router = parse_router_list(o.router).front().label();
  run.policy = expand_policy_sets(o.policy).front().label();
  double span = double(trace.time.back() - trace.time.front()) / 1e6;
  run.rate = o.base.rate > 0 ? o.base.rate
             : span > 0      ? double(trace.size()) / (span * o.base.time_scale)
                             : 0;

  auto [lo_min, hi_max] = search_range(trace);
  Searcher searcher{trace, o, run.targets, lo_min, hi_max};
  run.searches.resize(counts.size());
  {
    Progress progress("size");
    std::mutex mu;
    std::atomic<size_t> next{0}, done{0};
    std::exception_ptr error;
    auto work = [&] {
      for (size_t i; (i = next++) < counts.size();) {
        try {
          SizeSearch s = searcher.search(counts[i]);
          std::lock_guard lock(mu);
          run.searches[i] = std::move(s);
          progress.update(double(++done) / counts.size(),
                          fmt::format("{} workers searched", counts[i]));
        } catch (...) {
          std::lock_guard lock(mu);
          if (!error) error = std::current_exception();
          next = counts.size();
        }
      }
    };
    unsigned jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
    jobs = std::min<unsigned>(jobs, static_cast<unsigned>(counts.size()));
    std::vector<std::thread> threads;
    for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(work);
    work();
    for (auto& t : threads) t.join();
    if (error) std::rethrow_exception(error);
  }

  // The fewest GPUs: at --tp among the answers that fit it, else among those verified at the
  // larger tp that holds them.
  // Ties go to the smaller tp (tensor parallelism within a node), then fewer workers.
  auto cost_of = [](const SizeSearch& x) {
    return std::pair(uint64_t(x.workers) * x.final().tp, x.final().tp);
  };
  for (size_t i = 0; i < run.searches.size(); ++i) {
    const SizeSearch& f = run.searches[i].final();
    if (!f.fits()) continue;
    std::optional<size_t>& pick = f.tp == o.tp ? run.chosen : run.wider;
    if (!pick || cost_of(run.searches[i]) < cost_of(run.searches[*pick])) pick = i;
  }

  if (!run.chosen) {
    for (size_t i = 0; i < run.searches.size(); ++i) {
      const auto& at = run.searches[i].at_gpu;
      if (at && (!run.nearest || run.targets.closeness(*at) >
                                     run.targets.closeness(*run.searches[*run.nearest].at_gpu)))
        run.nearest = i;
    }
  }

  // The replay cache's answer (`mrc --target-hit`): one LRU cache for the whole trace.
  if (run.targets.block_hit || run.targets.token_hit) {
    run.replay_asked = true;
    std::vector<uint32_t> distances = lru_stack_distances(trace);
    ReplayOptions ropts;
    ropts.cost_model = &run.cost;
    auto at = [&](size_t blocks) {
      return lru_curve(trace, distances, std::span(&blocks, 1), ropts)[0];
    };
    auto ok = [&](const ReplayResult& r) {
      return (!run.targets.block_hit || r.block_hit_rate >= *run.targets.block_hit) &&
             (!run.targets.token_hit || r.token_hit_rate >= *run.targets.token_hit);
    };
    // LRU is a stack algorithm: its hit rates never fall as capacity grows, so bisection is exact.
    size_t top = count_unique_blocks(trace);
    ReplayResult r = at(top);
    if (ok(r)) {
      size_t lo = 0, hi = top;
      while (hi > lo + 1) {
        size_t mid = lo + (hi - lo) / 2;
        (ok(at(mid)) ? hi : lo) = mid;
      }
      r = at(hi);
      run.replay_blocks = hi;
    }
    run.replay_block_hit = r.block_hit_rate;
    run.replay_token_hit = r.token_hit_rate;
  }
  return run;
}

}  // namespace kvpolicy::app
