// `size --json`'s rows, declared once (trace/result_field.h; docs/formats.md's tables are checked
// against them).
#include <fmt/format.h>

#include "kvpolicy/app/size.h"
#include "kvpolicy/core/json_writer.h"

namespace kvpolicy::app {
namespace {

using namespace result_fields;
using Row = SizeRow;

// A number that is null when `present` says the row has none.
template <typename T>
ResultFieldOf<Row> nullable(std::string name, T Row::*m, bool (*present)(const Row&),
                            std::string type, std::string unit, std::string desc) {
  std::string key = name;
  return {name,
          std::move(type),
          std::move(unit),
          std::move(desc),
          [key, m, present](const Row& r, JsonObject& o) {
            if (!present(r))
              o.add_null(key);
            else if constexpr (std::is_floating_point_v<T>)
              o.add(key, r.*m, 6);
            else
              o.add(key, r.*m);
          },
          [key, m](const JsonRecord& j, Row& r) {
            if (j.num_or(key.c_str(), -1) >= 0) j.get(key.c_str(), r.*m);
          }};
}

// A target's number, null when it was not asked.
ResultFieldOf<Row> asked(std::string name, std::optional<double> Row::*m, std::string unit,
                         std::string desc) {
  std::string key = name;
  return {name,
          "number or null",
          std::move(unit),
          std::move(desc),
          [key, m](const Row& r, JsonObject& o) {
            if (r.*m)
              o.raw(key, fmt::format("{:g}", *(r.*m)));
            else
              o.add_null(key);
          },
          [key, m](const JsonRecord& j, Row& r) {
            double v = j.num_or(key.c_str(), -1);
            if (v >= 0) r.*m = v;
          }};
}

bool has_capacity(const Row& r) { return r.meets || (r.kind != "answer" && r.kind != "replay"); }
bool has_serve(const Row& r) { return r.kind != "replay"; }

std::vector<ResultFieldOf<Row>> fields() {
  std::vector<ResultFieldOf<Row>> f;
  f.push_back(text("kind", &Row::kind,
                   "`gpu` (the run at the GPU's full KV memory), `probe` (a run of the search), "
                   "`answer` (a worker count's answer) or `replay` (the replay cache's answer)"));
  f.push_back(text("trace", &Row::trace, "the trace's name (its path as given)"));
  f.push_back(text("router", &Row::router, "the router (`replay`: none)"));
  f.push_back(text("policy", &Row::policy, "the eviction policy"));
  f.push_back(text("cost_model", &Row::cost_model, "the cost model's label (model, GPU, tp)"));
  f.push_back(text("gpu", &Row::gpu, "the GPU preset"));
  f.push_back(text("target", &Row::target, "what must be met, as printed"));
  f.push_back(asked("target_block_hit_rate", &Row::target_block_hit, "",
                    "`--target-hit` as a share; null if not asked"));
  f.push_back(asked("target_token_hit_rate", &Row::target_token_hit, "",
                    "`--target-token-hit` as a share; null if not asked"));
  f.push_back(asked("slo_ttft_p50_ms", &Row::slo_p50, "ms", "`--slo-ttft-p50`; null if not asked"));
  f.push_back(asked("slo_ttft_p90_ms", &Row::slo_p90, "ms", "`--slo-ttft-p90`; null if not asked"));
  f.push_back(asked("slo_ttft_p99_ms", &Row::slo_p99, "ms", "`--slo-ttft-p99`; null if not asked"));
  f.push_back(integer("workers", &Row::workers, "",
                      "replicas behind the router (`replay`: 0, one cache for the whole trace)"));
  f.push_back(integer("tp", &Row::tp, "",
                      "GPUs per replica of the run (`--tp`, or the larger tp searched)"));
  f.push_back(number("gpu_kv_gb", &Row::gpu_kv_gb, 6, -1, "GB",
                     "a replica's KV memory on its GPUs: tp x HBM x utilisation - weights - "
                     "reserve"));
  f.push_back(nullable("capacity_blocks", &Row::capacity_blocks, has_capacity, "int or null",
                       "blocks", "KV memory per replica; null in an answer no capacity met"));
  f.push_back(nullable("capacity_gb", &Row::capacity_gb, has_capacity, "number or null", "GB",
                       "the same in GB"));
  f.push_back(flag<Row>("fits_gpu", &Row::fits_gpu, "`capacity_gb` <= `gpu_kv_gb`"));
  f.push_back(integer("tp_needed", &Row::tp_needed, "",
                      "the smallest tp in tp, 2tp, 4tp, ... (<= `--max-tp`) whose replica holds "
                      "`capacity_gb`; 0 if none"));
  f.push_back(integer("gpus", &Row::gpus, "", "`workers` x `tp_needed`"));
  f.push_back(number("block_hit_rate", &Row::block_hit_rate, 6, -1, "",
                     "block hit rate (an answer not met: its run nearest the targets)"));
  f.push_back(number("token_hit_rate", &Row::token_hit_rate, 6, -1, "",
                     "token hit rate (vLLM's prefix-cache hit rate), the same way"));
  const char* ttft = "serve-mode TTFT percentile (null in `replay`)";
  f.push_back(nullable("ttft_p50_ms", &Row::ttft_p50_ms, has_serve, "number or null", "ms", ttft));
  f.push_back(nullable("ttft_p90_ms", &Row::ttft_p90_ms, has_serve, "number or null", "ms", ttft));
  f.push_back(nullable("ttft_p99_ms", &Row::ttft_p99_ms, has_serve, "number or null", "ms", ttft));
  f.push_back(integer("preemptions", &Row::preemptions, "", "serve mode's preemptions"));
  f.push_back(integer("rejected", &Row::rejected, "", "requests that never fit a worker"));
  f.push_back(flag<Row>("meets", &Row::meets, "the run meets every target"));
  f.push_back(
      flag<Row>("non_monotone", &Row::non_monotone,
                "`answer`: a larger capacity of the search measured worse (hit rate lower by "
                "more than 0.1 point, or TTFT higher by more than 1 %): the smallest capacity "
                "found, not a proven minimum"));
  f.push_back(integer("runs", &Row::runs, "", "`answer`: serve runs of its search"));
  f.push_back(text("allocation", &Row::allocation,
                   "serve's `--allocation` (`chunked` or `whole`) of the runs"));
  f.push_back(integer("prefill_workers", &Row::prefill_workers, "",
                      "P/D: of `workers`, the prefill pool's (0: colocated)"));
  f.push_back(integer("decode_workers", &Row::decode_workers, "",
                      "P/D: of `workers`, the decode pool's (0: colocated)"));
  return f;
}

Row base_row(const SizeRun& run) {
  Row row;
  row.trace = run.trace->name;
  row.router = run.router;
  row.policy = run.policy;
  row.cost_model = run.cost.label();
  row.gpu = run.gpu.gpu;
  row.allocation = run.allocation;
  row.prefill_workers = run.prefill_workers;
  row.decode_workers = run.decode_workers;
  row.target = run.targets.text();
  row.target_block_hit = run.targets.block_hit;
  row.target_token_hit = run.targets.token_hit;
  row.slo_p50 = run.targets.ttft_p50;
  row.slo_p90 = run.targets.ttft_p90;
  row.slo_p99 = run.targets.ttft_p99;
  row.tp = run.gpu.tp;
  row.gpu_kv_gb = run.gpu.kv_bytes / 1e9;
  return row;
}

void set_capacity(const SizeRun& run, Row& row, size_t blocks, uint32_t workers) {
  row.capacity_blocks = blocks;
  row.capacity_gb = double(blocks) * run.cost.kv_bytes_per_block() / 1e9;
  row.fits_gpu = row.capacity_gb * 1e9 <= run.gpu.kv_bytes;
  row.tp_needed =
      tp_that_holds(run.cost, row.capacity_gb * 1e9, run.gpu.utilization,
                    run.gpu.tp ? run.gpu.reserve_bytes / run.gpu.tp / 1e9 : 0, run.max_tp);
  row.gpus = uint64_t(workers) * row.tp_needed;
}

void set_result(Row& row, const ServeResult& r) {
  row.block_hit_rate = r.block_hit_rate;
  row.token_hit_rate = r.token_hit_rate;
  row.ttft_p50_ms = r.ttft_ms.p50;
  row.ttft_p90_ms = r.ttft_ms.p90;
  row.ttft_p99_ms = r.ttft_ms.p99;
  row.preemptions = r.preemptions;
  row.rejected = r.rejected;
}

std::string json(const Row& row) {
  JsonObject o;
  for (const auto& f : size_fields()) f.write(row, o);
  return o.str();
}

}  // namespace

const std::vector<ResultFieldOf<SizeRow>>& size_fields() {
  static const std::vector<ResultFieldOf<SizeRow>> f = fields();
  return f;
}

namespace {

// A search's rows (docs/formats.md), then those of its searches at a larger tp.
void search_rows(const SizeRun& run, const SizeSearch& s, std::vector<std::string>& out) {
  auto head = [&](const char* kind) {
    Row row = base_row(run);
    row.kind = kind;
    row.workers = s.workers;
    row.tp = s.tp;
    row.cost_model = s.cost_model;
    row.gpu_kv_gb = s.gpu.kv_bytes / 1e9;
    return row;
  };
  auto capacity = [&](Row& row, size_t blocks) {
    set_capacity(run, row, blocks, s.workers);
    row.fits_gpu = row.capacity_gb * 1e9 <= s.gpu.kv_bytes;
  };
  if (s.at_gpu) {
    Row row = head("gpu");
    capacity(row, s.at_gpu->capacity_blocks);
    set_result(row, *s.at_gpu);
    row.meets = run.targets.met(*s.at_gpu);
    out.push_back(json(row));
  }
  for (const SizeProbe& p : s.probes) {
    Row row = head("probe");
    capacity(row, p.capacity_blocks);
    set_result(row, p.result);
    row.meets = p.meets;
    out.push_back(json(row));
  }
  Row row = head("answer");
  row.meets = s.answer.has_value();
  const SizeProbe* at = s.answer ? &s.probes[*s.answer] : s.best ? &s.probes[*s.best] : nullptr;
  if (at) {
    capacity(row, at->capacity_blocks);
    set_result(row, at->result);
  }
  if (!s.answer) row.fits_gpu = false, row.tp_needed = 0, row.gpus = 0;
  row.non_monotone = s.non_monotone;
  row.runs = s.probes.size();
  out.push_back(json(row));
  for (const SizeSearch& w : s.larger_tp) {
    SizeSearch alone = w;  // its own rows only: larger_tp is flat under the first search
    alone.larger_tp.clear();
    search_rows(run, alone, out);
  }
}

}  // namespace

std::vector<std::string> size_rows(const SizeRun& run) {
  std::vector<std::string> out;
  for (const SizeSearch& s : run.searches) search_rows(run, s, out);
  if (run.replay_asked) {
    Row row = base_row(run);
    row.kind = "replay";
    row.router = "";
    row.workers = 0;
    row.prefill_workers = row.decode_workers = 0;
    row.meets = run.replay_blocks.has_value();
    if (run.replay_blocks) set_capacity(run, row, *run.replay_blocks, 1);
    row.block_hit_rate = run.replay_block_hit;
    row.token_hit_rate = run.replay_token_hit;
    out.push_back(json(row));
  }
  return out;
}

}  // namespace kvpolicy::app
