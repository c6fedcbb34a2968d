// The router contract: serve mode asks a router which worker gets each arriving request, and
// tells it when the request completes. A router sees what it would see in production: the
// cluster's per-worker load, and either the workers' exact cached prefixes (KV events, as
// NVIDIA Dynamo and llm-d's precise scorer get them) or only what it routed itself (its own
// approximate tree, as SGLang's router and LBGR keep). docs/routers.md states each.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kvpolicy/core/access.h"
#include "kvpolicy/core/params.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

using WorkerId = uint32_t;

// What the cluster reports of one worker at the moment of a routing decision.
struct WorkerLoad {
  uint32_t in_flight = 0;  // requests routed to it and not completed (waiting + running)
  uint32_t waiting = 0;    // requests queued, not admitted yet
  uint32_t running = 0;    // requests admitted (prefilling or decoding)
  uint64_t queued_prefill_tokens = 0;  // prompt tokens still to prefill, waiting and running
  uint64_t active_blocks = 0;          // KV blocks held by running requests
  uint64_t cached_blocks = 0;          // blocks in its prefix cache (pinned or not)
  uint64_t capacity_blocks = 0;        // its KV memory in blocks
  double kv_utilisation() const {
    return capacity_blocks ? double(active_blocks) / double(capacity_blocks) : 0.0;
  }
};

// The cluster as a router sees it when a request arrives.
class ClusterView {
 public:
  virtual ~ClusterView() = default;
  virtual uint32_t workers() const = 0;
  virtual const WorkerLoad& load(WorkerId w) const = 0;
  // Exact longest cached prefix of `request` on worker w, in blocks (the KV-event view).
  virtual uint32_t cached_prefix_blocks(WorkerId w, const RequestView& request) const = 0;
  // The blocks of `request` right after that HBM prefix which w's lower memory tiers hold, as
  // one unbroken run (KV events of offloaded blocks, as Dynamo's KVBM sends them): [0] in host
  // DRAM, [1] on SSD or in the shared remote pool. {0, 0} without lower tiers (the default).
  virtual std::array<uint32_t, 2> lower_tier_prefix_blocks(WorkerId w,
                                                           const RequestView& request) const {
    (void)w, (void)request;
    return {0, 0};
  }
  virtual Time now() const = 0;
  virtual uint32_t block_tokens() const = 0;
};

// What the cluster tells a router when one of its requests completes.
struct Completion {
  Time arrival = 0;
  Time first_token = 0;
  Time finish = 0;
  uint32_t cached_blocks = 0;  // prompt blocks the worker found cached at admission
};

class Router {
 public:
  virtual ~Router() = default;
  // The worker for `request`, in [0, cluster.workers()).
  virtual WorkerId route(const RequestView& request, const ClusterView& cluster) = 0;
  // `request`, routed earlier to `worker`, has completed.
  virtual void on_complete(const RequestView& request, WorkerId worker,
                           const Completion& completion, const ClusterView& cluster) {
    (void)request, (void)worker, (void)completion, (void)cluster;
  }
  // Named counters reported after a run (e.g. imbalanced decisions, learned biases).
  virtual PolicyStats stats() const { return {}; }
  // What the router still attributes to requests in flight (LBGR's queue slots and routing
  // records): 0 once every request it routed has completed. The contract suite checks it.
  virtual double in_flight_state() const { return 0.0; }
  // Its internal state about worker w now (LBGR: queue slot and learned bias), as named
  // numbers appended to `out`, the same names in the same order for every w; serve mode's
  // per-worker trace records them (docs/serve.md, "Per-worker trace"). Default: none.
  virtual void worker_state(WorkerId w, std::vector<std::pair<std::string, double>>& out) const {
    (void)w, (void)out;
  }
};

// One request of the trace as an offline router knows it in advance (RouterInfo::needs_future):
// `request` with its prompt blocks and its arrival time in the simulation, and `sequence`, its
// prompt then the answer blocks a worker caches when it finishes (docs/routers.md, offline_bound).
struct FutureRequest {
  RequestView request;
  std::span<const BlockKey> sequence;
};

struct RouterContext {
  uint32_t workers = 1;
  uint32_t block_tokens = 16;
  uint64_t seed = 1;
  // Per-token prefill cost the router may assume (LBGR's service estimate), seconds.
  double prefill_seconds_per_token = 1e-4;
  // One worker's KV memory in tokens, 0 when unknown (lbgr's max_tree_tokens=-1 sizes its tree by
  // it).
  uint64_t worker_kv_tokens = 0;
  // One worker's cap on running sequences (vLLM's max_num_seqs), 0 when unknown (lbgr's
  // admission term reads it).
  uint32_t worker_max_running = 0;
  // The whole trace by request index, in arrival order; set only for routers that declare
  // needs_future (as PolicyContext::future is for Belady). Others must not read it.
  const std::vector<FutureRequest>* future = nullptr;
};

struct RouterInfo {
  std::string name;
  std::string summary;  // how it picks, in one line (README's router table)
  std::string source;   // the system or paper it comes from
  std::vector<ParamSpec> params = {};
  std::vector<std::string> variants = {};  // parameter settings the contract suite also runs
  bool randomized = false;
  // Randomized only under some parameter settings (dynamo with router_temperature > 0): when
  // set, the contract suite asks it about each variant instead of reading `randomized`.
  std::function<bool(const Params&)> randomized_with = {};
  // The most workers it can route over (its approximate tree keeps a 64-bit holder mask);
  // 0 = any number. make_router rejects a larger cluster.
  uint32_t max_workers = 0;
  // Reads the trace's future (RouterContext::future): an offline reference, not deployable; left
  // out of every "all online routers" set (online_router_names).
  bool needs_future = false;
  std::function<std::unique_ptr<Router>(const RouterContext&, const Params&)> make = {};
};

class RouterRegistry {
 public:
  static RouterRegistry& instance();
  void add(RouterInfo info);
  const RouterInfo& get(const std::string& name) const;  // throws ConfigError naming the known
  const std::vector<RouterInfo>& all() const { return routers_; }

 private:
  std::vector<RouterInfo> routers_;
};

// In a router's file: `const bool registered = register_router<CacheAware>({.name = ...});`.
// T is built as T(const RouterContext&, const Params&).
template <typename T>
bool register_router(RouterInfo info) {
  if (!info.make)
    info.make = [](const RouterContext& ctx, const Params& p) -> std::unique_ptr<Router> {
      return std::make_unique<T>(ctx, p);
    };
  RouterRegistry::instance().add(std::move(info));
  return true;
}

struct RouterSpec {
  std::string name;
  std::string params;  // "key=value,..."
  std::string label() const { return params.empty() ? name : name + ":" + params; }
};
RouterSpec parse_router_spec(const std::string& text);               // "cache_aware:threshold=0.5"
std::vector<RouterSpec> parse_router_list(const std::string& text);  // as parse_policy_list
std::unique_ptr<Router> make_router(const RouterSpec& spec, const RouterContext& ctx);
std::string router_table_markdown();
// Whether the router a spec names reads the trace's future. Throws ConfigError for an unknown name.
bool router_needs_future(const RouterSpec& spec);
// Every registered router that reads no future, by name (the set "online").
std::vector<std::string> online_router_names();

}  // namespace kvpolicy
