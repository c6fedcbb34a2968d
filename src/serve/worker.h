// One worker of serve mode: vLLM-style continuous batching over a ServingCache. The cluster
// (cluster.cc) owns the clock and the event queue; a worker plans an iteration when it starts
// and applies it when it ends.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kvpolicy/cache/serving_cache.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/route/router.h"
#include "kvpolicy/serve/serve.h"
#include "workload.h"

namespace kvpolicy::serve_detail {

// A request's progress, wherever it is (the cluster holds one per trace request).
struct RequestState {
  double arrival = -1, admitted = -1, first_token = -1, finish = -1;  // seconds
  uint32_t worker = 0;
  uint32_t generated = 0;     // output tokens produced so far
  uint64_t prefill_left = 0;  // tokens still to prefill in this admission
  uint64_t context = 0;       // tokens whose KV it holds (cached prefix included)
  uint32_t private_blocks = 0;
  uint32_t hit_blocks = 0;  // computed prefix found at its (last) admission
  // What the metrics count: hit_blocks at its first admission (after a preemption a request
  // finds its own computed blocks again; docs/serve.md, "Allocation").
  uint32_t counted_hits = 0;
  bool counted = false;
  uint32_t completions = 0;
  bool prefilling = false;
  bool transferred = false;  // P/D: its KV came from a prefill worker (docs/serve.md)
  std::vector<NodeId> path;  // its pinned prompt nodes while admitted
  // Memory tiers: the part of hit_blocks read from each lower tier at its (last) admission, and
  // at its first (what the metrics count, as counted_hits).
  std::array<uint32_t, LowerTiers::kMaxTiers> tier_hits{}, counted_tier_hits{};
};

class Worker {
 public:
  struct Config {
    uint32_t max_batch_tokens;
    uint32_t max_running;
    bool check_victims;
    // Chunked allocation and prefill/decode roles (issue 37, docs/serve.md).
    bool chunked = false;
    enum class Role : uint8_t { kBoth, kPrefill, kDecode } role = Role::kBoth;
    bool overlap_transfers = false;  // memory tiers: transfers overlap compute
    bool decode_cache = false;       // P/D decode worker: transferred KV joins its prefix cache
  };
  // `done(request, now, rejected)` is called when a request leaves the worker.
  Worker(uint32_t id, size_t capacity_blocks, const PolicySpec& policy, PolicyContext ctx,
         const CostModel& cost, const Config& config, const Workload& workload,
         std::vector<RequestState>& requests, std::function<void(uint32_t, double, bool)> done);

  void enqueue(uint32_t request);
  // P/D: a prefill worker calls `handoff(request, now)` when a request's prefill is done and it
  // has more tokens to produce; a decode worker receives its KV with receive_kv.
  void set_handoff(std::function<void(uint32_t, double)> handoff) { handoff_ = std::move(handoff); }
  void receive_kv(uint32_t request);
  // A prefill worker's KV of `request` has left over the link: its blocks are released.
  void kv_sent(uint32_t request, double now);
  // A request routed here whose KV is still on the link: it counts as waiting for routers.
  void expect_kv() { ++incoming_kv_; }
  // P/D's decode cache: pins this decode worker's computed prefix of the request's prompt until
  // its KV arrives and is admitted (those blocks are not sent); returns their number.
  uint32_t hold_prefix(uint32_t request);
  // The compute time of the iteration planned last (layer-wise transfer's overlap window).
  double compute_seconds() const { return compute_seconds_; }
  // Plans the next iteration at `now`; returns its duration, or a negative number when there
  // is nothing to run (the worker goes idle).
  double start_iteration(double now);
  // Applies the planned iteration, which ends at `now` (the last step of a stretch, if any).
  void end_iteration(double now);

  // Decode-only stretches (docs/serve.md, "Speed"): after start_iteration(start) planned an
  // iteration of `seconds`, extends it, when it holds only decodes, over the iterations that
  // would run the same batch: up to the first that completes a request or whose start needs a
  // new block. Returns the end of its last iteration, summed step by step as the stepped loop
  // sums them. Nothing a router reads changes within a stretch. It rests on: admission's answer
  // (ServingCache::fits) depends on the cache and the queue only, not on the time; a request
  // enqueued into a busy worker cuts its stretch (cut_stretch); and an iteration of decodes only
  // changes nothing but the decodes' tokens and blocks. A feature that breaks one of these (a
  // time-out in the cache, another way in) must end the stretch there.
  double plan_stretch(double start, double seconds);
  bool in_stretch() const { return stretch_steps_ > 1; }
  // A request was enqueued at `now` during a stretch: the stretch ends with the iteration in
  // progress at `now` (iterations ending at `now` have ended), whose end this returns.
  double cut_stretch(double now);
  // Iterations run inside stretches beyond their first (the cluster counts those it ran).
  uint64_t skipped_iterations() const { return skipped_iterations_; }

  bool busy() const { return busy_; }
  const WorkerLoad& load();
  uint32_t computed_prefix(std::span<const BlockKey> prompt) const {
    return cache_.computed_prefix(prompt);
  }
  // The blocks of `prompt` right after its HBM prefix that the lower tiers hold, one unbroken
  // run: [0] in DRAM, [1] on SSD or in the remote pool (ClusterView::lower_tier_prefix_blocks).
  std::array<uint32_t, 2> lower_tier_prefix(std::span<const BlockKey> prompt) const;
  const WorkerResult& result() const { return result_; }
  ServingCache& cache() { return cache_; }
  // Memory tiers: blocks of completed requests read from each lower tier, and the seconds of
  // lower-tier reads charged to iterations.
  const std::array<uint64_t, LowerTiers::kMaxTiers>& tier_hits() const { return tier_hits_; }
  double transfer_seconds() const { return transfer_seconds_; }

 private:
  struct Chunk {
    uint32_t request;
    uint32_t tokens;
  };
  uint64_t prompt_tokens(uint32_t r) const { return workload_.sequences.prompt_tokens[r]; }
  uint32_t target_tokens(uint32_t r) const {
    return std::max(1u, workload_.sequences.output_tokens[r]);
  }
  bool admit(uint32_t r, double now);
  // An admitted request runs, its first `cached` of `tokens` tokens found in the cache.
  void start_prefill(uint32_t r, uint64_t cached, uint64_t tokens, double now);
  void preempt(uint32_t r, double now);
  // Memory tiers: records the last admission's lower-tier hits and queues their reads at `now`.
  void charge_tier_reads(RequestState& s, double now);
  void complete(uint32_t r, double now);
  // Chunked allocation (worker_chunked.cc): prompt blocks and private blocks a request holds
  // once `end` tokens of its sequence are computed; admission with the cached prefix and the
  // first chunk's blocks; a running prefill's chunk ending at token `end`, preempting the newest
  // running requests (appended to `preempted`) while memory is short, false when it is itself.
  std::pair<uint32_t, uint32_t> blocks_through(uint32_t r, uint64_t end) const;
  bool admit_chunked(uint32_t r, double now, uint32_t budget);
  bool allocate_chunk(uint32_t r, uint64_t end, double now, std::vector<uint32_t>& preempted);
  // Whether request r (prompt + tokens produced) can never fit this worker's memory.
  bool never_fits(uint32_t r) const;
  // P/D (worker_pd.cc): admits transferred KV while it fits; hands a prefilled request off.
  void admit_transferred(double now);
  void hand_off(uint32_t r, double now);
  // P/D's decode cache: admits arrived KV into the prefix tree (the held prefix found, the rest
  // placed computed); false if it does not fit yet.
  bool admit_transferred_cached(uint32_t r, uint32_t need, double now);
  // Lets a request's hold go (if any).
  void release_hold(uint32_t r, double now);
  // Gives every decoding request room for its next token, preempting the newest if need be.
  void make_room_for_decodes(double now);

  uint32_t id_;
  ServingCache cache_;
  mutable std::vector<uint8_t> tier_found_;  // lower_tier_prefix's scratch
  const CostModel& cost_;
  Config config_;
  const Workload& workload_;
  std::vector<RequestState>& requests_;
  std::function<void(uint32_t, double, bool)> done_;
  std::deque<uint32_t> waiting_;
  std::deque<uint32_t> kv_waiting_;  // P/D decode worker: KV arrived, blocks not yet allocated
  uint32_t incoming_kv_ = 0;         // and routed here, KV still on the link
  struct Sending {
    std::vector<NodeId> path;
    uint32_t private_blocks;
  };
  std::unordered_map<uint32_t, Sending> sending_;           // P/D prefill worker: KV on the link
  std::unordered_map<uint32_t, std::vector<NodeId>> held_;  // P/D decode cache: held prefixes
  std::unordered_set<uint32_t> lost_hold_;  // holds given up to an idle worker's head of line
  double compute_seconds_ = 0;
  std::function<void(uint32_t, double)> handoff_;
  std::vector<uint32_t> running_;  // in admission order
  std::vector<Chunk> chunks_;      // the planned iteration's prefill chunks
  std::vector<uint32_t> decodes_;  // and its decodes
  // The planned stretch: its iterations' ends and durations (the first is start_iteration's).
  uint64_t stretch_steps_ = 0;
  std::vector<double> stretch_end_, stretch_seconds_;
  uint64_t skipped_iterations_ = 0;
  bool busy_ = false;
  uint64_t queued_prefill_ = 0;
  WorkerLoad load_;
  WorkerResult result_;
  // Memory tiers.
  std::array<uint64_t, LowerTiers::kMaxTiers> tier_hits_{};
  uint64_t preemptions_at_start_ = 0;  // of the iteration being planned
  // From the planned iteration's start to the arrival of the last read it admitted.
  double pending_transfer_s_ = 0;
  double transfer_seconds_ = 0;
};

}  // namespace kvpolicy::serve_detail
