#include "kvpolicy/sim/result_schema.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

using namespace result_fields;

std::vector<ResultField> make_fields() {
  using R = ReplayResult;
  std::vector<ResultField> f;
  f.push_back(text("trace", &R::trace, "the trace's name (its path as given)"));
  f.push_back(text("trace_fingerprint", &R::trace_fingerprint,
                   "the trace's content as replayed: `requests/block accesses/checksum` (64-bit "
                   "hex over each request's time, prompt and output tokens and block keys, and "
                   "its retention hints when it has any; the same read whole or streamed)",
                   ""));
  f.push_back(optional_text("assumptions", &R::assumptions,
                            "present when the trace's prompts were made by an assumption model "
                            "from a log of lengths only (`trace import --assume`): the model "
                            "with every default filled in; the hit rates then measure the "
                            "assumptions, not the traffic"));
  f.push_back(text("policy", &R::policy, "policy name"));
  f.push_back(text("params", &R::params, "the policy's `key=value,...` parameters as given"));
  f.push_back({"offline", "bool", "",
               "the policy (or the DRAM tier's) reads the trace's future: a reference, not "
               "deployable (false when absent, in files written before this field)",
               [](const R& r, JsonObject& o) { o.raw("offline", r.offline ? "true" : "false"); },
               [](const JsonRecord& j, R& r) { r.offline = j.boolean_or("offline", false); },
               [](const R& r) { return std::string(r.offline ? "1" : "0"); }});
  f.push_back({"model_fitted",
               "bool",
               "",
               "present for a learned policy: whether its model was ever fitted (from "
               "`policy_stats`)",
               [](const R& r, JsonObject& o) {
                 if (std::optional<bool> fitted = r.model_fitted())
                   o.raw("model_fitted", *fitted ? "true" : "false");
               },
               {},
               {}});
  f.push_back(integer("capacity_blocks", &R::capacity_blocks, "blocks", "HBM capacity in blocks"));
  f.push_back(number_or_null("capacity_fraction", &R::capacity_fraction,
                             "the capacity as a fraction of unique blocks, when given so"));
  f.push_back(number("capacity_gb", &R::capacity_gb, 3, 4, "GB",
                     "`capacity_blocks` as KV memory, GB (10^9 bytes): blocks × the cost model's "
                     "KV bytes per block (`cost_model`, `--kv-dtype`); absent (read as 0) in "
                     "files written before this field",
                     0.0));
  f.push_back(integer("seed", &R::seed, "", "seed of randomized policies and predictors"));
  f.push_back(integer("requests", &R::requests, "", "requests replayed"));
  f.push_back(
      integer("block_accesses", &R::block_accesses, "blocks", "prompt blocks over all requests"));
  f.push_back(integer("block_hits", &R::block_hits, "blocks",
                      "blocks of the longest cached prefix (either tier)"));
  f.push_back(
      number("block_hit_rate", &R::block_hit_rate, 6, 6, "", "`block_hits` / `block_accesses`"));
  f.push_back(integer("prompt_tokens", &R::prompt_tokens, "tokens", "prompt tokens replayed"));
  f.push_back(integer("token_hits", &R::token_hits, "tokens",
                      "tokens of the longest cached prefix (a partial last block counts its "
                      "tokens)"));
  f.push_back(
      number("token_hit_rate", &R::token_hit_rate, 6, 6, "", "`token_hits` / `prompt_tokens`"));
  f.push_back(number("infinite_hit_rate", &R::infinite_hit_rate, 6, 6, "",
                     "hit rate of an infinite cache on this trace (the ceiling)"));
  f.push_back(integer("evictions", &R::evictions, "blocks", "blocks dropped from the cache"));
  f.push_back(integer("uncached_blocks", &R::uncached_blocks, "blocks",
                      "prompt blocks not inserted because every cached block was pinned"));
  f.push_back(
      number("replay_seconds", &R::replay_seconds, 6, -1, "s", "wall time of the replay loop"));
  f.push_back(number("replay_cpu_seconds", &R::replay_cpu_seconds, 6, -1, "s",
                     "the replaying thread's CPU time in the loop (read as 0 when absent)", 0.0));
  f.push_back(number("ns_per_access", &R::ns_per_access, 2, 2, "ns",
                     "wall time of the replay loop per block access"));
  f.push_back(number("bytes_per_block", &R::bytes_per_block, 1, -1, "bytes",
                     "tree + policy metadata bytes per cached block at the end"));
  f.push_back(integer("dram_capacity_blocks", &R::dram_capacity_blocks, "blocks",
                      "DRAM tier capacity (0 with one tier)"));
  f.push_back(text("dram_policy", &R::dram_policy, "the DRAM tier's policy (\"\" with one tier)"));
  f.push_back(
      integer("dram_hits", &R::dram_hits, "blocks", "block hits served from DRAM (then promoted)"));
  f.push_back(integer("demotions", &R::demotions, "blocks", "HBM blocks moved to DRAM"));
  // The minimum priority for offload: both fields only when it is set (older rows: off); not
  // CSV columns.
  f.push_back({"offload_min_priority", "int", "",
               "with a DRAM tier and `--offload-min-priority`: the minimum retention priority "
               "an HBM victim needs to be demoted (TensorRT-LLM's "
               "`secondary_offload_min_priority`); absent (read as -1) when off",
               [](const R& r, JsonObject& o) {
                 if (r.offload_min_priority >= 0)
                   o.add("offload_min_priority", r.offload_min_priority);
               },
               [](const JsonRecord& j, R& r) {
                 r.offload_min_priority =
                     static_cast<int32_t>(j.num_or("offload_min_priority", -1));
               }});
  f.push_back({"offload_skipped_priority", "int", "blocks",
               "with `offload_min_priority`: HBM victims below it, dropped instead of demoted "
               "(counted in `evictions` too)",
               [](const R& r, JsonObject& o) {
                 if (r.offload_min_priority >= 0)
                   o.add("offload_skipped_priority", r.offload_skipped_priority);
               },
               [](const JsonRecord& j, R& r) {
                 r.offload_skipped_priority =
                     static_cast<uint64_t>(j.num_or("offload_skipped_priority", 0));
               }});
  f.push_back(
      number("hbm_hit_rate", &R::hbm_hit_rate, 6, -1, "", "hits in HBM / `block_accesses`"));
  f.push_back(
      number("dram_hit_rate", &R::dram_hit_rate, 6, -1, "", "hits in DRAM / `block_accesses`"));
  f.push_back(
      text("cost_model", &R::cost_model, "the model and GPU whose prefill times give TTFT"));
  const char* ttft =
      "replay-mode TTFT (prefill of uncached tokens plus DRAM transfers, no queueing); "
      "nearest-rank percentiles, and the mean";
  f.push_back(number("ttft_p50_ms", &R::ttft_p50_ms, 3, 3, "ms", ttft));
  f.push_back(number("ttft_p90_ms", &R::ttft_p90_ms, 3, 3, "ms", ttft));
  f.push_back(number("ttft_p95_ms", &R::ttft_p95_ms, 3, 3, "ms", ttft));
  f.push_back(number("ttft_p99_ms", &R::ttft_p99_ms, 3, 3, "ms", ttft));
  f.push_back(number("ttft_mean_ms", &R::ttft_mean_ms, 3, 3, "ms", ttft));
  f.push_back(number("tel_ms", &R::tel_ms, 3, 3, "ms",
                     "tail excess latency: the sum of max(0, TTFT − `xi_ms`)"));
  f.push_back(setting("xi_ms", &R::xi_ms, "ms", "TEL's threshold ξ"));
  f.push_back(setting("slo_ms", &R::slo_ms, "ms", "the TTFT SLO"));
  f.push_back(number("slo_violation_rate", &R::slo_violation_rate, 6, 6, "",
                     "the share of requests whose TTFT exceeds `slo_ms`"));
  f.push_back({"policy_stats",
               "object",
               "",
               "optional per-policy counters (e.g. `predictor_calls` of learned policies)",
               [](const R& r, JsonObject& o) {
                 if (r.policy_stats.empty()) return;
                 JsonObject stats;
                 for (auto& [key, value] : r.policy_stats) {
                   if (std::isfinite(value))
                     stats.raw(key, fmt::format("{}", value));
                   else
                     stats.add_null(key);
                 }
                 o.raw("policy_stats", stats.str());
               },
               [](const JsonRecord& j, R& r) { r.policy_stats = j.stats("policy_stats"); },
               {}});
  return f;
}

}  // namespace

const std::vector<ResultField>& replay_result_fields() {
  static const std::vector<ResultField> fields = make_fields();
  return fields;
}

const ResultField& replay_result_field(const std::string& name) {
  if (const ResultField* f = find_result_field(replay_result_fields(), name)) return *f;
  throw Error("no replay result field '" + name + "'");
}

const std::vector<std::string>& replay_csv_columns() {
  // The identifying fields, then hit rates, capacity in GB and the TTFT metrics.
  static const std::vector<std::string> columns = {"trace",
                                                   "policy",
                                                   "params",
                                                   "offline",
                                                   "capacity_blocks",
                                                   "capacity_fraction",
                                                   "capacity_gb",
                                                   "dram_capacity_blocks",
                                                   "dram_policy",
                                                   "seed",
                                                   "block_hit_rate",
                                                   "token_hit_rate",
                                                   "infinite_hit_rate",
                                                   "evictions",
                                                   "cost_model",
                                                   "ttft_mean_ms",
                                                   "ttft_p50_ms",
                                                   "ttft_p90_ms",
                                                   "ttft_p95_ms",
                                                   "ttft_p99_ms",
                                                   "slo_ms",
                                                   "slo_violation_rate",
                                                   "xi_ms",
                                                   "tel_ms",
                                                   "ns_per_access"};
  return columns;
}

}  // namespace kvpolicy
