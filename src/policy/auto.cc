// auto: an adaptive meta-policy that evicts the victim of whichever candidate policy currently
// hits most on a sampled shadow of the cache, inside the guard. Source: a rule made here, after
// SHARDS (spatially sampled miss-ratio curves) and LeCaR/CACHEUS (online choice among policies);
// docs/policies.md "auto" states it, its parameters, its cost and its switch window.
// Cost: every candidate's own cost on the real tree (each hears every call), plus a fraction R
// of a full replay per candidate (its shadow), plus the guard's (guarded.h); measured in
// docs/results/bench.md "auto's cost (issue 36, second pass)".
#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "guarded.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/order/intrusive_list.h"
#include "kvpolicy/policy/policy.h"
#include "sampled_shadow.h"

namespace kvpolicy {
namespace {

// "lru|s3fifo|fpb:predictor=reuse;x=1" -> specs; a candidate's parameters follow ':' (or its
// first ';') and are separated by ';' so the set fits in one comma-separated policy list.
std::vector<PolicySpec> parse_candidates(const std::string& text) {
  std::vector<PolicySpec> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t bar = text.find('|', start);
    std::string item =
        text.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    size_t sep = item.find_first_of(":;");
    PolicySpec spec{item.substr(0, sep), sep == std::string::npos ? "" : item.substr(sep + 1)};
    std::replace(spec.params.begin(), spec.params.end(), ';', ',');
    if (spec.name.empty())
      throw ConfigError("auto: parameter candidates = '" + text + "' has an empty candidate");
    if (needs_future(spec))
      throw ConfigError("auto: candidate '" + spec.label() +
                        "' reads the trace's future; auto's candidates must be online");
    out.push_back(std::move(spec));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return out;
}

// A stats name from a candidate's label: letters, digits and '_' only.
std::string stat_name(const std::string& label) {
  std::string s = label;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// FPB with the reuse predictor is left out: on the tuning workloads the set without it hits as
// often (and is nearer LRU where it falls below) at half the time (docs/policies.md "auto").
constexpr const char* kDefaultCandidates = "lru|s3fifo|gdsf|wa";

struct AutoOptions {
  std::vector<PolicySpec> candidates;
  double sample = 0.05;     // R before the minimum shadow size
  int64_t min_blocks = 0;   // the shadow's minimum capacity
  double half_life = 1;     // in multiples of the shadow's capacity, in sampled accesses
  double hysteresis = 0;    // relative margin a challenger must lead by
  double significance = 0;  // and by this many standard deviations (Poisson) of the two scores
  bool all_live = true;     // every candidate on the real tree, or only the leader
};

AutoOptions options_of(const Params& p) {
  AutoOptions o;
  o.candidates = parse_candidates(p.get_string("candidates"));
  o.sample = p.get_double("sample");
  o.min_blocks = p.get_int("min_blocks");
  o.half_life = p.get_double("half_life");
  o.hysteresis = p.get_double("hysteresis");
  o.significance = p.get_double("significance");
  o.all_live = p.get_string("live") == "all";
  return o;
}

// The selector: every candidate on the real tree, hearing every call; the leader's victim.
class AutoSelector final : public Policy {
 public:
  AutoSelector(const PolicyContext& ctx, const Params& p) : AutoSelector(ctx, options_of(p)) {}
  AutoSelector(const PolicyContext& ctx, const AutoOptions& o)
      : tree_(*ctx.tree),
        ctx_(ctx),
        hysteresis_(o.hysteresis),
        significance_(o.significance),
        all_live_(o.all_live) {
    ctx_.future.reset();
    size_t k = std::max<size_t>(ctx.capacity_blocks, 1);
    rate_ = std::min(1.0, std::max(o.sample, double(o.min_blocks) / double(k)));
    shadow_capacity_ = std::max<size_t>(1, size_t(std::llround(rate_ * double(k))));
    // Decay per sampled access: scores halve every half_life x shadow capacity of them.
    decay_ = std::pow(0.5, 1.0 / std::max(1e-9, o.half_life * double(shadow_capacity_)));
    sampler_ = KeySampler(rate_);
    for (const PolicySpec& spec : o.candidates) {
      Candidate c;
      c.label = spec.label();
      c.spec = spec;
      if (all_live_ || candidates_.empty()) c.policy = make_policy(spec, ctx_);
      c.shadow = std::make_unique<SampledShadow>(spec, ctx, shadow_capacity_);
      candidates_.push_back(std::move(c));
    }
  }

  void reserve_ids(size_t ids) override {
    ids_ = ids;
    for (auto& c : candidates_)
      if (c.policy) c.policy->reserve_ids(ids);
    if (!all_live_) recency_.resize(ids);
  }
  void on_request_begin(const RequestView& r) override {
    for (auto& c : candidates_)
      if (c.policy) c.policy->on_request_begin(r);
    told_ = answer_ = false;
  }
  void on_access(NodeId n, const AccessInfo& info) override {
    // Serve: a request told from past its first block is an answer written at completion
    // (guarded.h): no prompt requested, so the sampled shadows do not score it.
    if (!told_) answer_ = ctx_.serving && info.position > 0;
    told_ = true;
    for (auto& c : candidates_)
      if (c.policy) c.policy->on_access(n, info);
    if (!all_live_) {  // lru.cc's order: what a new leader is built from
      if (recency_.contains(n)) recency_.erase(n);
      NodeId parent = tree_.parent(n);
      if (info.position == 0 || parent == kNoNode || !recency_.contains(parent)) {
        recency_.push_back(n);
      } else {
        recency_.insert_before(n, parent);
      }
    }
  }
  void on_evictable(NodeId n) override {
    for (auto& c : candidates_)
      if (c.policy) c.policy->on_evictable(n);
  }
  void on_unevictable(NodeId n) override {
    for (auto& c : candidates_)
      if (c.policy) c.policy->on_unevictable(n);
  }
  // Every live candidate keeps the same claims (each behind its own retention wrapper): the
  // leader's answer is theirs.
  std::optional<int32_t> retention_priority(NodeId n) const override {
    return candidates_[leader_].policy->retention_priority(n);
  }
  void on_time(Time now) override {
    for (auto& c : candidates_)
      if (c.policy) c.policy->on_time(now);
  }
  // Only the leader is asked; it changes only between requests, so asked twice, the same block.
  NodeId victim(Time now) override { return chosen_ = candidates_[leader_].policy->victim(now); }

  // The leader's own victim commits it; the others (and all, for a block the leader did not
  // name: the guard's LRU choice) hear it leave as an outside removal, as the cache's owner
  // drops a block (policy_driver.cc: a candidate no more, then kDropped).
  void on_removed(NodeId n, Removal why) override {
    if (!all_live_ && recency_.contains(n)) recency_.erase(n);
    if (!is_victim(why)) {
      for (auto& c : candidates_)
        if (c.policy) c.policy->on_removed(n, why);
      chosen_ = kNoNode;
      return;
    }
    bool leaders = n == chosen_;
    if (leaders)
      ++candidates_[leader_].evictions;
    else
      ++outside_;
    for (size_t i = 0; i < candidates_.size(); ++i) {
      if (!candidates_[i].policy) continue;
      Policy& p = *candidates_[i].policy;
      if (leaders && i == leader_) {
        p.on_removed(n, why);
      } else {
        p.on_unevictable(n);
        p.on_removed(n, Removal::kDropped);
      }
    }
    chosen_ = kNoNode;
  }

  void on_request_end(const RequestView& r, std::span<const NodeId> path) override {
    for (auto& c : candidates_)
      if (c.policy) c.policy->on_request_end(r, path);
    if (answer_) return;
    sampler_.sample(r.blocks, sampled_);
    if (sampled_.empty()) return;
    double f = std::pow(decay_, double(sampled_.size()));
    for (auto& c : candidates_) {
      uint32_t hits = c.shadow->access(r, sampled_);
      c.score = c.score * f + double(hits);
    }
    choose_leader();
  }

  size_t memory_bytes() const override {
    size_t b = 0;
    for (auto& c : candidates_)
      b += (c.policy ? c.policy->memory_bytes() : 0) + c.shadow->memory_bytes();
    return b + recency_.memory_bytes();
  }

  PolicyStats stats() const override {
    uint64_t evictions = outside_;
    for (auto& c : candidates_) evictions += c.evictions;
    PolicyStats s{{"auto_switches", double(switches_)},
                  {"auto_sample_rate", rate_},
                  {"auto_shadow_blocks", double(shadow_capacity_)},
                  {"auto_leader", double(leader_)}};
    for (auto& c : candidates_) {
      std::string name = stat_name(c.label);
      s.push_back({"auto_eviction_share_" + name,
                   evictions == 0 ? 0.0 : double(c.evictions) / double(evictions)});
      s.push_back({"auto_shadow_hit_rate_" + name,
                   c.shadow->accesses() == 0
                       ? 0.0
                       : double(c.shadow->hits()) / double(c.shadow->accesses())});
    }
    return s;
  }

 private:
  struct Candidate {
    std::string label;
    PolicySpec spec;
    std::unique_ptr<Policy> policy;  // null when not live
    std::unique_ptr<SampledShadow> shadow;
    double score = 0;  // decayed sampled hits
    uint64_t evictions = 0;
  };

  // The candidate with the most decayed hits leads once it beats the leader by the margin;
  // ties keep the earlier candidate.
  void choose_leader() {
    size_t best = leader_;
    for (size_t i = 0; i < candidates_.size(); ++i)
      if (candidates_[i].score > candidates_[best].score) best = i;
    double b = candidates_[best].score, l = candidates_[leader_].score;
    if (best != leader_ && b > l * (1 + hysteresis_) && b - l > significance_ * std::sqrt(b + l)) {
      if (!all_live_) rebuild(best);
      leader_ = best;
      ++switches_;
    }
  }

  // live=leader: the new leader is built on the cache as it is, told of every cached block in
  // recency order (oldest first, as if inserted then) and of the evictable ones; the old one goes.
  void rebuild(size_t next) {
    candidates_[leader_].policy.reset();
    auto p = make_policy(candidates_[next].spec, ctx_);
    p->reserve_ids(ids_);
    AccessInfo info;
    for (NodeId n = recency_.front(); n != kNoNode; n = recency_.next(n)) {
      info.position = tree_.depth(n);
      info.kind = tree_.tier(n) == Tier::kDram ? AccessKind::kDemoted : AccessKind::kInserted;
      p->on_access(n, info);
    }
    for (NodeId n = recency_.front(); n != kNoNode; n = recency_.next(n))
      if (tree_.is_evictable(n)) p->on_evictable(n);
    candidates_[next].policy = std::move(p);
  }

  const PrefixTree& tree_;
  PolicyContext ctx_;
  std::vector<Candidate> candidates_;
  double hysteresis_, significance_;
  bool all_live_;
  bool told_ = false, answer_ = false;  // the current request: heard of a block; an answer
  IntrusiveList recency_;               // live=leader: every block of the tier, LRU's order
  size_t ids_ = 0;
  double rate_ = 1, decay_ = 1;
  size_t shadow_capacity_ = 1;
  KeySampler sampler_{1.0};
  std::vector<BlockKey> sampled_;
  size_t leader_ = 0;
  NodeId chosen_ = kNoNode;
  uint64_t switches_ = 0, outside_ = 0;
};

std::unique_ptr<Policy> make_auto(const PolicyContext& ctx, const Params& p) {
  auto selector = std::make_unique<AutoSelector>(ctx, p);
  if (!p.get_bool("guard")) return selector;
  GuardOptions g;
  g.ratio = p.get_double("ratio");
  g.slack = p.get_double("slack");
  g.allowance = p.get_double("allowance");
  g.induced = p.get_bool("induced");
  return std::make_unique<Guarded>(ctx, std::move(selector), g);
}

const bool registered = register_policy<AutoSelector>({
    .name = "auto",
    .summary = "the victim of the candidate policy (lru, s3fifo, gdsf, wa) hitting most on "
               "sampled shadow caches, inside the guard (block hit rate >= LRU's - 0.2 points)",
    .paper = "made here, after SHARDS (sampled shadows) and LeCaR/CACHEUS (choosing online)",
    .params = {param_string("candidates", kDefaultCandidates,
                            "online policies, '|' between them, ';' between one's parameters; "
                            "the first leads at the start"),
               param_double("sample", 0.05, {.min = 0, .max = 1, .min_exclusive = true},
                            "the shadows' spatial sampling rate R of block keys"),
               param_int("min_blocks", 1024, {.min = 0},
                         "the shadows' minimum capacity: R = min(1, max(sample, min_blocks/k))"),
               param_double("half_life", 1, {.min = 0, .min_exclusive = true},
                            "the sampled hits' half-life, in multiples of the shadow's capacity "
                            "(in sampled accesses)"),
               param_double("hysteresis", 0.02, {.min = 0},
                            "a challenger leads once its decayed hits exceed the leader's by "
                            "this fraction"),
               param_double("significance", 0, {.min = 0},
                            "and by this many standard deviations: sqrt of the two decayed hit "
                            "counts' sum (0: the hysteresis alone)"),
               param_choice("live", "all", {"all", "leader"},
                            "all: every candidate keeps its order on the real tree; leader: only "
                            "the leader, a new one built from the cache's recency order"),
               param_bool("guard", true,
                          "inside guarded's budget against a shadow LRU (false: the selector "
                          "alone, no bound)"),
               param_bool("induced", false,
                          "the guard's rule 2: a detected score-induced miss takes LRU's victim "
                          "(the bound needs only the budget)"),
               param_double("ratio", 1, {.min = 1}, "the guard's factor on LRU's misses"),
               param_double("slack", 0, {.min = 0},
                            "the guard's additive slack, in multiples of the capacity k"),
               param_double("allowance", 0.002, {.min = 0, .max = 1},
                            "the guard's misses allowed per block requested: auto's block hit "
                            "rate is at most this (+ slack x k / accesses) below LRU's")},
    .variants = {"guard=false", "candidates=lru|s3fifo,sample=1,hysteresis=0",
                 "candidates=fifo|lfu|sieve,min_blocks=1,sample=0.2,half_life=0.25",
                 "guard=false,candidates=gdsf", "live=leader,min_blocks=4,hysteresis=0",
                 "induced=true,slack=0", "significance=2,half_life=4",
                 "live=leader,guard=false,candidates=lfu|lru|s3fifo,sample=1,half_life=0.1"},
    .make = make_auto,
});

}  // namespace
}  // namespace kvpolicy
