// LPC: evicts the evictable block with the smallest decayed continuation probability p'.
// Source: "Learned Prefix Caching" (LPC), sections 3.4-3.5 (docs/policies.md).
// Cost: O(1) per access (amortized); O(buckets) per eviction (the heads of the bucket lists).
//
// Each request brings p = P(its conversation goes on), from a ContinuationSource, quantized to
// its bucket's midpoint. Every block of the request's path takes the larger of its decayed
// score and p; a score set to p at time t is p'(now) = p·d / (p·d + 1 − p), d = exp(−(now −
// t)·scale). Since logit p' = logit p − (now − t)·scale, keeping "max(p'(now), p) with t_last
// := now" (the paper's rule) is the same as keeping whichever of the two (p, t) pairs has the
// larger key K = logit(p)/scale + t, and p' orders blocks as K does, at every time. So a block
// keeps its (bucket, set time) until a request brings a larger K, and the eviction order is
// static: one list per bucket ordered by set time holds its blocks in K order, and the victim is
// the least K among the buckets' first evictable blocks. Exact, with no periodic re-decay.
#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/huge_pages.h"
#include "kvpolicy/core/order/grouped_lru.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"
#include "kvpolicy/predict/continuation_calibration.h"
#include "kvpolicy/predict/continuation_source.h"

namespace kvpolicy {
namespace {

using Bucket = GroupedLru::Group;
constexpr Bucket kUnscored = GroupedLru::kNoGroup;

class Lpc final : public InlinedPolicy<Lpc> {
 public:
  static constexpr PolicyHooks kHooks{};

  Lpc(const PolicyContext& ctx, const Params& params) : tree_(*ctx.tree) {
    buckets_ = static_cast<uint32_t>(params.get_int("buckets"));
    scale_s_ = params.get_double("scale_s");
    ContinuationContext cc;
    cc.seed = ctx.seed;
    cc.future = ctx.future;
    source_ = make_continuation_source(continuation_config(params), cc);
    if (params.get_bool("drift")) {
      DriftOptions d;
      d.timeout_s = params.get_double("drift_timeout_s");
      d.window = params.get_double("drift_window");
      d.tolerance = params.get_double("drift_tolerance");
      d.min_correlation = params.get_double("drift_corr");
      d.min_resolved = static_cast<uint32_t>(params.get_int("drift_min"));
      drift_ = std::make_unique<ContinuationDrift>(d);
    }
    // K in microseconds: logit(midpoint of b) / scale, scale per microsecond.
    offset_us_.resize(buckets_);
    for (uint32_t b = 0; b < buckets_; ++b) {
      double v = representative(b);
      offset_us_[b] = std::log(v / (1 - v)) / (scale_s_ * 1e-6);
    }
    lists_.ensure_groups(buckets_);
    hints_.assign(buckets_, kNoNode);
  }

  void reserve_ids(size_t ids) override {
    lists_.resize(ids);
    if (ids > bucket_.size()) {
      bucket_.resize(ids, kUnscored);
      set_time_.resize(ids, 0);
      key_.resize(ids, 0);
    }
  }

  // ---- the request's score -------------------------------------------------------------------

  // The score is known when the request arrives (the trace's column, or the future), so the
  // request's blocks take it at their access: a block inserted by the request is scored at once.
  void on_request_begin(const RequestView& r) override {
    now_ = std::max(now_, r.time);  // time never runs backwards: set times stay sorted
    ++seq_;
    double p = source_->p(r);
    // The drift rule (docs/policies.md, lpc): the scores lose trust (their logit shrinks toward
    // 0, LRU's order) as far as they miss the observed continuation rate or rank nothing.
    if (drift_) {
      drift_->observe(r.session, double(r.time) * 1e-6, p);
      p = drift_->shrink(p);
    }
    cur_ = bucket_of(p);
  }

  void on_access(NodeId n, const AccessInfo& info) override {
    switch (info.kind) {
      case AccessKind::kInserted:
        set(n, cur_);
        place(n);
        break;
      case AccessKind::kReused:
        raise(n);
        break;
      case AccessKind::kPromoted:  // a hit in DRAM: the score was kept while it was there
        if (!scored(n)) set(n, cur_);
        raise(n);
        place(n);
        break;
      case AccessKind::kDemoted:  // an HBM victim: it keeps its score, placed by its set time
        if (!scored(n)) set(n, 0);
        if (lists_.contains(n)) unlink(n);
        place(n);
        break;
    }
  }

  // Every path block, also those of the other tier (a DRAM policy hears no access of the HBM
  // blocks, nor of DRAM hits left unpromoted): the score of a block demoted or promoted later
  // must be current. Blocks seen in on_access are unchanged (the rule is idempotent).
  void on_request_end(const RequestView&, std::span<const NodeId> path) override {
    for (size_t j = path.size(); j-- > 0;) {  // deepest first: deeper first at equal keys
      NodeId n = path[j];
      if (scored(n)) {
        raise(n);
      } else {
        set(n, cur_);
      }
    }
  }

  // ---- the evictable set ---------------------------------------------------------------------

  void on_evictable(NodeId n) override {
    if (!lists_.contains(n)) return;
    NodeId& hint = hints_[bucket_[n]];
    if (hint == kNoNode || before(n, hint)) hint = n;
  }
  void on_unevictable(NodeId) override {}

  // The least (K, set order, −depth) among the buckets' first evictable blocks: within a bucket
  // the list is in that order, so its first evictable block is its minimum. K does not depend
  // on `now`.
  NodeId victim(Time) override {
    ++victim_calls_;
    NodeId best = kNoNode;
    double best_key = 0;
    for (Bucket b = lists_.first_nonempty(); b != GroupedLru::kNoGroup;
         b = lists_.next_nonempty(size_t{b} + 1)) {
      NodeId x = first_evictable(b);
      if (x == kNoNode) continue;
      double k = key(x);
      if (best == kNoNode || k < best_key || (k == best_key && tie_before(x, best))) {
        best = x;
        best_key = k;
      }
    }
    return best;
  }

  void on_removed(NodeId n, Removal why) override {
    if (lists_.contains(n)) unlink(n);
    // An evicted block's id is free: whatever is next born under it starts unscored. A demoted
    // or promoted block lives on in the other tier, and its score with it.
    if (why == Removal::kEvicted || why == Removal::kDropped) bucket_[n] = kUnscored;
  }

  // Per block: list links and set order (12 bytes), set time (8), key (8) and bucket (2).
  size_t memory_bytes() const override {
    return lists_.memory_bytes() + set_time_.capacity() * sizeof(Time) +
           key_.capacity() * sizeof(BlockKey) + bucket_.capacity() * sizeof(Bucket);
  }

  PolicyStats stats() const override {
    PolicyStats s = source_->stats();
    if (drift_) {
      s.emplace_back("drift_trust", drift_->trust());
      s.emplace_back("drift_min_trust", drift_->min_trust());
      s.emplace_back("drift_observed_rate", drift_->observed_rate());
      s.emplace_back("drift_expected_rate", drift_->expected_rate());
      s.emplace_back("drift_correlation", drift_->correlation());
      s.emplace_back("drift_resolved", double(drift_->resolved()));
    }
    s.emplace_back("scan_steps_per_victim",
                   victim_calls_ ? double(scan_steps_) / double(victim_calls_) : 0);
    return s;
  }

  // ---- test support --------------------------------------------------------------------------

  // The block's stored score: its bucket's midpoint p, set at `set_time` by request `seq`.
  bool node_state(NodeId n, double* p, Time* set_time, uint32_t* seq) const {
    if (n >= bucket_.size() || !scored(n)) return false;
    *p = representative(bucket_[n]);
    *set_time = set_time_[n];
    *seq = lists_.stamp(n);
    return true;
  }

 private:
  double representative(uint32_t b) const { return (b + 0.5) / buckets_; }
  Bucket bucket_of(double p) const {
    double b = std::floor(std::clamp(p, 0.0, 1.0) * buckets_);
    return static_cast<Bucket>(std::min<double>(b, buckets_ - 1));
  }
  double key(Bucket b, Time t) const { return offset_us_[b] + double(t); }
  double key(NodeId n) const { return key(bucket_[n], set_time_[n]); }

  // Whether n's state is its own, not a recycled id's: the tree hands an id to a new block
  // without telling the other tier's policy, so the key says whose score it is.
  bool scored(NodeId n) const { return bucket_[n] != kUnscored && key_[n] == tree_.key(n); }

  void set(NodeId n, Bucket b) {
    bucket_[n] = b;
    set_time_[n] = now_;
    key_[n] = tree_.key(n);
    lists_.set_stamp(n, seq_);
  }
  // The request's score replaces n's if its key is at least n's (at equal keys the newer set
  // wins, as LRU refreshes a block accessed at the same time); a block of this tier's lists
  // moves to its new place.
  void raise(NodeId n) {
    Bucket b = bucket_[n];
    if (b == cur_ ? now_ < set_time_[n] : key(cur_, now_) < key(n)) return;
    bool listed = lists_.contains(n);
    if (listed) unlink(n);
    set(n, cur_);
    if (listed) place(n);
  }

  // Total order within a bucket (the list's): older set time, then older set (request order),
  // then deeper. Across buckets at equal K, the same tie rule.
  bool before(NodeId a, NodeId b) const {
    if (set_time_[a] != set_time_[b]) return set_time_[a] < set_time_[b];
    return tie_before(a, b);
  }
  bool tie_before(NodeId a, NodeId b) const {
    uint32_t sa = lists_.stamp(a), sb = lists_.stamp(b);
    if (sa != sb) return sa < sb;
    return tree_.depth(a) > tree_.depth(b);
  }

  // Inserts n into its bucket's list at its place. The common cases are O(1): a block of the
  // current request placed just after its parent (root first: it goes just before the parent,
  // as in lru.cc), or deepest first (it goes at the tail). A demoted or promoted block keeping
  // an older score scans back from the tail to its place.
  void place(NodeId n) {
    Bucket b = bucket_[n];
    NodeId parent = tree_.parent(n);
    if (parent != kNoNode && lists_.contains(parent) && bucket_[parent] == b &&
        lists_.stamp(parent) == lists_.stamp(n) && set_time_[parent] == set_time_[n]) {
      NodeId at = lists_.prev(parent);
      if (at == kNoNode || before(at, n)) {
        lists_.insert_before(b, n, parent);
        return;
      }
    }
    NodeId at = lists_.back(b);
    while (at != kNoNode && before(n, at)) at = lists_.prev(at);
    if (at == kNoNode) {
      lists_.push_front(b, n);
    } else {
      lists_.insert_after(b, n, at);
    }
    // Every block before the hint must stay unevictable: a block placed now is pinned (or, when
    // demoted, announced by on_evictable right after), which then moves the hint back to it.
  }

  void unlink(NodeId n) {
    Bucket b = bucket_[n];
    if (hints_[b] == n) hints_[b] = lists_.next(n);
    lists_.erase(b, n);
  }

  NodeId first_evictable(Bucket b) {
    NodeId x = hints_[b];
    while (x != kNoNode && !tree_.is_evictable(x)) {
      x = lists_.next(x);
      ++scan_steps_;
    }
    hints_[b] = x;
    return x;
  }

  const PrefixTree& tree_;
  uint32_t buckets_ = 64;
  double scale_s_ = 0.01;
  std::unique_ptr<ContinuationSource> source_;
  std::unique_ptr<ContinuationDrift> drift_;  // null with drift=false
  std::vector<double> offset_us_;             // per bucket: logit(midpoint) / scale, microseconds

  // Per block of this tier: its bucket's list, oldest set first; the stamp is the counter of
  // the request that set its score. Per block of either tier: bucket, set time and key.
  GroupedLru lists_;
  BlockVector<Bucket> bucket_;
  BlockVector<Time> set_time_;
  BlockVector<BlockKey> key_;
  // Per bucket: every block before it in the list is unevictable (kNoNode: every block).
  std::vector<NodeId> hints_;

  Time now_ = 0;
  uint32_t seq_ = 0;
  Bucket cur_ = 0;  // the current request's bucket
  uint64_t victim_calls_ = 0, scan_steps_ = 0;
};

std::vector<ParamSpec> lpc_param_specs() {
  std::vector<ParamSpec> specs = continuation_param_specs();
  specs.push_back(param_int("buckets", 64, {.min = 1, .max = 4096},
                            "quantization of p: a request's p becomes its bucket's midpoint"));
  specs.push_back(param_double("scale_s", 0.01, {.min = 0, .min_exclusive = true},
                               "decay rate per second: 1 / the mean turn gap (paper: 0.01)"));
  specs.push_back(param_bool("drift", true,
                             "lower trust in the scores (shrink their logit toward 0, LRU's "
                             "order) when they miss the observed continuation rate or carry no "
                             "skill"));
  specs.push_back(param_double("drift_timeout_s", 1000, {.min = 0, .min_exclusive = true},
                               "drift: a turn with no next turn of its session this long ended"));
  specs.push_back(param_double("drift_window", 500, {.min = 1},
                               "drift: resolved turns remembered (exponential forgetting)"));
  specs.push_back(param_double("drift_tolerance", 0.15, {.min = 0, .min_exclusive = true},
                               "drift: |observed - expected continuation rate| at trust 0"));
  specs.push_back(param_double("drift_corr", 0.1, {.min = 0, .min_exclusive = true},
                               "drift: score-label correlation at and above which the scores get "
                               "full trust"));
  specs.push_back(param_int("drift_min", 50, {.min = 1, .max = 1000000},
                            "drift: resolved turns before trust may fall"));
  return specs;
}

const bool registered = register_policy<Lpc>({
    .name = "lpc",
    .summary = "smallest decayed continuation probability p' = p·d / (p·d + 1 − p), d = "
               "exp(−age·scale); p from the trace's classifier column (or the oracle); a shared "
               "block keeps the max",
    .paper = "LPC: Learned Prefix Caching (conversation continuation classifier), sections 3.4-3.5",
    .params = lpc_param_specs(),
    .variants = {"predictor=oracle", "predictor=noisy,p=0.3", "predictor=constant",
                 "buckets=1,scale_s=1000"},
    .needs_future = true,
    // The trace's scores and a constant need no future; the oracle and its noisy form do.
    .needs_future_with =
        [](const Params& p) {
          const std::string kind = p.get_string("predictor");
          return kind == "oracle" || kind == "noisy";
        },
    .reads_trace_scores_with = [](const Params& p) { return p.get_string("predictor") == "trace"; },
});

}  // namespace

// Test support: the state the brute-force check needs (tests/policy/lpc_test.cc).
namespace lpc_testing {

bool node_state(const Policy& p, NodeId n, double* score, Time* set_time, uint32_t* seq) {
  auto* lpc = dynamic_cast<const Lpc*>(&p);
  return lpc && lpc->node_state(n, score, set_time, seq);
}

}  // namespace lpc_testing
}  // namespace kvpolicy
