// The eviction-policy interface and its self-registering registry.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kvpolicy/params.h"
#include "kvpolicy/tree.h"
#include "kvpolicy/types.h"

namespace kvpolicy {

struct Trace;
struct Oracle;
class CostModel;
class PrefixCache;
struct AccessResult;

// Named counters a policy reports after a run (e.g. predictor calls, phases).
using PolicyStats = std::vector<std::pair<std::string, double>>;

// Told to a policy on every block access; the cache fills it from the request.
struct AccessInfo {
  Time now = 0;
  RequestIndex req = 0;  // index in the trace
  uint64_t access = 0;   // flat index of this block access in the trace (oracle lookups)
  SessionId session = kNoSession;
  uint32_t turn = 1;
  CategoryId category = 0;
  uint32_t position = 0;  // block index in the prompt, 0 = first
  uint32_t prompt_blocks = 0;
  // Reused in this policy's tier (true), or newly placed in it (false): inserted, or, with two
  // tiers, promoted into HBM or demoted into DRAM (then `access` is the block's last access).
  bool hit = false;
};

// One request as the cache sees it.
struct RequestView {
  RequestIndex index = 0;
  Time time = 0;
  SessionId session = kNoSession;
  uint32_t turn = 1;
  CategoryId category = 0;
  uint32_t prompt_tokens = 0;
  uint32_t output_tokens = 0;
  uint64_t first_access = 0;  // flat index of the first prompt block
  std::span<const BlockKey> blocks;
};

// What a policy may know when it is built. The trace and oracle are only for policies that
// declare they need the future (Belady and oracle predictors); others must not read them.
struct PolicyContext {
  const PrefixTree* tree = nullptr;
  size_t capacity_blocks = 0;
  uint32_t block_tokens = 16;
  uint64_t seed = 1;
  const Trace* trace = nullptr;
  const Oracle* oracle = nullptr;
  // The serving cost model (TTFT, recompute cost); null = the simulator's default preset.
  const CostModel* cost_model = nullptr;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual void on_access(NodeId, const AccessInfo&) = 0;  // root first, for every prompt block
  virtual void on_evictable(NodeId) = 0;                  // became an unpinned leaf
  virtual void on_unevictable(NodeId) = 0;                // pinned, or gained a cached child
  virtual NodeId victim(Time now) = 0;  // one evictable node (kNoNode if none); the tree removes it
  // The node left this policy's tier: evicted, or (two tiers) demoted out of HBM or promoted
  // out of DRAM. Only an eviction goes through victim() first.
  virtual void on_removed(NodeId) = 0;
  virtual void on_request_begin(const RequestView&) {}
  virtual void on_request_end(const RequestView&, std::span<const NodeId> /*path*/) {}
  // Policy metadata bytes per cached block (arrays sized to the node-id range).
  virtual size_t memory_bytes() const { return 0; }
  // Counters for reports (ReplayResult::policy_stats); none by default.
  virtual PolicyStats stats() const { return {}; }
  // Hints, not virtual (InlinedPolicy's replay calls them on the policy's own type): node is
  // likely accessed a few blocks from now, so a policy may start loading its state for it.
  void prefetch_for_access(NodeId) const {}
  // Likewise for a key that is likely not cached: it will probably be inserted.
  void prefetch_for_insert(BlockKey) const {}
  // Runs cache.access(r) for the cache whose HBM policy this is. This one makes a virtual call
  // per block event; InlinedPolicy's (src/policy/cache_access.h) makes none.
  virtual AccessResult access_in(PrefixCache& cache, const RequestView& r);
};

// Forwards every call to an inner policy: the base of wrappers that observe a policy (victim
// recorders in tests, the benchmark's latency probe) and override only what they watch.
class ForwardingPolicy : public Policy {
 public:
  explicit ForwardingPolicy(std::unique_ptr<Policy> inner) : inner_(std::move(inner)) {}
  void on_access(NodeId n, const AccessInfo& info) override { inner_->on_access(n, info); }
  void on_evictable(NodeId n) override { inner_->on_evictable(n); }
  void on_unevictable(NodeId n) override { inner_->on_unevictable(n); }
  NodeId victim(Time now) override { return inner_->victim(now); }
  void on_removed(NodeId n) override { inner_->on_removed(n); }
  void on_request_begin(const RequestView& r) override { inner_->on_request_begin(r); }
  void on_request_end(const RequestView& r, std::span<const NodeId> path) override {
    inner_->on_request_end(r, path);
  }
  size_t memory_bytes() const override { return inner_->memory_bytes(); }
  PolicyStats stats() const override { return inner_->stats(); }

  Policy& inner() { return *inner_; }

 private:
  std::unique_ptr<Policy> inner_;
};

struct PolicyInfo {
  std::string name;
  std::string summary;
  std::string paper;
  std::vector<ParamSpec> params;
  bool needs_oracle = false;  // reads the trace's future (offline)
  bool randomized = false;    // decisions depend on the seed
  std::function<std::unique_ptr<Policy>(const PolicyContext&, const Params&)> make;
};

class PolicyRegistry {
 public:
  static PolicyRegistry& instance();
  void add(PolicyInfo info);
  const PolicyInfo& get(const std::string& name) const;  // throws ConfigError
  const std::vector<PolicyInfo>& all() const { return policies_; }
  std::vector<std::string> names() const;

 private:
  std::vector<PolicyInfo> policies_;
};

struct PolicyRegistrar {
  explicit PolicyRegistrar(PolicyInfo info) { PolicyRegistry::instance().add(std::move(info)); }
};

// The README's policy table, one row `| name | evicts | source |` per registered policy from its
// summary and paper: `kvpolicy policies --markdown` prints it and a test keeps README.md equal.
std::string policy_table_markdown();

// A policy spec is "name" or "name:key=value,key=value".
struct PolicySpec {
  std::string name;
  std::string params;
  std::string label() const { return params.empty() ? name : name + ":" + params; }
};
PolicySpec parse_policy_spec(const std::string& text);
// Splits "lru,belady:x=1,y=2,fifo" into specs: a comma starts a new spec unless the next item
// holds '=' (then it is another parameter of the current spec).
std::vector<PolicySpec> parse_policy_list(const std::string& text);

std::unique_ptr<Policy> make_policy(const PolicySpec& spec, const PolicyContext& ctx);

// For a policy that evicts along a list: evictions come in runs (a request's new blocks), so
// the next victims are likely the entries after the one leaving. Their misses overlap with this
// eviction's work, in stages: the next one's slot and parent (its node came two evictions ago),
// and the node and links of the third, whose links tell the next call its third (the list needs
// next() and prefetch()). Two stages ahead, not one: LRU ran faster so on the Zipf workload
// (measured: docs/experiments.md, The replay loop).
template <typename List>
[[gnu::always_inline]] inline void prefetch_next_victims(const PrefixTree& tree, const List& list,
                                                         NodeId leaving) {
  NodeId a = list.next(leaving);
  if (a == kNoNode) return;
  tree.prefetch_removal(a);
  NodeId b = list.next(a);
  if (b == kNoNode) return;
  NodeId c = list.next(b);
  if (c == kNoNode) return;
  tree.prefetch_node_id(c);
  list.prefetch(c);
}

}  // namespace kvpolicy
