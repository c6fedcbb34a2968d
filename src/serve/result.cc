// ServeResult as one JSON line: replay mode's fields under the same names, then serve mode's.
#include <fmt/format.h>

#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/core/resumable.h"
#include "kvpolicy/serve/result_schema.h"
#include "kvpolicy/serve/serve.h"
#include "kvpolicy/trace/json_record.h"

namespace kvpolicy {

std::string ServeResult::key() const {
  std::string key =
      fmt::format("serve|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{:g}|{:g}|{}|{:g}|{}|{}|{}|{:g}",
                  trace_identity(trace), trace_fingerprint, policy, params, router, router_params,
                  workers, capacity_blocks, seed, cost_model, time_scale, rate, clients,
                  think_time_s, cache_outputs, max_batch_tokens, max_running, slo_ms);
  if (arrival_jitter_s > 0) key += fmt::format("|jitter={:g}", arrival_jitter_s);
  // Allocation and P/D (issue 37): whole allocation without pools keeps the older key.
  if (allocation != "whole") key += "|alloc=" + allocation;
  if (prefill_workers || decode_workers)
    key += fmt::format("|pd={}+{}|{}|{:g}|{:g}", prefill_workers, decode_workers, decode_router,
                       kv_link_bytes_per_s, kv_link_latency_s);
  // P/D's second pass: results without decode cache, transferred after prefill keep their key.
  if (decode_cache) key += "|dcache";
  if (!kv_transfer.empty() && kv_transfer != "after-prefill") key += "|xfer=" + kv_transfer;
  return key + tiers_key();
}

std::string ServeResult::tiers_key() const {
  if (tiers.empty()) return "";  // the keys of results without tiers stay as they were
  std::string k = fmt::format("|tiers:{}:{}:{}", tier_placement, tier_write, overlap_transfers);
  for (const TierResult& t : tiers)
    k += fmt::format("|{}:{}:{}:{}:{}", t.tier, t.capacity_blocks, t.policy, t.admission, t.link);
  if (offload_min_priority >= 0) k += fmt::format("|offload>={}", offload_min_priority);
  return k;
}

std::string ServeResult::to_json() const {
  JsonObject o;
  for (const ServeResultField& f : serve_result_fields()) f.write(*this, o);
  return o.str();
}

ServeResult parse_serve_result(const std::string& line, const std::string& path, uint64_t line_no) {
  JsonRecord j(line, path, line_no);
  ServeResult r;
  for (const ServeResultField& f : serve_result_fields()) f.read(j, r);
  return r;
}

}  // namespace kvpolicy
