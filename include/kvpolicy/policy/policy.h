// The eviction-policy contract, and the registry policies join by name.
//
// A policy orders the cached blocks of one tier (HBM, or DRAM behind it) and names the next to
// leave. The cache's walk (RequestWalk, walk.h) changes the prefix tree and tells the policy what
// happens, in this order for each request:
//
//   reserve_ids(ids) first, and again whenever the tree's id range grows
//   on_request_begin(r)
//   for each prompt block, root first:   on_access(n, {kind = kReused|kInserted|kPromoted})
//     with a transition:                 on_unevictable(n) when the walk pins n
//     when the tier is full first:       victim() -> v, then on_removed(v, kEvicted|kDemoted)
//                                        and on_evictable(parent of v) if it became a leaf
//   (a DRAM policy also hears on_access(v, {kind = kDemoted}) for each block HBM demotes)
//   on_request_end(r, path)
//   for each path block, deepest first:  on_evictable(n) when unpinning makes it one
//   (outside a cycle, on_time(now) first when the owner releases blocks at a time of its own)
//
// Node ids are dense and recycled: a policy keeps its metadata in its own arrays indexed by
// NodeId, sized in reserve_ids. A node id handed to on_access with a kind other than kReused
// names a block new to this tier, whatever the id meant before.
#pragma once

#include <concepts>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kvpolicy/core/access.h"
#include "kvpolicy/core/oracle_view.h"
#include "kvpolicy/core/params.h"
#include "kvpolicy/core/tree.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

class CostModel;
class RequestWalk;
struct AccessResult;

// Declared outside PolicyContext: an optional of a nested class with default member initializers
// is not default-constructible inside its enclosing class for clang.
struct RetentionSettings {
  int32_t default_priority = 35;  // a block without a hint (TensorRT-LLM's default)
};

// What a policy may know when it is built. `future` is set only for policies that declare
// needs_future (Belady, the oracle variants, the oracle predictors); others must not read it.
// A policy keeps a copy of the view; the arrays it spans must outlive the policy.
struct PolicyContext {
  const PrefixTree* tree = nullptr;
  size_t capacity_blocks = 0;
  uint32_t block_tokens = 16;
  uint64_t seed = 1;
  std::optional<OracleView> future;
  // The serving cost model (TTFT, recompute cost); null = the simulator's default preset.
  const CostModel* cost_model = nullptr;
  // Retention hints: when set, make_policy puts every policy it builds behind the hint wrapper
  // (retention.h), under guarded's and auto's guard (docs/policies.md, "Retention hints").
  using Retention = RetentionSettings;
  std::optional<Retention> retention;
  // Serve mode (ServingCache): requests overlap, decode blocks take memory outside the tree and
  // answers are written at completion; guarded's shadow LRU then runs on the cache's memory.
  bool serving = false;
};

class Policy {
 public:
  virtual ~Policy() = default;

  // n was accessed by the current request (see AccessKind). n is pinned: not a candidate.
  virtual void on_access(NodeId n, const AccessInfo& info) = 0;
  // n became an evictable leaf of this tier (unpinned, and no child in this tier).
  virtual void on_evictable(NodeId n) = 0;
  // n stopped being one: pinned by a request, or it gained a child in this tier.
  virtual void on_unevictable(NodeId n) = 0;

  // The next block to leave this tier: an evictable leaf of it, or kNoNode if there is none.
  // A choice, not a commitment: the cache may not take it (when the tier below is all pinned).
  // It may reorganise the policy's order as a clock hand does, but must record nothing that
  // holds only if the block leaves, and asked again with nothing told in between, it names the
  // same block. Whatever the eviction changes belongs in on_removed.
  virtual NodeId victim(Time now) = 0;
  // n left this tier. kEvicted and kDemoted commit the last victim(): n is that block. kPromoted
  // means a pinned DRAM block moved up to HBM (a hit, never a victim).
  virtual void on_removed(NodeId n, Removal why) = 0;

  // Node ids below `ids` may now be handed to this policy: size its per-node arrays to it.
  // Told before the first access and whenever the tree's id range grows (geometrically).
  virtual void reserve_ids(size_t ids) = 0;

  // Around each request: phases, estimates, batched predictions (T-LRU, learned policies).
  virtual void on_request_begin(const RequestView&) {}
  // `path` is the request's cached path in both tiers, root first, still pinned.
  virtual void on_request_end(const RequestView&, std::span<const NodeId> /*path*/) {}

  // Policy metadata bytes per cached block (arrays sized to the node-id range).
  virtual size_t memory_bytes() const { return 0; }
  // Counters for reports (ReplayResult::policy_stats); none by default.
  virtual PolicyStats stats() const { return {}; }

  // Retention hints (docs/policies.md, "hinted"): the priority n has now, which a cache reads
  // before it commits n's eviction (the minimum priority for offload, docs/serve.md); nullopt
  // for a policy that keeps no hints (its blocks have the default).
  virtual std::optional<int32_t> retention_priority(NodeId /*n*/) const { return std::nullopt; }
  // The owner's clock outside a request cycle: blocks are released at `now` (serve mode: a
  // completion that caches no answer, a preemption), so a policy that runs on time (retention
  // durations start at release) catches up first. Nothing by default.
  virtual void on_time(Time /*now*/) {}

  // Runs walk.access(r) with this policy's calls bound: virtual here, direct and inlined for a
  // policy built on InlinedPolicy (walk.h).
  virtual AccessResult access_in(RequestWalk& walk, const RequestView& r);
};

// Optional hooks a policy class may offer the walk, besides the contract above. They are not
// virtual: the walk calls them only on a policy's own type (InlinedPolicy), and only those the
// class declares in `static constexpr PolicyHooks kHooks`; InlinedPolicy checks at compile time
// that the declared hooks exist and that no undeclared one is defined, so a misspelt hook fails
// to build instead of being silently ignored.
struct PolicyHooks {
  // void prefetch_for_access(NodeId) const: n is likely accessed a few blocks from now, so its
  // state may start loading.
  bool prefetch_for_access = false;
  // void prefetch_for_insert(BlockKey) const: the key is likely not cached and about to be
  // inserted, so what an insertion reads may start loading.
  bool prefetch_for_insert = false;
};

template <typename P>
concept HasPrefetchForAccess = requires(const P& p, NodeId n) {
  { p.prefetch_for_access(n) } -> std::same_as<void>;
};
template <typename P>
concept HasPrefetchForInsert = requires(const P& p, BlockKey k) {
  { p.prefetch_for_insert(k) } -> std::same_as<void>;
};

// The hooks a policy type declares; none for the Policy interface itself.
template <typename P>
constexpr PolicyHooks hooks_of() {
  if constexpr (requires { P::kHooks; }) {
    return P::kHooks;
  } else {
    return {};
  }
}

// Forwards every call to an inner policy: the base of wrappers that observe a policy (victim
// recorders in tests, the benchmark's latency probe) and override only what they watch.
class ForwardingPolicy : public Policy {
 public:
  explicit ForwardingPolicy(std::unique_ptr<Policy> inner) : inner_(std::move(inner)) {}
  void on_access(NodeId n, const AccessInfo& info) override { inner_->on_access(n, info); }
  void on_evictable(NodeId n) override { inner_->on_evictable(n); }
  void on_unevictable(NodeId n) override { inner_->on_unevictable(n); }
  NodeId victim(Time now) override { return inner_->victim(now); }
  void on_removed(NodeId n, Removal why) override { inner_->on_removed(n, why); }
  void reserve_ids(size_t ids) override { inner_->reserve_ids(ids); }
  void on_request_begin(const RequestView& r) override { inner_->on_request_begin(r); }
  void on_request_end(const RequestView& r, std::span<const NodeId> path) override {
    inner_->on_request_end(r, path);
  }
  size_t memory_bytes() const override { return inner_->memory_bytes(); }
  PolicyStats stats() const override { return inner_->stats(); }
  std::optional<int32_t> retention_priority(NodeId n) const override {
    return inner_->retention_priority(n);
  }
  void on_time(Time now) override { inner_->on_time(now); }

  Policy& inner() { return *inner_; }

 private:
  std::unique_ptr<Policy> inner_;
};

struct PolicyInfo {
  std::string name;
  std::string summary;  // what it evicts, in one line (README's policy table)
  std::string paper;    // where it comes from
  std::vector<ParamSpec> params = {};
  // Parameter settings the contract suite runs besides the defaults (e.g. "list_max=0").
  std::vector<std::string> variants = {};
  bool needs_future = false;  // may read the trace's future (offline): PolicyContext::future
  // When set, whether these parameters do (LARU with its GBM does not); see needs_future().
  std::function<bool(const Params&)> needs_future_with = {};
  // When set, whether these parameters read the trace's continuation scores (LPC's default), so
  // a trace without them cannot feed it; see policies_for_trace().
  std::function<bool(const Params&)> reads_trace_scores_with = {};
  bool randomized = false;  // decisions depend on the seed
  // Left out of the sets online, offline and all when false: a wrapper that, without its own
  // inputs, is exactly its inner policy (hinted without hints).
  bool in_sets = true;
  // Set by register_policy (unless given: a class chosen by the parameters).
  std::function<std::unique_ptr<Policy>(const PolicyContext&, const Params&)> make = {};
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

// Registers policy class T under info.name at static-initialisation time (info.make, if set,
// builds it instead: a policy whose class depends on its parameters). T is built as
// T(const PolicyContext&, const Params&), or T(const PolicyContext&) if it takes no parameters. In
// a policy's file: `const bool registered = register_policy<Lru>({.name = "lru", ...});`.
template <typename T>
bool register_policy(PolicyInfo info) {
  if (!info.make)
    info.make = [](const PolicyContext& ctx, const Params& p) -> std::unique_ptr<Policy> {
      if constexpr (std::is_constructible_v<T, const PolicyContext&, const Params&>) {
        return std::make_unique<T>(ctx, p);
      } else {
        return std::make_unique<T>(ctx);
      }
    };
  PolicyRegistry::instance().add(std::move(info));
  return true;
}

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

// Whether the policy a spec names, with its parameters, reads the trace's future (an oracle must
// be computed for it, and its results are offline ones). Throws ConfigError like make_policy.
bool needs_future(const PolicySpec& spec);

// A list of specs where the sets "online" (every registered policy that reads no future with its
// default parameters), "offline" (those that do) and "all" expand to their members; a name given
// twice runs once. Throws ConfigError like parse_policy_list.
std::vector<PolicySpec> expand_policy_sets(const std::string& text);

// The policies of `text` (sets expanded) a trace can feed. On a trace without continuation
// scores (`has_scores` false) a policy that reads them is left out when a set brought it, and
// `skipped` gets one line saying so (empty when none is); named on its own it is a ConfigError
// saying what the trace lacks. Every command and Python choose their policies through this.
std::vector<PolicySpec> policies_for_trace(const std::string& text, bool has_scores,
                                           std::string* skipped);

// Builds a policy from its spec; throws ConfigError on an unknown name, a bad parameter, or a
// policy that needs the future when ctx has none.
std::unique_ptr<Policy> make_policy(const PolicySpec& spec, const PolicyContext& ctx);

// For a policy that evicts along a list: evictions come in runs (a request's new blocks), so
// the next victims are likely the entries after the one leaving. Their misses overlap with this
// eviction's work, in stages: the next one's slot and parent (its node came two evictions ago),
// and the node and links of the third, whose links tell the next call its third (the list needs
// next() and prefetch()). Two stages ahead, not one: see docs/experiments.md.
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
