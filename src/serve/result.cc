// ServeResult as one JSON line: replay mode's fields under the same names, then serve mode's.
#include <fmt/format.h>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/core/resumable.h"
#include "kvpolicy/serve/serve.h"
#include "kvpolicy/trace/json_record.h"

namespace kvpolicy {
namespace {

std::string stats_json(const PolicyStats& stats) {
  JsonObject o;
  for (auto& [key, value] : stats) o.add(key, value);
  return o.str();
}

void add_latency(JsonObject& o, const std::string& name, const LatencyStats& s) {
  o.add(name + "_mean_ms", s.mean, 3).add(name + "_p50_ms", s.p50, 3);
  o.add(name + "_p90_ms", s.p90, 3).add(name + "_p95_ms", s.p95, 3);
  o.add(name + "_p99_ms", s.p99, 3).add(name + "_max_ms", s.max, 3);
}

}  // namespace

std::string ServeResult::key() const {
  return fmt::format("serve|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{:g}|{:g}|{}|{:g}|{}|{}|{}|{:g}",
                     trace_identity(trace), trace_fingerprint, policy, params, router,
                     router_params, workers, capacity_blocks, seed, cost_model, time_scale, rate,
                     clients, think_time_s, cache_outputs, max_batch_tokens, max_running, slo_ms);
}

std::string ServeResult::to_json() const {
  JsonObject o;
  o.add("mode", "serve");
  o.add("trace", trace).add("trace_fingerprint", trace_fingerprint);
  o.add("policy", policy).add("params", params);
  o.add("capacity_blocks", capacity_blocks);
  if (capacity_fraction < 0) {
    o.add_null("capacity_fraction");
  } else {
    o.raw("capacity_fraction", fmt::format("{}", capacity_fraction));
  }
  o.add("capacity_gb", capacity_gb, 3);
  o.add("seed", seed).add("requests", requests).add("block_accesses", block_accesses);
  o.add("block_hits", block_hits).add("block_hit_rate", block_hit_rate);
  o.add("prompt_tokens", prompt_tokens).add("token_hits", token_hits);
  o.add("token_hit_rate", token_hit_rate).add("evictions", evictions);
  o.add("cost_model", cost_model);
  o.add("ttft_p50_ms", ttft_ms.p50, 3).add("ttft_p90_ms", ttft_ms.p90, 3);
  o.add("ttft_p95_ms", ttft_ms.p95, 3).add("ttft_p99_ms", ttft_ms.p99, 3);
  o.add("ttft_mean_ms", ttft_ms.mean, 3).add("ttft_max_ms", ttft_ms.max, 3);
  o.raw("slo_ms", fmt::format("{:g}", slo_ms)).add("slo_violation_rate", slo_violation_rate);
  if (!policy_stats.empty()) o.raw("policy_stats", stats_json(policy_stats));
  o.add("router", router).add("router_params", router_params);
  o.add("workers", workers).add("tensor_parallel", tensor_parallel);
  o.add("max_batch_tokens", max_batch_tokens).add("max_running", max_running);
  o.raw("time_scale", fmt::format("{:g}", time_scale)).raw("rate", fmt::format("{:g}", rate));
  o.add("clients", clients).raw("think_time_s", fmt::format("{:g}", think_time_s));
  o.raw("cache_outputs", cache_outputs ? "true" : "false");
  o.add("rejected", rejected).add("preemptions", preemptions);
  o.add("output_tokens", output_tokens).add("iterations", iterations).add("events", events);
  o.add("makespan_s", makespan_s).add("throughput_rps", throughput_rps, 4);
  o.add("output_tokens_per_s", output_tokens_per_s, 2);
  o.add("mean_in_system", mean_in_system, 4).add("total_sojourn_s", total_sojourn_s);
  add_latency(o, "queue_wait", queue_wait_ms);
  add_latency(o, "tpot", tpot_ms);
  add_latency(o, "e2e", e2e_ms);
  std::string per = "[";
  for (size_t w = 0; w < per_worker.size(); ++w) {
    const WorkerResult& r = per_worker[w];
    JsonObject x;
    x.add("requests", r.requests).add("block_accesses", r.block_accesses);
    x.add("block_hits", r.block_hits).add("hit_rate", r.hit_rate());
    x.add("preemptions", r.preemptions).add("evictions", r.evictions);
    x.add("busy_seconds", r.busy_seconds);
    x.add("utilisation", makespan_s > 0 ? r.busy_seconds / makespan_s : 0.0);
    per += (w ? "," : "") + x.str();
  }
  o.raw("per_worker", per + "]");
  if (!router_stats.empty()) o.raw("router_stats", stats_json(router_stats));
  o.add("sim_seconds", sim_seconds, 3);
  return o.str();
}

ServeResult parse_serve_result(const std::string& line, const std::string& path, uint64_t line_no) {
  JsonRecord j(line, path, line_no);
  if (j.str("mode") != "serve") j.fail("mode", "not a serve-mode result");
  ServeResult r;
  r.trace = j.str("trace");
  r.trace_fingerprint = j.str_or("trace_fingerprint", "");  // absent before it existed
  r.policy = j.str("policy");
  r.params = j.str("params");
  r.router = j.str("router");
  r.router_params = j.str("router_params");
  r.cost_model = j.str("cost_model");
  j.get("capacity_blocks", r.capacity_blocks);
  r.capacity_fraction = j.num_or("capacity_fraction", -1);
  r.capacity_gb = j.num_or("capacity_gb", 0);  // absent from results before it existed
  j.get("seed", r.seed);
  j.get("workers", r.workers);
  j.get("tensor_parallel", r.tensor_parallel);
  j.get("max_batch_tokens", r.max_batch_tokens);
  j.get("max_running", r.max_running);
  j.get("time_scale", r.time_scale);
  j.get("rate", r.rate);
  j.get("clients", r.clients);
  j.get("think_time_s", r.think_time_s);
  r.cache_outputs = j.boolean("cache_outputs");
  j.get("slo_ms", r.slo_ms);
  j.get("requests", r.requests);
  j.get("block_accesses", r.block_accesses);
  j.get("block_hits", r.block_hits);
  j.get("block_hit_rate", r.block_hit_rate);
  j.get("token_hit_rate", r.token_hit_rate);
  j.get("rejected", r.rejected);
  j.get("preemptions", r.preemptions);
  j.get("throughput_rps", r.throughput_rps);
  j.get("slo_violation_rate", r.slo_violation_rate);
  j.get("prompt_tokens", r.prompt_tokens);
  j.get("token_hits", r.token_hits);
  j.get("evictions", r.evictions);
  j.get("output_tokens", r.output_tokens);
  j.get("iterations", r.iterations);
  j.get("events", r.events);
  j.get("makespan_s", r.makespan_s);
  j.get("output_tokens_per_s", r.output_tokens_per_s);
  j.get("mean_in_system", r.mean_in_system);
  j.get("total_sojourn_s", r.total_sojourn_s);
  j.get("sim_seconds", r.sim_seconds);
  r.policy_stats = j.stats("policy_stats");
  r.router_stats = j.stats("router_stats");
  simdjson::dom::array workers;
  if (j.object()["per_worker"].get(workers)) j.fail("per_worker", "missing or not an array");
  for (simdjson::dom::element e : workers) {
    WorkerResult w;
    auto field = [&](const char* key, auto& out) {
      double v;
      if (e[key].get(v)) j.fail(std::string("per_worker.") + key, "missing or not a number");
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
  auto latency = [&](const std::string& name, LatencyStats& s) {
    j.get((name + "_mean_ms").c_str(), s.mean);
    j.get((name + "_p50_ms").c_str(), s.p50);
    j.get((name + "_p90_ms").c_str(), s.p90);
    j.get((name + "_p95_ms").c_str(), s.p95);
    j.get((name + "_p99_ms").c_str(), s.p99);
    j.get((name + "_max_ms").c_str(), s.max);
  };
  latency("ttft", r.ttft_ms);
  latency("queue_wait", r.queue_wait_ms);
  latency("tpot", r.tpot_ms);
  latency("e2e", r.e2e_ms);
  return r;
}

}  // namespace kvpolicy
