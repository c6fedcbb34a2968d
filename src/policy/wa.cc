// WA: evicts the evictable block least likely to be reused within its category's lifespan.
// Source: Wang et al., "KVCache Cache in the Wild" (USENIX ATC'25), section 4.2 (docs/policies.md).
// Cost: O(1) amortized per access, O(W) per eviction (W = categories), O(W * 64) per refit.
//
// ReuseProb_w(t) = pi_w (e^{-lambda_w t} - e^{-lambda_w (t + Life_w)}), t = age, fitted online
// per category (request type x turn bucket) by ReuseFitter (predict/reuse_fit.h); deeper first
// on ties. Blocks stay in one recency list per category (GroupedLru), so each list's first
// evictable block is its minimum and an eviction compares the W heads.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kvpolicy/core/order/grouped_lru.h"
#include "kvpolicy/core/order/stamp_table.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"
#include "kvpolicy/predict/reuse_fit.h"

namespace kvpolicy {
namespace {

using Group = GroupedLru::Group;
static_assert(std::is_same_v<Group, ReuseFitter::Category>, "a list per fitted category");

// Order of blocks inside a category: older last access first, then deeper first. `seq` counts
// requests, so it refines the trace's timestamps (which can tie between requests) by arrival.
struct Key {
  uint32_t seq;
  uint32_t depth;
  NodeId id;  // a total order: blocks of one request at one depth (a flat tree's) tie otherwise,
              // and the evictable hint (on_evictable) needs a strict one
  bool operator<(const Key& o) const {
    if (seq != o.seq) return seq < o.seq;
    return depth != o.depth ? depth > o.depth : id < o.id;
  }
};

class Wa final : public InlinedPolicy<Wa> {
 public:
  static constexpr PolicyHooks kHooks{};
  Wa(const PolicyContext& ctx, const Params& p) : tree_(*ctx.tree), fitter_(fit_options(p)) {
    turn_buckets_ = static_cast<uint32_t>(p.get_int("turn_buckets"));
    typed_ = p.get_string("categories") == "typed";
    signal_full_ = p.get_double("signal");
    signal_samples_ = static_cast<uint64_t>(p.get_int("signal_samples"));
    calibration_ = p.get_double("calibration");
    ensure_groups(1);
  }

  // ---- the access stream ---------------------------------------------------------------------
  //
  // Every block access closes the key's previous access (a reuse of the category that made it,
  // if still in the window) and opens a new one. The previous access of a block this instance
  // holds in its lists is its stamp, which the fitter is given; any other key's is the one the
  // fitter was handed (depart) when the block left the lists, or at each access while it was
  // elsewhere.

  void reserve_ids(size_t ids) override { lists_.resize(ids); }

  void on_request_begin(const RequestView& r) override {
    // Time never runs backwards for the policy: ages stay >= 0 and agree with the list order.
    now_ = std::max(now_, r.time);
    if (evicted_ > 0) fitter_.set_signal_age(evicted_age_sum_ / Time(evicted_));
    if (fitter_.advance(now_)) refitted();
    ++seq_;
    cur_group_ = group_of(r.category, r.turn);
    ensure_groups(cur_group_ + 1);
    if (times_.size() == times_.capacity()) make_room_for_stamps();
    times_.push_back(now_, cur_group_);
    fitter_.begin_request(seq_, now_, cur_group_, r.blocks);
  }

  void on_access(NodeId n, const AccessInfo& info) override {
    BlockKey key = tree_.key(n);
    // A block of the current prompt, or (two tiers, DRAM policy) one demoted to us.
    if (info.kind != AccessKind::kDemoted) {
      // A block of the current request: it becomes the newest of the request's category.
      if (lists_.contains(n)) {
        uint32_t prev = lists_.stamp(n);
        unlink(n);
        fitter_.reuse(key, prev);
      } else {
        fitter_.reuse_departed(key);
      }
      lists_.set_stamp(n, seq_);
      place(n, cur_group_);
    } else {
      // A block demoted from the tier above (we are the DRAM policy): it keeps the last access
      // recorded in on_request_end, so it goes to its place by age, not to the tail.
      if (lists_.contains(n)) unlink(n);
      place(n);
    }
  }

  // Every request's path (both tiers): the accesses of blocks this instance did not see through
  // on_access (two tiers: the other tier's, and DRAM hits left unpromoted), then the prompt's
  // blocks that stayed uncached (all else pinned).
  void on_request_end(const RequestView& r, std::span<const NodeId> path) override {
    for (NodeId n : path) {
      if (lists_.stamp(n) == seq_) continue;  // seen in on_access
      BlockKey key = tree_.key(n);
      if (lists_.contains(n)) {
        uint32_t prev = lists_.stamp(n);
        unlink(n);
        fitter_.reuse(key, prev);
        lists_.set_stamp(n, seq_);
        place(n, cur_group_);
      } else {
        reuse_outside_lists(key);
        lists_.set_stamp(n, seq_);  // for its place if it is demoted to us
      }
    }
    for (size_t j = path.size(); j < r.blocks.size(); ++j) reuse_outside_lists(r.blocks[j]);
  }

  // ---- the evictable set ---------------------------------------------------------------------

  void on_evictable(NodeId n) override {
    if (!lists_.contains(n)) return;
    Group g = group_of_node(n);
    NodeId& hint = heads_[g].hint;
    if (hint == kNoNode || key(n) < key(hint)) hint = n;
  }
  void on_unevictable(NodeId n) override {
    if (!lists_.contains(n)) return;
    Head& h = heads_[group_of_node(n)];
    if (h.first == n) h.first = kNoNode;
  }
  // The block leaves this tier: the fitter keeps its last access while in the window.
  void on_removed(NodeId n, Removal why) override {
    if (!lists_.contains(n)) return;
    prefetch_next_victims(tree_, lists_, n);  // the category's next blocks
    uint32_t prev = lists_.stamp(n);
    if (n == victim_ && (why == Removal::kEvicted || why == Removal::kDemoted)) {
      evicted_age_sum_ += victim_age_;
      ++evicted_;
    }
    unlink(n);
    BlockKey key = tree_.key(n);
    fitter_.depart(key, prev);
  }

  // The minimum of (ReuseProb, last access order, -offset) over every category's oldest
  // evictable block. Within a category log ReuseProb = log_const - lambda t falls (weakly,
  // also in floating point, as every operation rounds monotonically) with age, and the list is
  // kept by age, so its first evictable block is its minimum under that order.
  NodeId victim(Time now) override {
    now = std::max(now, now_);
    // Per category, its first evictable block is remembered until it is unlinked, made
    // unevictable (on_unevictable) or passed by the hint (on_evictable of an older block), and
    // its score while the time and the fits stay: within a request only the category that lost
    // its victim usually needs the tree or a new score.
    if (now != vcache_now_) {
      vcache_now_ = now;
      ++vcache_gen_;
    }
    NodeId best = kNoNode;
    double best_score = 0;
    ++victim_calls_;
    for (Group g = lists_.first_nonempty(); g != GroupedLru::kNoGroup;
         g = lists_.next_nonempty(size_t{g} + 1)) {
      Head& h = heads_[g];
      NodeId x = h.hint;
      if (x == kNoNode || h.first != x) {
        x = first_evictable(g);
        if (x == kNoNode) continue;
        h.first = x;
        h.last = times_.time(lists_.stamp(x));
        h.gen = 0;
      }
      assert(tree_.is_evictable(x));
      if (h.gen != vcache_gen_) {
        h.score = scores_[g].log_reuse_prob(now - h.last);
        h.gen = vcache_gen_;
      }
      double s = h.score;
      if (best == kNoNode || s < best_score || (s == best_score && key(x) < key(best))) {
        best = x;
        best_score = s;
        victim_age_ = now - h.last;
      }
    }
    victim_ = best;
    return best;
  }

  // Per block: links and stamp (12 bytes); per request still stamped on a cached block: its
  // time and category. The fit's window statistics are reported apart (stats: fit_bytes).
  size_t memory_bytes() const override {
    return lists_.memory_bytes() + times_.memory_bytes() + heads_.capacity() * sizeof(Head) +
           fitter_.fit_table_bytes();
  }

  PolicyStats stats() const override {
    return {{"refits", double(fitter_.refits())},
            {"model_fitted", fitter_.refits() > 0 ? 1.0 : 0.0},
            {"categories_in_window", double(fitter_.categories_in_window())},
            {"window_accesses", double(fitter_.accesses_in_window())},
            {"scan_steps_per_victim", victim_calls_ ? double(scan_steps_) / victim_calls_ : 0},
            {"fit_bytes", double(fitter_.window_bytes())},
            {"stamp_table_capacity", double(times_.capacity())},
            {"stamp_table_span", double(times_.size())},
            {"p90_bins_gathered", double(fitter_.p90_bins_gathered())},
            {"signal_spread_mean", refits_ ? spread_sum_ / double(refits_) : 0},
            {"signal_weight_mean", refits_ ? weight_sum_ / double(refits_) : 1},
            {"signal_weight", weight_},
            {"calibration_error", error_},
            {"calibration_error_mean", refits_ ? error_sum_ / double(refits_) : 0},
            {"signal_spread", fitter_.signal().spread},
            {"signal_eta2", fitter_.signal().eta2},
            {"signal_categories", double(fitter_.signal().categories)},
            {"signal_age_s", double(fitter_.signal_age()) / kMicrosPerSecond}};
  }

  // ---- test support --------------------------------------------------------------------------

  bool node_state(NodeId n, Time* last, uint32_t* seq, uint32_t* group) const {
    if (!lists_.contains(n)) return false;
    *seq = lists_.stamp(n);
    *last = times_.time(*seq);
    *group = times_.group(*seq);
    return true;
  }
  const ReuseFit* fit(uint32_t g) const {
    return g < fitter_.categories() ? &fitter_.fit(static_cast<Group>(g)) : nullptr;
  }
  const ReuseFit* score_fit(uint32_t g) const { return g < scores_.size() ? &scores_[g] : nullptr; }
  double weight() const { return weight_; }
  uint32_t group_of(CategoryId type, uint32_t turn) const {
    if (!typed_) return 0;
    uint32_t bucket = std::min(std::max(turn, 1u), turn_buckets_) - 1;
    // Fold absurd type ids so that a group id always fits (types are a handful in practice).
    uint32_t types = static_cast<uint32_t>(GroupedLru::kMaxGroups) / turn_buckets_;
    return (type % types) * turn_buckets_ + bucket;
  }

 private:
  Key key(NodeId n) const { return {lists_.stamp(n), tree_.depth(n), n}; }
  // The category of the list a block is in: its stamp's (stamps change only off the lists).
  Group group_of_node(NodeId n) const { return times_.group(lists_.stamp(n)); }

  // The current request accesses `key`, which stays out of the lists: the fitter keeps its
  // previous access and now this one.
  void reuse_outside_lists(BlockKey key) {
    fitter_.reuse_departed(key);
    fitter_.depart(key, seq_);
  }

  void ensure_groups(size_t groups) {
    if (groups <= heads_.size()) return;
    lists_.ensure_groups(groups);
    heads_.resize(groups);
    fitter_.ensure_categories(groups);
    scores_.resize(groups, blend(fitter_.fit(static_cast<Group>(groups - 1))));
  }

  static ReuseFitter::Options fit_options(const Params& p) {
    ReuseFitter::Options o = reuse_fit_options(p);
    if (p.get_double("signal") > 0) o.signal_samples = uint64_t(p.get_int("signal_samples"));
    return o;
  }

  // New fits: the categories weigh min(1, spread / signal) x max(0, 1 - error / calibration)
  // (1 with signal=0, WA as published; docs/policies.md, wa), and every category scores with
  // its fit blended towards recency by that weight.
  void refitted() {
    ++vcache_gen_;  // every cached score is stale
    ++refits_;
    evicted_age_sum_ = 0;
    evicted_ = 0;
    if (signal_full_ > 0) {
      double spread = fitter_.signal().spread;
      spread_sum_ += spread;
      weight_ = std::min(1.0, spread / signal_full_);
      if (calibration_ > 0) {
        error_ = calibration_error();
        error_sum_ += error_;
        weight_ *= std::max(0.0, 1 - error_ / calibration_);
      }
    }
    weight_sum_ += weight_;
    pooled_lambda_ = fitter_.pooled().valid ? fitter_.pooled().lambda : 0;
    for (size_t g = 0; g < scores_.size(); ++g)
      scores_[g] = blend(fitter_.fit(static_cast<Group>(g)));
  }

  // How far the fits' reuse probability of a block that reached the signal age without a reuse,
  // pi e^{-lambda a} / (pi e^{-lambda a} + 1 - pi), is from the rate measured at that age: the
  // largest over the trusted categories of |ln((fit + d) / (measured + d))|, d = 0.01.
  double calibration_error() const {
    const std::vector<double>& reached = fitter_.signal_reached();
    const std::vector<double>& later = fitter_.signal_later();
    double a = double(fitter_.signal_age()) / kMicrosPerSecond, worst = 0;
    for (size_t g = 0; g < reached.size(); ++g) {
      const ReuseFit& f = fitter_.fit(static_cast<Group>(g));
      if (reached[g] < double(signal_samples_) || !f.valid) continue;
      double p = f.pi * std::exp(-f.lambda * a);
      double fitted = p > 0 ? p / (p + 1 - f.pi) : 0;
      double e = std::abs(std::log((fitted + 0.01) / (later[g] / reached[g] + 0.01)));
      worst = std::max(worst, e);
    }
    return worst;
  }

  // weight * log ReuseProb_w(t) + (1 - weight) * (-lambda t), lambda the pooled rate: at weight
  // 0 every category has the same score at the same age, so the order is LRU's; still linear in
  // the age within a category, so each list's first evictable block stays its minimum.
  ReuseFit blend(const ReuseFit& f) const {
    if (weight_ >= 1 || !f.valid) return f;
    ReuseFit b = f;
    b.log_const = weight_ > 0 ? weight_ * f.log_const : 0;
    b.lambda = weight_ * f.lambda + (1 - weight_) * pooled_lambda_;
    return b;
  }

  // The stamp table is full: forget the requests no cached block is stamped with any more, and
  // grow it if that frees less than a quarter. With one tier every cached block is in the lists,
  // sorted by stamp, so the oldest stamp is a list head's: O(W). Otherwise (two tiers: the
  // other tier's blocks are stamped too) scan every block; the table is then kept at least a
  // sixteenth of the ids, so the scans cost O(1) amortized per request.
  void make_room_for_stamps() {
    uint32_t oldest = seq_;
    size_t ids = std::min(tree_.id_limit(), lists_.ids());
    if (lists_.size() == tree_.size()) {
      for (Group g = lists_.first_nonempty(); g != GroupedLru::kNoGroup;
           g = lists_.next_nonempty(size_t{g} + 1))
        oldest = std::min(oldest, lists_.stamp(lists_.front(g)));
    } else {
      for (NodeId n = 0; n < ids; ++n)
        if (tree_.contains(n)) oldest = std::min(oldest, lists_.stamp(n));
      if (times_.capacity() < ids / 16) times_.grow(ids / 16);
    }
    times_.drop_before(oldest);
    if (times_.size() * 4 > times_.capacity() * 3) times_.grow(0);
  }

  // Erases n from its list; every block before the hint stays non-evictable.
  void unlink(NodeId n) {
    Group g = group_of_node(n);
    Head& h = heads_[g];
    if (h.hint == n) h.hint = lists_.next(n);
    if (h.first == n) h.first = kNoNode;
    lists_.erase(g, n);
  }

  // Inserts n into its category's list at its place by Key. The common case, a block accessed
  // right after its parent in the same request, goes just before the parent (as in lru.cc);
  // otherwise scan back from the tail (short: demoted blocks arrive roughly in age order).
  void place(NodeId n) { place(n, times_.group(lists_.stamp(n))); }
  void place(NodeId n, Group g) {
    uint32_t s = lists_.stamp(n);
    NodeId parent = tree_.parent(n);
    if (parent != kNoNode && lists_.contains(parent) && lists_.stamp(parent) == s) {
      lists_.insert_before(g, n, parent);
      return;
    }
    Key k = key(n);
    NodeId at = lists_.back(g);
    while (at != kNoNode && k < key(at)) at = lists_.prev(at);
    if (at == kNoNode) {
      lists_.push_front(g, n);
    } else {
      lists_.insert_after(g, n, at);
    }
    // A block placed before the hint must not be evictable (on_evictable fixes the hint when
    // it becomes so); a demoted evictable block is announced by on_evictable right after.
  }

  NodeId first_evictable(Group g) {
    NodeId x = heads_[g].hint;
    while (x != kNoNode && !tree_.is_evictable(x)) {
      x = lists_.next(x);
      ++scan_steps_;
    }
    heads_[g].hint = x;
    return x;
  }

  const PrefixTree& tree_;
  uint32_t turn_buckets_ = 5;
  bool typed_ = false;

  // Per block: every block of this tier in its category's list, oldest first, each stamped
  // with the counter of the request that last accessed it (any block the requests' paths
  // touched: also the other tier's, for their place when demoted to us).
  GroupedLru lists_;
  // Per category, in one record: every block before `hint` in its list is non-evictable
  // (kNoNode = the end); victim() remembers the category's first evictable block (kNoNode:
  // unknown), its last access (so that a new time rescores it without the stamp table) and, if
  // gen is vcache_gen_, its score at vcache_now_.
  struct Head {
    NodeId hint = kNoNode;
    NodeId first = kNoNode;
    Time last = 0;
    uint64_t gen = 0;
    double score = 0;
  };
  std::vector<Head> heads_;
  // Per request counter, from the oldest one a cached block is stamped with.
  StampTable times_;
  Time vcache_now_ = -1;
  uint64_t vcache_gen_ = 1;

  // The current request. Its time, now_, is the last access of every block it touches, so along
  // the request counter last-access times never decrease.
  Time now_ = 0;
  uint32_t seq_ = 0;
  Group cur_group_ = 0;

  uint64_t victim_calls_ = 0, scan_steps_ = 0;
  ReuseFitter fitter_;  // every category's reuse model, on the window's accesses

  // The fallback towards recency: scores_[g] is category g's fit blended with weight_.
  double calibration_ = 0;  // the calibration error at which the categories get no weight
  double error_ = 0, error_sum_ = 0;
  uint64_t signal_samples_ = 0;
  double signal_full_ = 0;  // the spread at which the categories get their full weight
  double weight_ = 1, pooled_lambda_ = 0;
  std::vector<ReuseFit> scores_;
  NodeId victim_ = kNoNode;  // the last victim() and its age, for the eviction age
  Time victim_age_ = 0;
  Time evicted_age_sum_ = 0;  // ages of the blocks evicted since the last refit
  uint64_t evicted_ = 0;
  uint64_t refits_ = 0;
  double spread_sum_ = 0, weight_sum_ = 0;
};

// WA's own parameters, then the reuse fit's.
std::vector<ParamSpec> wa_param_specs() {
  std::vector<ParamSpec> specs = {
      param_int("turn_buckets", 5, {.min = 1, .max = 64},
                "turn buckets of a category: 1, 2, ..., n+ (typed only)"),
      param_choice("categories", "typed", {"typed", "single"},
                   "typed = request type x turn bucket, single = one category"),
      param_double("signal", 0.02, {.min = 0, .max = 1},
                   "fall back towards LRU: the categories weigh min(1, spread / signal), spread "
                   "= the reuse variance they explain at the eviction age (0 = never, as "
                   "published)"),
      param_double("calibration", 0.5, {.min = 0, .max = 100},
                   "and weigh max(0, 1 - error / calibration), error = how far the fits' "
                   "reuse probability at the eviction age is from the measured one (0 = off)"),
      param_int("signal_samples", 100, {.min = 1},
                "a category counts in the spread once this many of its accesses reached the "
                "eviction age"),
  };
  for (ParamSpec& spec : reuse_fit_param_specs()) specs.push_back(std::move(spec));
  return specs;
}

const bool registered = register_policy<Wa>({
    .name = "wa",
    .summary = "lowest reuse probability within the category's lifespan (request type x turn), "
               "fitted online; deeper first on ties",
    .paper = "Wang et al., KVCache Cache in the Wild, USENIX ATC'25 (section 4.2)",
    .params = wa_param_specs(),
    .variants = {"life=none", "categories=single", "sample=0.5"},
});

}  // namespace

// Test support: the state the brute-force reference needs (tests/policy/wa_test.cc).
namespace wa_testing {

bool node_state(const Policy& p, NodeId n, Time* last, uint32_t* seq, uint32_t* group) {
  auto* wa = dynamic_cast<const Wa*>(&p);
  return wa && wa->node_state(n, last, seq, group);
}

bool fit(const Policy& p, uint32_t group, double* pi, double* lambda, double* life_s) {
  auto* wa = dynamic_cast<const Wa*>(&p);
  const ReuseFit* f = wa ? wa->fit(group) : nullptr;
  if (!f || !f->valid) return false;
  *pi = f->pi;
  *lambda = f->lambda;
  *life_s = f->life_s;
  return true;
}

bool score_fit(const Policy& p, uint32_t group, double* log_const, double* lambda) {
  auto* wa = dynamic_cast<const Wa*>(&p);
  const ReuseFit* f = wa ? wa->score_fit(group) : nullptr;
  if (!f || !f->valid) return false;
  *log_const = f->log_const;
  *lambda = f->lambda;
  return true;
}

uint32_t group_of(const Policy& p, CategoryId type, uint32_t turn) {
  return dynamic_cast<const Wa&>(p).group_of(type, turn);
}

}  // namespace wa_testing
}  // namespace kvpolicy
