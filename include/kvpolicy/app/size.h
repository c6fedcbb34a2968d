// Sizing a deployment as both front ends ask for it: for each worker count, the smallest KV
// memory per replica whose serve-mode run (router, batching, running requests' memory, queueing)
// meets a hit-rate target and/or a TTFT SLO, found by bisection on a log scale; set against the
// KV memory the GPUs leave, and beside the replay cache's answer (docs/serve.md, "Sizing").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvpolicy/app/inputs.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/serve/serve.h"
#include "kvpolicy/trace/result_field.h"

namespace kvpolicy::app {

// A replica's KV memory as vLLM sizes it: tp GPUs x HBM x utilisation, less one copy of the
// weights (sharded across the tp GPUs) and a stated reserve per GPU for activations, CUDA graphs
// and communication buffers (what vLLM's profiling run measures; not modelled here).
struct GpuKvMemory {
  uint32_t tp = 1;
  double gpu_bytes = 0;  // one GPU's HBM
  double utilization = 0.9;
  double weight_bytes = 0;   // the whole model
  double reserve_bytes = 0;  // tp x the reserve per GPU
  double kv_bytes = 0;       // what is left (<= 0: the model does not fit)
  size_t kv_blocks = 0;      // of the trace's block size
  std::string gpu;           // the GPU preset's name
};
constexpr double kDefaultReservePerGpuGb = 2.0;
// `cost` must carry tp (CostModel::tensor_parallel) and the trace's block size.
GpuKvMemory gpu_kv_memory(const CostModel& cost, double utilization, double reserve_gb_per_gpu);

// The smallest tensor-parallel degree in {tp, 2tp, 4tp, ...} up to `max_tp` whose replica holds
// `kv_bytes` of KV; 0 when none does.
uint32_t tp_that_holds(const CostModel& cost, double kv_bytes, double utilization,
                       double reserve_gb_per_gpu, uint32_t max_tp = 64);

// What a deployment must meet: any of the hit-rate floors and TTFT ceilings given.
struct SizeTargets {
  std::optional<double> block_hit, token_hit;          // shares
  std::optional<double> ttft_p50, ttft_p90, ttft_p99;  // ms, serve mode's TTFT
  bool any() const { return block_hit || token_hit || ttft_p50 || ttft_p90 || ttft_p99; }
  bool met(const ServeResult& r) const;
  // The hit-rate targets only (and every request served).
  bool hits_met(const ServeResult& r) const;
  // How near a run comes to meeting them all: the smallest ratio over the targets of what it
  // reached to what was asked (hit rate / floor, ceiling / TTFT), each at most 1; 1 when met.
  double closeness(const ServeResult& r) const;
  // "block hit >= 30 %, TTFT P90 <= 500 ms"
  std::string text() const;
};

inline constexpr const char* kDefaultSizeWorkers = "1,2,4,8";

struct SizeOptions {
  TraceOptions trace;
  CostOptions cost;
  uint32_t tp = 1;
  uint32_t max_tp = 8;                        // the largest tp searched (8: the GPUs of one node)
  std::string workers = kDefaultSizeWorkers;  // counts, comma-separated, or a range a-b
  std::string router = "cache_aware";
  std::string policy = "lru";
  std::string target_hit;        // block hit rate: "30%" or 0.3
  std::string target_token_hit;  // token hit rate, same forms
  double slo_ttft_p50_ms = 0, slo_ttft_p90_ms = 0, slo_ttft_p99_ms = 0;  // 0 = none
  double gpu_memory_utilization = 0.9;
  double reserve_gb_per_gpu = kDefaultReservePerGpuGb;
  // The bisection stops when the bracket's ends are within this factor minus one of each other.
  double tolerance = 0.02;
  // Rate (0: as traced), batching, SLO for the violation share, seed; allocation, and P/D's
  // pools, decode router, KV link, decode cache and transfer (docs/serve.md, "Sizing"): with
  // pools, the one deployment of prefill_workers + decode_workers workers is searched.
  ServeOptions base;
  bool no_cache_outputs = false;
  unsigned jobs = 0;  // worker counts searched at once; 0 = every core
};

// One serve run of a search.
struct SizeProbe {
  size_t capacity_blocks = 0;
  bool meets = false;
  ServeResult result;
};

// The search for one worker count at one tp.
struct SizeSearch {
  uint32_t workers = 1;
  uint32_t tp = 1;  // GPUs per replica of these runs
  GpuKvMemory gpu;  // their KV memory
  std::string cost_model;
  std::optional<ServeResult> at_gpu;    // the run at the GPU's full KV memory (if it leaves any)
  std::vector<SizeProbe> probes;        // every run, by capacity
  size_t lo_blocks = 0, hi_blocks = 0;  // the range searched
  std::optional<size_t> answer;         // index in probes: the smallest capacity found meeting
  std::optional<size_t> below;          // index in probes: the largest failing one below it
  std::optional<size_t> best;           // index in probes: the closest to the targets
  bool answer_is_floor = false;         // the answer is lo_blocks: nothing smaller was tried
  bool non_monotone = false;            // a larger capacity measured worse (see size.cc)
  double dip = 0;                       // the largest fall of a hit rate with more capacity
  // The tp (from --tp, doubling, up to --max-tp) whose replica holds the answer; 0: none.
  uint32_t tp_needed = 0;
  // When the answer needs more GPUs per replica than `tp`: the search again at tp_needed; when
  // nothing met only because of TTFT, again at twice the tp (and so on, up to --max-tp).
  std::vector<SizeSearch> larger_tp;

  const SizeSearch& final() const { return larger_tp.empty() ? *this : larger_tp.back(); }
  // An answer that fits this search's own GPUs.
  bool fits() const { return answer && tp_needed == tp; }
};

struct SizeRun {
  std::shared_ptr<const Trace> trace;
  CostModel cost;  // with tp and the trace's block size
  GpuKvMemory gpu;
  uint32_t max_tp = 8;
  SizeTargets targets;
  std::string router, policy;
  double rate = 0;  // the mean arrival rate served, requests/s
  std::vector<SizeSearch> searches;
  // The replay cache's answer: one LRU cache for the whole trace (`mrc --target-hit`), for the
  // hit-rate targets; nullopt when no hit-rate target or out of reach.
  bool replay_asked = false;
  std::optional<size_t> replay_blocks;
  double replay_block_hit = 0, replay_token_hit = 0;
  // Index in searches: the fewest GPUs with an answer that fits --tp's GPUs; and the fewest with
  // one that fits a larger tp's (searched there).
  std::optional<size_t> chosen, wider;
  std::optional<size_t> nearest;  // index in searches: none chosen, the closest at the GPU
  // The deployment's allocation and P/D pools (0 and 0: colocated; then every search has
  // prefill_workers + decode_workers workers).
  std::string allocation;
  uint32_t prefill_workers = 0, decode_workers = 0;
};

// Checks what needs no trace; returns the targets. Throws ConfigError.
SizeTargets check_size_options(const SizeOptions& o);
// "1,2,4,8" or "1-8" (every count between). Throws ConfigError.
std::vector<uint32_t> parse_worker_counts(const std::string& text);
// The whole search: on `trace` when given, else the one o.trace names.
SizeRun run_size(const SizeOptions& o, const Trace* trace = nullptr);

// The --json rows: per worker count its run at the GPU's memory (kind "gpu"), every probe of the
// search (kind "probe"), its answer (kind "answer"), and the same for each larger tp searched;
// then the replay cache's answer (kind "replay"). docs/formats.md.
std::vector<std::string> size_rows(const SizeRun& run);

struct SizeRow {
  std::string kind, trace, router, policy, cost_model, gpu;
  uint32_t workers = 0, tp = 1;
  uint64_t gpus = 0;
  size_t capacity_blocks = 0;
  double capacity_gb = 0, gpu_kv_gb = 0;
  double block_hit_rate = 0, token_hit_rate = 0;
  double ttft_p50_ms = 0, ttft_p90_ms = 0, ttft_p99_ms = 0;
  uint64_t preemptions = 0, rejected = 0;
  bool meets = false, non_monotone = false, fits_gpu = false;
  std::string target;
  std::optional<double> target_block_hit, target_token_hit, slo_p50, slo_p90, slo_p99;
  size_t runs = 0;
  uint32_t tp_needed = 0;
  std::string allocation;
  uint32_t prefill_workers = 0, decode_workers = 0;
};
const std::vector<ResultFieldOf<SizeRow>>& size_fields();

}  // namespace kvpolicy::app
