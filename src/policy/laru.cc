// LARU: the largest predicted next access among the max(floor(lambda n), 1) LRU leaves; LRU on
// a prediction-induced miss. Source: LCR (lcr-laru-robust-learned-gpu-caching), Algorithm 1.
// Cost: O(1) per access + 1 prediction; O(log n) per eviction (heap at lambda = 1, else treap).
#include <cmath>
#include <cstdint>

#include "kvpolicy/policy/walk.h"
#include "learned_common.h"

namespace kvpolicy {
namespace {

// Phases and the old set O are tracked with stamps: a block is in O when it is cached and its
// stamp (the phase of its last request or insertion) is older than the current phase, so a new
// phase (O := every cached block) costs O(1). E, the blocks evicted by prediction in this
// phase, holds block keys (they are no longer in the tree), cleared per phase.
class Laru final
    : public InlinedPolicy<Laru, learned::LearnedPolicy<learned::kHeap | learned::kLazyTreap>> {
 public:
  static constexpr PolicyHooks kHooks{};
  Laru(const PolicyContext& ctx, const Params& params)
      : InlinedPolicy(ctx, params), b_(params.get_double("b")) {
    int64_t h = params.get_int("halve_every");
    halve_every_ = h == 0 ? std::max<uint64_t>(1, ctx.capacity_blocks / 32) : uint64_t(h);
    count_phases_ = params.get_string("phase") == "count";
    chain_misses_ = params.get_string("induced") == "chain";
    carry_ = params.get_string("carry") == "evidence";
    carry_w_ = params.get_double("carry_w");
    carry_gain_ = params.get_double("carry_gain");
    capacity_ = ctx.capacity_blocks;
  }

  void reserve_ids(size_t ids) override {
    LearnedPolicy::reserve_ids(ids);
    stamp_.resize(ids, 0);
  }

  void on_request_begin(const RequestView& r) override {
    LearnedPolicy::on_request_begin(r);
    request_path_.clear();
    missed_ = false;
    last_induced_pos_ = kNoPosition;
  }

  NodeId victim(Time) override {
    if (evictable() == 0) return kNoNode;
    // The cache is full (we are asked to evict) and O is empty; or, with phase=count (the
    // authors' SGLang code), k blocks have been touched since the phase began.
    if (count_phases_ ? phase_ == 0 || touched_in_phase_ >= capacity_ : old_count_ == 0) {
      ++phase_;
      old_count_ = tree_.size();
      // The blocks the current request already touched count as requested in the new phase:
      // a request's blocks are accessed together (docs/policies.md, "Common ground"), and they are
      // pinned, so left in O they could outlive a block evicted by prediction and break
      // 1-consistency.
      for (NodeId n : request_path_) {
        if (stamp_[n] < phase_) --old_count_;
        stamp_[n] = phase_;
      }
      touched_in_phase_ = request_path_.size();
      lambda_ = start_lambda();
      lambda_start_ = lambda_;
      if (lambda_ < 1) ++distrusting_phases_;
      if (lambda_ == 1) release_treap();  // the heap answers until lambda drops
      phase_prediction_evictions_ = 0;
      phase_induced_misses_ = 0;
      evicted_by_prediction_.clear();
      misses_in_phase_ = 0;
    }
    // A prediction-induced miss: one LRU eviction (and, once it leaves, less trust).
    BlockKey x;
    if (incoming(&x) && evicted_by_prediction_.contains(x)) {
      choice_ = Choice::kInducedLru;
      return lru();
    }
    size_t n = evictable();
    size_t l = std::max<size_t>(size_t(std::floor(lambda_ * double(n))), 1);
    choice_ = l == 1 ? Choice::kLru : Choice::kPredicted;
    return l == 1 ? lru() : choose(l);
  }

  size_t memory_bytes() const override {
    return LearnedPolicy::memory_bytes() + stamp_.capacity() * sizeof(uint32_t) +
           evicted_by_prediction_.memory_bytes();
  }

 private:
  void note_access(NodeId n, bool reused) override {
    if (reused && stamp_[n] < phase_) --old_count_;  // requested: no longer old
    if (!reused || stamp_[n] != phase_) ++touched_in_phase_;
    stamp_[n] = phase_;
    request_path_.push_back(n);
    // If the next block misses, victim() looks it up in E first thing: load its slot now. After
    // a miss every later block misses too (a miss ends the cached prefix), so load further ahead.
    constexpr size_t kAhead = 8;
    BlockKey next;
    if (reused) {
      if (incoming(&next)) evicted_by_prediction_.prefetch(next);
      return;
    }
    for (size_t k = missed_ ? kAhead - 1 : 0; k < kAhead; ++k)
      if (incoming(&next, k)) evicted_by_prediction_.prefetch(next);
    missed_ = true;
  }
  // The commit of victim()'s choice.
  void note_removed(NodeId n, Removal why) override {
    if (stamp_[n] < phase_) --old_count_;
    if (!is_victim(why)) return;
    switch (choice_) {
      case Choice::kInducedLru: {
        ++prediction_induced_misses_;
        ++phase_induced_misses_;
        // A run of such misses at consecutive prompt positions is one returning chain: the
        // paper's item is a radix node, which holds the whole chain (induced=chain).
        size_t pos = incoming_position();
        bool same_chain = last_induced_pos_ != kNoPosition &&
                          (pos == last_induced_pos_ || pos == last_induced_pos_ + 1);
        last_induced_pos_ = pos;
        if (!same_chain) ++induced_chains_;
        if ((!chain_misses_ || !same_chain) && ++misses_in_phase_ % halve_every_ == 0) {
          lambda_ /= b_;
          ++halvings_;
        }
        ++lru_evictions_;
        break;
      }
      case Choice::kLru:
        ++lru_evictions_;
        break;
      case Choice::kPredicted:
        evicted_by_prediction_.insert(tree_.key(n));
        ++prediction_evictions_;
        ++phase_prediction_evictions_;
        if (lambda_ == 1) ++full_trust_evictions_;
        break;
    }
  }
  void add_stats(PolicyStats& s) const override {
    s.push_back({"phases", double(phase_)});
    s.push_back({"lambda", lambda_});
    s.push_back({"lambda_halvings", double(halvings_)});
    s.push_back({"prediction_induced_misses", double(prediction_induced_misses_)});
    s.push_back({"induced_chains", double(induced_chains_)});
    s.push_back({"full_trust_evictions", double(full_trust_evictions_)});
    s.push_back({"distrusting_phases", double(distrusting_phases_)});
    s.push_back({"prediction_evictions", double(prediction_evictions_)});
    s.push_back({"lru_evictions", double(lru_evictions_)});
  }

  // lambda at a phase start. reset (Algorithm 1): 1. evidence: (lambda_s * k^-e)^w, lambda_s
  // the last phase's start value and e its share of prediction evictions that came back as
  // prediction-induced misses (docs/policies.md, "carry=evidence"); e = 0 throughout with a
  // perfect predictor, so lambda stays 1 and 1-consistency holds.
  double start_lambda() const {
    if (!carry_ || phase_ <= 1) return 1;
    double e = phase_prediction_evictions_ == 0
                   ? 0
                   : std::min(1.0, carry_gain_ * double(phase_induced_misses_) /
                                       double(phase_prediction_evictions_));
    if (e == 0 && lambda_start_ == 1) return 1;  // exact: no rounding through pow
    return std::pow(lambda_start_ * std::pow(double(capacity_), -e), carry_w_);
  }

  // How the last victim was chosen: by LRU after a prediction-induced miss, by LRU (l = 1), or
  // by prediction among the l oldest.
  enum class Choice { kInducedLru, kLru, kPredicted };

  static constexpr size_t kNoPosition = SIZE_MAX;

  double b_;
  uint64_t halve_every_;
  bool chain_misses_;                      // induced=chain: one halving per returning chain
  size_t last_induced_pos_ = kNoPosition;  // of the current request's last such miss
  Choice choice_ = Choice::kLru;
  bool count_phases_;
  size_t capacity_;
  size_t touched_in_phase_ = 0;  // phase=count: blocks inserted or first hit in this phase
  double lambda_ = 1;
  bool carry_;               // carry=evidence
  double carry_w_;           // the share of the last phase's distrust kept
  double carry_gain_;        // e = min(1, gain * induced / prediction evictions)
  double lambda_start_ = 1;  // lambda at the current phase's start
  uint64_t phase_prediction_evictions_ = 0, phase_induced_misses_ = 0;  // in the current phase
  uint64_t distrusting_phases_ = 0;  // phases started with lambda < 1
  uint32_t phase_ = 0;
  size_t old_count_ = 0;  // |O|
  uint64_t misses_in_phase_ = 0;
  BlockVector<uint32_t> stamp_;
  std::vector<NodeId> request_path_;  // blocks of the current request touched so far
  bool missed_ = false;               // the current request has missed a block
  KeySet evicted_by_prediction_;
  uint64_t prediction_induced_misses_ = 0, halvings_ = 0, prediction_evictions_ = 0,
           lru_evictions_ = 0;
  uint64_t induced_chains_ = 0;        // runs of such misses at consecutive prompt positions
  uint64_t full_trust_evictions_ = 0;  // by prediction with lambda = 1 (l = every leaf)
};

const bool registered = register_policy<Laru>({
    .name = "laru",
    .summary = "learning-augmented LRU: max predicted next access among the l LRU leaves, "
               "l shrinking on prediction-induced misses (1-consistent, O(k)-robust)",
    .paper = "LCR: robust learned GPU caching (LARU, Algorithm 1)",
    .params = learned::with(
        learned::common_params(),
        {param_double("b", 2, {.min = 1, .min_exclusive = true},
                      "lambda is divided by b on prediction-induced misses"),
         param_int("halve_every", 1, {.min = 0},
                   "divide lambda every this many such misses (0 = k/32, the paper's LLM setting)"),
         param_choice("induced", "block", {"block", "chain"},
                      "block: every prediction-induced miss counts towards halving lambda; "
                      "chain: a run of them at consecutive positions of one prompt (a returning "
                      "chain, the paper's radix node) counts once"),
         param_choice("phase", "old", {"old", "count"},
                      "old: a phase ends when every old block was requested or evicted "
                      "(Algorithm 1); count: after k blocks were touched (the authors' SGLang "
                      "code)"),
         param_choice("carry", "reset", {"reset", "evidence"},
                      "lambda at a phase start: reset = 1 (Algorithm 1); evidence = "
                      "(lambda_s * k^-e)^carry_w, lambda_s the last phase's start value and e "
                      "min(1, carry_gain * its prediction-induced misses per prediction "
                      "eviction); 1 after a clean phase at full trust"),
         param_double("carry_w", 0.9, {.min = 0, .max = 1},
                      "carry=evidence: the share of the distrust (-log lambda) carried into "
                      "the next phase (0 = reset)"),
         param_double("carry_gain", 2, {.min = 0, .min_exclusive = true},
                      "carry=evidence: e = min(1, carry_gain * induced misses / prediction "
                      "evictions) of the last phase")}),
    .variants = {"phase=count", "halve_every=0", "predictor=noisy,p=0.3",
                 "induced=chain,predictor=noisy,p=0.3", "carry=evidence,predictor=noisy,p=0.3"},
    .needs_future = true,
    .needs_future_with = learned::predictor_needs_future,
});

}  // namespace
}  // namespace kvpolicy
