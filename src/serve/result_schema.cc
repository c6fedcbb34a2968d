#include "kvpolicy/serve/result_schema.h"

#include <fmt/format.h>

#include <limits>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace serve_detail {
void add_tier_fields(std::vector<ServeResultField>& f);  // result_schema_tiers.cc
}
namespace {

using namespace result_fields;
using R = ServeResult;

std::string stats_json(const PolicyStats& stats) {
  JsonObject o;
  for (auto& [key, value] : stats) o.add(key, value);
  return o.str();
}

// An optional object of named counters, left out when empty.
ServeResultField stats(std::string name, PolicyStats R::*m, std::string desc) {
  std::string key = name;
  return {name,
          "object",
          "",
          std::move(desc),
          [key, m](const R& r, JsonObject& o) {
            if (!(r.*m).empty()) o.raw(key, stats_json(r.*m));
          },
          [key, m](const JsonRecord& j, R& r) { r.*m = j.stats(key.c_str()); }};
}

// One statistic of a latency distribution (mean, p50, ..., max), in ms with three decimals.
ServeResultField latency(const std::string& prefix, LatencyStats R::*m, double LatencyStats::*s,
                         const std::string& stat, const std::string& desc) {
  return number_at<R>(
      prefix + "_" + stat + "_ms", [m, s](R& r) -> double& { return (r.*m).*s; }, 3, -1, "ms",
      desc);
}

void add_latency(std::vector<ServeResultField>& f, const std::string& prefix, LatencyStats R::*m,
                 const std::string& desc) {
  f.push_back(latency(prefix, m, &LatencyStats::mean, "mean", desc));
  f.push_back(latency(prefix, m, &LatencyStats::p50, "p50", desc));
  f.push_back(latency(prefix, m, &LatencyStats::p90, "p90", desc));
  f.push_back(latency(prefix, m, &LatencyStats::p95, "p95", desc));
  f.push_back(latency(prefix, m, &LatencyStats::p99, "p99", desc));
  f.push_back(latency(prefix, m, &LatencyStats::max, "max", desc));
}

ServeResultField per_worker() {
  return {"per_worker",
          "array",
          "",
          "one object per worker, in worker order",
          [](const R& r, JsonObject& o) {
            std::string per = "[";
            for (size_t w = 0; w < r.per_worker.size(); ++w) {
              const WorkerResult& x = r.per_worker[w];
              JsonObject y;
              y.add("requests", x.requests).add("block_accesses", x.block_accesses);
              y.add("block_hits", x.block_hits).add("hit_rate", x.hit_rate());
              y.add("preemptions", x.preemptions).add("evictions", x.evictions);
              y.add("busy_seconds", x.busy_seconds);
              y.add("utilisation", r.makespan_s > 0 ? x.busy_seconds / r.makespan_s : 0.0);
              per += (w ? "," : "") + y.str();
            }
            o.raw("per_worker", per + "]");
          },
          [](const JsonRecord& j, R& r) {
            simdjson::dom::array workers;
            if (j.object()["per_worker"].get(workers))
              j.fail("per_worker", "missing or not an array");
            for (simdjson::dom::element e : workers) {
              WorkerResult w;
              auto field = [&](const char* key, auto& out) {
                double v;
                if (e[key].get(v))
                  j.fail(std::string("per_worker.") + key, "missing or not a number");
                out = static_cast<std::remove_reference_t<decltype(out)>>(v);
              };
              field("requests", w.requests);
              field("block_accesses", w.block_accesses);
              field("block_hits", w.block_hits);
              field("preemptions", w.preemptions);
              field("evictions", w.evictions);
              field("busy_seconds", w.busy_seconds);
              r.per_worker.push_back(w);
            }
          }};
}

// A count that older results lack (read as 0); not a CSV column.
template <typename T>
ServeResultField count_or_zero(std::string name, T R::*m, std::string unit, std::string desc) {
  std::string key = name;
  return {name,
          "int",
          std::move(unit),
          std::move(desc),
          [key, m](const R& r, JsonObject& o) { o.add(key, r.*m); },
          [key, m](const JsonRecord& j, R& r) { r.*m = static_cast<T>(j.num_or(key.c_str(), 0)); }};
}

// P/D's second pass (issue 37; docs/serve.md): decode workers' prefix caches and layer-wise
// transfer. Results written before it read as decode cache off and after-prefill.
void add_pd_caching(std::vector<ServeResultField>& f) {
  f.push_back(
      {"decode_cache", "bool", "",
       "P/D: decode workers keep a prefix cache and a transfer carries only the blocks "
       "the decode worker lacks (false when colocated or absent)",
       [](const R& r, JsonObject& o) { o.raw("decode_cache", r.decode_cache ? "true" : "false"); },
       [](const JsonRecord& j, R& r) { r.decode_cache = j.boolean_or("decode_cache", false); }});
  f.push_back(optional_text("kv_transfer", &R::kv_transfer,
                            "P/D: `after-prefill` or `layerwise` (empty when colocated)"));
  f.push_back(count_or_zero("kv_blocks_transferred", &R::kv_blocks_transferred, "blocks",
                            "P/D: KV blocks sent over the link"));
  f.push_back(count_or_zero("decode_hit_blocks", &R::decode_hit_blocks, "blocks",
                            "P/D: context blocks the chosen decode worker already held at "
                            "hand-off, so not sent (0 without decode cache)"));
}

// Allocation and prefill/decode disaggregation (issue 37; docs/serve.md).
void add_allocation_and_pools(std::vector<ServeResultField>& f) {
  f.push_back(text("allocation", &R::allocation,
                   "`chunked` (blocks per prefill chunk, vLLM v1) or `whole` (the prompt's "
                   "blocks at admission, vLLM v0); older results read as `whole`",
                   std::string("whole")));
  f.push_back(count_or_zero("prefill_workers", &R::prefill_workers, "",
                            "P/D: workers of the prefill pool (0: colocated)"));
  f.push_back(count_or_zero("decode_workers", &R::decode_workers, "",
                            "P/D: workers of the decode pool (0: colocated)"));
  f.push_back(optional_text("decode_router", &R::decode_router, "P/D: the decode pool's router"));
  f.push_back(number("kv_link_bytes_per_s", &R::kv_link_bytes_per_s, 0, -1, "bytes/s",
                     "P/D: the KV link's bandwidth (0: colocated)", 0.0));
  f.push_back(number("kv_link_latency_s", &R::kv_link_latency_s, 9, -1, "s",
                     "P/D: the KV link's latency per transfer", 0.0));
  f.push_back(count_or_zero("kv_transfers", &R::kv_transfers, "",
                            "P/D: requests whose KV crossed from prefill to decode"));
  f.push_back(number("kv_bytes_transferred", &R::kv_bytes_transferred, 0, -1, "bytes",
                     "P/D: KV bytes sent over the link", 0.0));
  f.push_back(number("kv_transfer_seconds", &R::kv_transfer_seconds, 6, -1, "s",
                     "P/D: summed send-to-arrival time of the transfers, link queueing included",
                     0.0));
  f.push_back(number("prefill_utilisation", &R::prefill_utilisation, 6, -1, "",
                     "P/D: the prefill pool's mean time in iterations / makespan", 0.0));
  f.push_back(number("decode_utilisation", &R::decode_utilisation, 6, -1, "",
                     "P/D: the decode pool's mean time in iterations / makespan", 0.0));
  add_pd_caching(f);
}

std::vector<ServeResultField> make_fields() {
  std::vector<ServeResultField> f;
  f.push_back({"mode", "string", "", "`\"serve\"` (replay results have no `mode`)",
               [](const R&, JsonObject& o) { o.add("mode", "serve"); },
               [](const JsonRecord& j, R&) {
                 if (j.str("mode") != "serve") j.fail("mode", "not a serve-mode result");
               }});
  f.push_back(text("trace", &R::trace, "the trace's name (its path as given)"));
  f.push_back(text("trace_fingerprint", &R::trace_fingerprint, "the trace's content", ""));
  f.push_back(optional_text("assumptions", &R::assumptions,
                            "as in replay: the trace's assumption model, when its prompts are "
                            "assumed"));
  f.push_back(text("policy", &R::policy, "the policy of each worker's cache"));
  f.push_back(text("params", &R::params, "its parameters as given"));
  f.push_back(integer("capacity_blocks", &R::capacity_blocks, "blocks",
                      "KV memory of one worker in blocks"));
  f.push_back(
      number_or_null("capacity_fraction", &R::capacity_fraction,
                     "`--capacity` as a share of the trace's unique blocks, when so given"));
  f.push_back(
      number("capacity_gb", &R::capacity_gb, 3, -1, "GB", "`capacity_blocks` as KV memory", 0.0));
  f.push_back(integer("seed", &R::seed, "", "the router's seed"));
  f.push_back(integer("requests", &R::requests, "", "requests completed"));
  f.push_back(integer("block_accesses", &R::block_accesses, "blocks",
                      "prompt blocks of the completed requests"));
  f.push_back(integer("block_hits", &R::block_hits, "blocks", "prompt blocks found cached"));
  f.push_back(
      number("block_hit_rate", &R::block_hit_rate, 6, -1, "", "`block_hits` / `block_accesses`"));
  f.push_back(integer("prompt_tokens", &R::prompt_tokens, "tokens",
                      "the completed requests' prompt tokens"));
  f.push_back(integer("token_hits", &R::token_hits, "tokens", "prompt tokens found cached"));
  f.push_back(
      number("token_hit_rate", &R::token_hit_rate, 6, -1, "", "`token_hits` / `prompt_tokens`"));
  f.push_back(integer("evictions", &R::evictions, "blocks", "blocks evicted, over workers"));
  f.push_back(text("cost_model", &R::cost_model, "the worker's cost model"));
  const std::string ttft = "time to first token, queueing and batching included";
  auto ttft_at = [&](double LatencyStats::*s, const char* stat) {
    f.push_back(latency("ttft", &R::ttft_ms, s, stat, ttft));
  };
  ttft_at(&LatencyStats::p50, "p50");
  ttft_at(&LatencyStats::p90, "p90");
  ttft_at(&LatencyStats::p95, "p95");
  ttft_at(&LatencyStats::p99, "p99");
  ttft_at(&LatencyStats::mean, "mean");
  ttft_at(&LatencyStats::max, "max");
  // The intervals of the median and the P99; null (read back as +infinity) when unbounded.
  const double inf = std::numeric_limits<double>::infinity();
  struct Bound {
    double LatencyStats::*m;
    const char* name;
    double fallback;
    const char* desc;
  };
  for (const Bound& b : {Bound{&LatencyStats::p50_low, "p50_low", 0.0, "median's, lower end"},
                         Bound{&LatencyStats::p50_high, "p50_high", inf, "median's, upper end"},
                         Bound{&LatencyStats::p99_low, "p99_low", 0.0, "P99's, lower end"},
                         Bound{&LatencyStats::p99_high, "p99_high", inf, "P99's, upper end"}}) {
    f.push_back(number_at<R>(
        std::string("ttft_") + b.name + "_ms", [m = b.m](R& r) -> double& { return r.ttft_ms.*m; },
        3, -1, "ms", std::string("95 % distribution-free interval of the TTFT ") + b.desc,
        b.fallback));
    if (b.fallback == inf) f.back().type = "number or null";
  }
  f.push_back(setting("slo_ms", &R::slo_ms, "ms", "the TTFT SLO"));
  f.push_back(number("slo_violation_rate", &R::slo_violation_rate, 6, -1, "",
                     "the share of completed requests whose TTFT exceeds `slo_ms`"));
  f.push_back(stats("policy_stats", &R::policy_stats, "the policies' counters, summed"));
  f.push_back(text("router", &R::router, "the router"));
  f.push_back(text("router_params", &R::router_params, "its parameters as given"));
  f.push_back(integer("workers", &R::workers, "", "workers in the cluster"));
  f.push_back(integer("tensor_parallel", &R::tensor_parallel, "", "GPUs per worker"));
  f.push_back(
      integer("max_batch_tokens", &R::max_batch_tokens, "tokens", "token budget of one iteration"));
  f.push_back(integer("max_running", &R::max_running, "", "running sequences per worker at most"));
  f.push_back(setting("time_scale", &R::time_scale, "", "inter-arrival times multiplied by this"));
  f.push_back(setting("rate", &R::rate, "requests/s", "arrivals rescaled to this mean rate"));
  f.push_back(integer("clients", &R::clients, "", "closed loop: clients; 0 = open loop"));
  f.push_back(setting("think_time_s", &R::think_time_s, "s", "closed loop: think time"));
  f.push_back(setting("arrival_jitter_s", &R::arrival_jitter_s, "s",
                      "each arrival delayed by up to this, seeded by `seed` (replicates)"));
  f.push_back(
      flag<R>("cache_outputs", &R::cache_outputs, "whether finished answers join the cache"));
  f.push_back(integer("rejected", &R::rejected, "", "requests that never fit a worker"));
  f.push_back(integer("preemptions", &R::preemptions, "", "preemptions for memory"));
  f.push_back(integer("output_tokens", &R::output_tokens, "tokens", "tokens generated"));
  f.push_back(integer("iterations", &R::iterations, "", "forward passes, over workers"));
  f.push_back(integer("events", &R::events, "", "events the loop processed"));
  f.push_back(number("makespan_s", &R::makespan_s, 6, -1, "s",
                     "first arrival to the last request leaving"));
  f.push_back(number("throughput_rps", &R::throughput_rps, 4, -1, "requests/s",
                     "`requests` / `makespan_s`"));
  f.push_back(number("output_tokens_per_s", &R::output_tokens_per_s, 2, -1, "tokens/s",
                     "`output_tokens` / `makespan_s`"));
  f.push_back(number("mean_in_system", &R::mean_in_system, 4, -1, "",
                     "time-average of requests in the system"));
  f.push_back(
      number("total_sojourn_s", &R::total_sojourn_s, 6, -1, "s", "summed time in the system"));
  add_latency(f, "queue_wait", &R::queue_wait_ms, "first admission − arrival");
  add_latency(f, "tpot", &R::tpot_ms, "time per output token");
  add_latency(f, "e2e", &R::e2e_ms, "completion − arrival");
  add_allocation_and_pools(f);
  f.push_back(per_worker());
  f.push_back(stats("router_stats", &R::router_stats, "the router's counters"));
  f.push_back(number("sim_seconds", &R::sim_seconds, 3, -1, "s", "wall time of the simulation"));
  serve_detail::add_tier_fields(f);  // memory tiers
  return f;
}

}  // namespace

const std::vector<ServeResultField>& serve_result_fields() {
  static const std::vector<ServeResultField> fields = make_fields();
  return fields;
}

}  // namespace kvpolicy
