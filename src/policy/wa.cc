// WA: evicts the evictable block least likely to be reused within its category's lifespan,
// ReuseProb_w(t) = pi_w (e^{-lambda_w t} - e^{-lambda_w (t + Life_w)}), deeper first on ties.
// Source: Wang et al., "KVCache Cache in the Wild" (USENIX ATC'25), section 4.2 (ALGORITHMS.md 4).
// Cost: O(1) per access (a hash update for the reuse fit); O(W) per eviction, W = categories.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <span>

#include "kvpolicy/error.h"
#include "kvpolicy/order/grouped_lru.h"
#include "kvpolicy/policy.h"

namespace kvpolicy {
namespace {

using Group = GroupedLru::Group;

// Block key -> its latest access (instance index, time, category), one 24-byte slot per entry,
// so that recording an access touches one cache line. Insert-only; rebuilt on compaction.
class InstanceMap {
 public:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Entry {
    Time time;
    uint32_t index;  // kEmpty: none
    Group group;
  };
  explicit InstanceMap(size_t expected = 1024) {
    slots_.assign(std::bit_ceil(std::max<size_t>(16, expected * 2)), Slot{});
  }
  // The entry of `key`, with index kEmpty if absent; the caller must then fill it.
  Entry& operator[](BlockKey key) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    Slot& s = slots_[probe(key)];
    if (s.entry.index == kEmpty) {
      s.key = key;
      ++size_;
    }
    return s.entry;
  }
  void prefetch(BlockKey key) const {
    __builtin_prefetch(&slots_[mix64(key) & (slots_.size() - 1)]);
  }
  size_t memory_bytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    BlockKey key = 0;
    Entry entry{0, kEmpty, 0};
  };
  size_t probe(BlockKey key) const {
    size_t mask = slots_.size() - 1, i = mix64(key) & mask;
    while (slots_[i].entry.index != kEmpty && slots_[i].key != key) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    for (const Slot& s : old)
      if (s.entry.index != kEmpty) slots_[probe(s.key)] = s;
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

// The fitted reuse model of one category: log ReuseProb(t) = log_const - lambda * t (seconds).
struct Fit {
  bool valid = false;
  double pi = 0;         // share of the category's block accesses reused later in the window
  double lambda = 0;     // 1 / mean reuse time, per second
  double life_s = 0;     // Life_w in seconds (infinite when life=none)
  double log_const = 0;  // log pi + log(1 - e^{-lambda Life})
  uint64_t samples = 0;
};

// Order of blocks inside a category: older last access first, then deeper first. `seq` counts
// requests, so it refines the trace's timestamps (which can tie between requests) by arrival.
struct Key {
  uint32_t seq;
  uint32_t depth;
  bool operator<(const Key& o) const { return seq != o.seq ? seq < o.seq : depth > o.depth; }
};

class Wa final : public Policy {
 public:
  Wa(const PolicyContext& ctx, const Params& p) : tree_(*ctx.tree), history_(1024) {
    window_ = seconds_param(p, "window_s");
    refit_ = seconds_param(p, "refit_s");
    if (window_ <= 0 || refit_ <= 0) throw ConfigError("wa: window_s and refit_s must be > 0");
    std::string life = p.get_string("life");
    if (life == "p90") {
      life_mode_ = LifeMode::kP90;
    } else if (life == "p90_all") {
      life_mode_ = LifeMode::kP90All;
    } else if (life == "none") {
      life_mode_ = LifeMode::kNone;
    } else {
      char* end = nullptr;
      life_fixed_s_ = std::strtod(life.c_str(), &end);
      if (end != life.c_str() + life.size() || !(life_fixed_s_ > 0) ||
          !std::isfinite(life_fixed_s_))
        throw ConfigError(
            "wa: life must be p90, p90_all, none or a positive number of seconds, not '" + life +
            "'");
      life_mode_ = LifeMode::kFixed;
    }
    int64_t buckets = p.get_int("turn_buckets");
    if (buckets < 1 || buckets > 64) throw ConfigError("wa: turn_buckets must be in 1..64");
    turn_buckets_ = static_cast<uint32_t>(buckets);
    std::string cats = p.get_string("categories");
    if (cats == "typed") {
      typed_ = true;
    } else if (cats != "single") {
      throw ConfigError("wa: categories must be typed or single, not '" + cats + "'");
    }
    int64_t min_samples = p.get_int("min_samples");
    if (min_samples < 1) throw ConfigError("wa: min_samples must be >= 1");
    min_samples_ = static_cast<uint64_t>(min_samples);
    double sample = p.get_double("sample");
    if (!(sample > 0 && sample <= 1)) throw ConfigError("wa: sample must be in (0, 1]");
    // Keys whose hash falls below the threshold are tracked (a spatial sample, as in SHARDS):
    // the fits see every access of a sampled key and none of the others.
    sample_threshold_ = sample >= 1 ? UINT64_MAX : static_cast<uint64_t>(sample * 0x1p64);
    ensure_groups(1);
  }

  // ---- the access stream: the reuse statistics and the request counter --------------------

  void on_request_begin(const RequestView& r) override {
    cur_time_ = advance(r.time);
    ++seq_;
    cur_group_ = group_of(r.category, r.turn);
    cur_blocks_ = r.blocks;
    ensure_groups(cur_group_ + 1);
    // The map misses the cache on every key: fetch a few keys ahead.
    constexpr size_t kAhead = 8;
    const size_t n = r.blocks.size();
    for (size_t i = 0; i < std::min(n, kAhead); ++i) history_.prefetch(r.blocks[i]);
    for (size_t i = 0; i < n; ++i) {
      if (i + kAhead < n) history_.prefetch(r.blocks[i + kAhead]);
      record(r.blocks[i], cur_time_, cur_group_);
    }
  }

  void on_access(NodeId n, const AccessInfo& info) override {
    ensure_ids();
    bool real = info.position >= cur_blocks_.size() || cur_blocks_[info.position] == tree_.key(n);
    if (real) {
      // A block of the current request: it becomes the newest of the request's category.
      set_state(n, cur_time_, seq_, cur_group_);
      if (lists_.contains(n)) unlink(n);
      place(n);
    } else {
      // A block demoted from the tier above (we are the DRAM policy): it keeps the last access
      // recorded in on_request_end, so it goes to its place by age, not to the tail.
      if (lists_.contains(n)) unlink(n);
      place(n);
    }
  }

  // Every request's path (both tiers): records the last access of blocks this instance does
  // not see through on_access, and refreshes the ones it holds (DRAM hits left unpromoted).
  void on_request_end(const RequestView&, std::span<const NodeId> path) override {
    ensure_ids();
    for (NodeId n : path) {
      if (seq_of_[n] == seq_ && group_[n] == cur_group_) continue;
      set_state(n, cur_time_, seq_, cur_group_);
      if (lists_.contains(n)) {
        unlink(n);
        place(n);
      }
    }
    cur_blocks_ = {};
  }

  // ---- the evictable set ---------------------------------------------------------------------

  void on_evictable(NodeId n) override {
    if (!lists_.contains(n)) return;
    Group g = lists_.group_of(n);
    if (hint_[g] == kNoNode || key(n) < key(hint_[g])) hint_[g] = n;
  }
  void on_unevictable(NodeId) override {}
  void on_removed(NodeId n) override {
    if (lists_.contains(n)) unlink(n);
  }

  // The minimum of (ReuseProb, last access order, -offset) over every category's oldest
  // evictable block. Within a category log ReuseProb = log_const - lambda t falls (weakly,
  // also in floating point, as every operation rounds monotonically) with age, and the list is
  // kept by age, so its first evictable block is its minimum under that order.
  NodeId victim(Time now) override {
    now = std::max(now, now_);
    NodeId best = kNoNode;
    double best_score = 0;
    ++victim_calls_;
    for (Group g = lists_.first_nonempty(); g != GroupedLru::kNoGroup;
         g = lists_.next_nonempty(size_t{g} + 1)) {
      NodeId x = first_evictable(g);
      if (x == kNoNode) continue;
      double s = score(g, now - last_[x]);
      if (best == kNoNode || s < best_score || (s == best_score && key(x) < key(best))) {
        best = x;
        best_score = s;
      }
    }
    return best;
  }

  size_t memory_bytes() const override {
    return lists_.memory_bytes() + last_.capacity() * sizeof(Time) +
           seq_of_.capacity() * sizeof(uint32_t) + group_.capacity() * sizeof(Group) +
           hint_.capacity() * sizeof(NodeId);
  }

  PolicyStats stats() const override {
    size_t used = 0;
    for (const Counts& c : counts_) used += c.n > 0;
    return {{"refits", double(refits_)},
            {"categories_in_window", double(used)},
            {"window_accesses", double(inst_.size() - head_)},
            {"scan_steps_per_victim", victim_calls_ ? double(scan_steps_) / victim_calls_ : 0}};
  }

  // ---- test support --------------------------------------------------------------------------

  bool node_state(NodeId n, Time* last, uint32_t* seq, uint32_t* group) const {
    if (!lists_.contains(n)) return false;
    *last = last_[n];
    *seq = seq_of_[n];
    *group = lists_.group_of(n);
    return true;
  }
  const Fit* fit(uint32_t g) const { return g < fits_.size() ? &fits_[g] : nullptr; }
  bool fitted() const { return fitted_; }
  uint32_t group_of(CategoryId type, uint32_t turn) const {
    if (!typed_) return 0;
    uint32_t bucket = std::min(std::max(turn, 1u), turn_buckets_) - 1;
    // Fold absurd type ids so that a group id always fits (types are a handful in practice).
    uint32_t types = static_cast<uint32_t>(GroupedLru::kMaxGroups) / turn_buckets_;
    return (type % types) * turn_buckets_ + bucket;
  }

 private:
  enum class LifeMode { kP90, kP90All, kNone, kFixed };
  bool needs_reuse_times() const {
    return life_mode_ == LifeMode::kP90 || life_mode_ == LifeMode::kP90All;
  }
  struct Instance {
    Time time;
    BlockKey key;
    Time reuse;  // time to the next access of the key, -1 while none seen
    Group group;
  };
  struct Reuse {
    Time instance_time;
    Time reuse;
    Group group;
  };
  struct Counts {
    uint64_t n = 0, reused = 0;
    int64_t reuse_sum = 0;  // microseconds
  };

  static Time seconds_param(const Params& p, const std::string& name) {
    double s = p.get_double(name);
    if (!std::isfinite(s)) throw ConfigError("wa: " + name + " must be finite");
    return static_cast<Time>(std::llround(s * kMicrosPerSecond));
  }

  Key key(NodeId n) const { return {seq_of_[n], tree_.depth(n)}; }

  double score(Group g, Time age) const {
    const Fit& f = fits_[g];
    if (!f.valid) return 0;  // no fit yet: every block scores alike, so the order is LRU
    return f.log_const - f.lambda * (double(age) / kMicrosPerSecond);
  }

  // Time never runs backwards for the policy: ages stay >= 0 and agree with the list order.
  Time advance(Time t) {
    if (t > now_) now_ = t;
    if (!started_) {
      started_ = true;
      next_refit_ = now_ + refit_;
    } else if (now_ >= next_refit_) {
      refit(now_);
      next_refit_ = now_ + refit_;
    }
    return now_;
  }

  void ensure_ids() {
    size_t ids = tree_.id_limit();
    if (ids <= last_.size()) return;
    lists_.resize(ids);
    last_.resize(ids, 0);
    seq_of_.resize(ids, 0);
    group_.resize(ids, 0);
  }
  void ensure_groups(size_t groups) {
    if (groups <= hint_.size()) return;
    lists_.ensure_groups(groups);
    hint_.resize(groups, kNoNode);
    fits_.resize(groups, pooled_);  // a category first seen since the last refit
    counts_.resize(groups);
  }
  void set_state(NodeId n, Time t, uint32_t seq, Group g) {
    last_[n] = t;
    seq_of_[n] = seq;
    group_[n] = g;
  }

  // Erases n from its list; every block before the hint stays non-evictable.
  void unlink(NodeId n) {
    Group g = lists_.group_of(n);
    if (hint_[g] == n) hint_[g] = lists_.next(n);
    lists_.erase(n);
  }

  // Inserts n into its category's list at its place by Key. The common case, a block accessed
  // right after its parent in the same request, goes just before the parent (as in lru.cc);
  // otherwise scan back from the tail (short: demoted blocks arrive roughly in age order).
  void place(NodeId n) {
    Group g = group_[n];
    NodeId parent = tree_.parent(n);
    if (parent != kNoNode && lists_.contains(parent) && lists_.group_of(parent) == g &&
        seq_of_[parent] == seq_of_[n]) {
      lists_.insert_before(n, parent);
      return;
    }
    Key k = key(n);
    NodeId at = lists_.back(g);
    while (at != kNoNode && k < key(at)) at = lists_.prev(at);
    if (at == kNoNode) {
      lists_.push_front(g, n);
    } else {
      lists_.insert_after(n, at);
    }
    // A block placed before the hint must not be evictable (on_evictable fixes the hint when
    // it becomes so); a demoted evictable block is announced by on_evictable right after.
  }

  NodeId first_evictable(Group g) {
    NodeId x = hint_[g];
    while (x != kNoNode && !tree_.is_evictable(x)) {
      x = lists_.next(x);
      ++scan_steps_;
    }
    hint_[g] = x;
    return x;
  }

  // ---- the sliding-window reuse statistics ---------------------------------------------------

  // One block access at `now` by a request of group g: it closes the key's previous instance
  // (a reuse of the category that made it) and opens a new one.
  void record(BlockKey key, Time now, Group g) {
    if (sample_threshold_ != UINT64_MAX && mix64(key ^ 0x5a17) >= sample_threshold_) return;
    InstanceMap::Entry& e = history_[key];
    if (e.index != InstanceMap::kEmpty && e.index >= head_) {
      // The key's latest instance, still in the window, is reused now (it cannot have been
      // before: a later access would have become the latest).
      Time reuse = now - e.time;
      inst_[e.index].reuse = reuse;  // a store: no wait for the line
      Counts& c = counts_[e.group];
      ++c.reused;
      c.reuse_sum += reuse;
      if (needs_reuse_times()) reuses_.push_back({e.time, reuse, e.group});
    }
    e = {now, static_cast<uint32_t>(inst_.size()), g};
    inst_.push_back({now, key, -1, g});
    ++counts_[g].n;
  }

  // Drops instances older than the window, then fits every category on what is left: the
  // instances (block accesses) of the last window_s, each reused or not by now.
  void refit(Time now) {
    while (head_ < inst_.size() && inst_[head_].time <= now - window_) {
      const Instance& i = inst_[head_++];
      Counts& c = counts_[i.group];
      --c.n;
      if (i.reuse >= 0) {
        --c.reused;
        c.reuse_sum -= i.reuse;
      }
    }
    compact();

    const size_t groups = fits_.size();
    std::vector<std::vector<Time>>& times = scratch_;
    times.resize(groups + 1);
    for (auto& v : times) v.clear();
    if (needs_reuse_times()) {
      // The reuses of instances still in the window (fewer than the instances, and in one
      // sequential array).
      size_t kept = 0;
      for (const Reuse& u : reuses_) {
        if (u.instance_time <= now - window_) continue;
        reuses_[kept++] = u;
        times[u.group].push_back(u.reuse);
        times[groups].push_back(u.reuse);
      }
      reuses_.resize(kept);
    }
    Counts all;
    for (const Counts& c : counts_) {
      all.n += c.n;
      all.reused += c.reused;
      all.reuse_sum += c.reuse_sum;
    }
    // life=p90_all: one Life for every category, the percentile of all reuse times.
    if (life_mode_ == LifeMode::kP90All) life_all_s_ = p90_seconds(times[groups]);
    size_t with_data = 0, last = 0;
    for (size_t g = 0; g < groups; ++g)
      if (counts_[g].n > 0) ++with_data, last = g;
    for (size_t g = 0; g < groups; ++g)
      if (counts_[g].n >= min_samples_) fits_[g] = make_fit(counts_[g], times[g]);
    // With one category the pooled fit is that category's (and needs no second percentile).
    pooled_ = with_data == 1 && counts_[last].n >= min_samples_ ? fits_[last]
                                                                : make_fit(all, times[groups]);
    for (size_t g = 0; g < groups; ++g)
      if (counts_[g].n < min_samples_) fits_[g] = pooled_;
    fitted_ = true;
    ++refits_;
  }

  Fit make_fit(const Counts& c, std::vector<Time>& reuse_times) const {
    Fit f;
    if (c.n == 0) return f;  // nothing seen in the window: stay with LRU order
    f.valid = true;
    f.samples = c.n;
    f.pi = double(c.reused) / double(c.n);
    if (c.reused == 0) {
      f.log_const = -std::numeric_limits<double>::infinity();
      return f;
    }
    // Timestamps are whole microseconds; a mean below one would make the rate infinite.
    double mean_s =
        std::max<double>(double(c.reuse_sum) / double(c.reused), 1.0) / kMicrosPerSecond;
    f.lambda = 1.0 / mean_s;
    if (life_mode_ == LifeMode::kNone) {
      f.life_s = std::numeric_limits<double>::infinity();
      f.log_const = std::log(f.pi);
      return f;
    }
    if (life_mode_ == LifeMode::kFixed) {
      f.life_s = life_fixed_s_;
    } else if (life_mode_ == LifeMode::kP90All) {
      f.life_s = life_all_s_;
    } else {
      f.life_s = p90_seconds(reuse_times);
    }
    f.log_const = std::log(f.pi) + std::log1p(-std::exp(-f.lambda * f.life_s));
    return f;
  }

  // Nearest-rank 90th percentile: the smallest time >= 90 % of the reuse times (reorders them).
  static double p90_seconds(std::vector<Time>& reuse_times) {
    if (reuse_times.empty()) return 0;
    size_t k = static_cast<size_t>(std::ceil(0.9 * double(reuse_times.size()))) - 1;
    std::nth_element(reuse_times.begin(), reuse_times.begin() + k, reuse_times.end());
    return double(reuse_times[k]) / kMicrosPerSecond;
  }

  // Keeps the instance array and the key map proportional to the window.
  void compact() {
    if (head_ < 4096 || head_ * 2 < inst_.size()) return;
    inst_.erase(inst_.begin(), inst_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
    history_ = InstanceMap(inst_.size());
    for (size_t i = 0; i < inst_.size(); ++i)
      history_[inst_[i].key] = {inst_[i].time, static_cast<uint32_t>(i), inst_[i].group};
  }

  const PrefixTree& tree_;
  Time window_ = 0, refit_ = 0;
  LifeMode life_mode_ = LifeMode::kP90;
  double life_fixed_s_ = 0;
  double life_all_s_ = 0;  // life=p90_all, refitted
  uint32_t turn_buckets_ = 5;
  bool typed_ = false;
  uint64_t min_samples_ = 10;
  uint64_t sample_threshold_ = UINT64_MAX;

  // Per node.
  GroupedLru lists_;              // every block of this tier, per category, oldest first
  std::vector<Time> last_;        // last access time
  std::vector<uint32_t> seq_of_;  // request counter at the last access
  std::vector<Group> group_;      // category of the last access
  // Per category: every block before hint_[g] in list g is non-evictable (kNoNode = the end).
  std::vector<NodeId> hint_;

  // The current request. Its time is the last access of every block it touches, so along the
  // request counter last-access times never decrease.
  Time now_ = 0, cur_time_ = 0;
  uint32_t seq_ = 0;
  Group cur_group_ = 0;
  std::span<const BlockKey> cur_blocks_;

  // Reuse statistics.
  bool started_ = false, fitted_ = false;
  Time next_refit_ = 0;
  std::vector<Instance> inst_;  // block accesses in time order; [head_, end) is the window
  size_t head_ = 0;
  InstanceMap history_;        // key -> its latest instance
  std::vector<Reuse> reuses_;  // reuse events, for the p90 (life=p90 only)
  std::vector<Counts> counts_;
  std::vector<Fit> fits_;
  Fit pooled_;  // all categories together: for categories with too few samples
  std::vector<std::vector<Time>> scratch_;
  uint64_t refits_ = 0, victim_calls_ = 0, scan_steps_ = 0;
};

PolicyRegistrar registrar({
    .name = "wa",
    .summary = "lowest reuse probability within the category's lifespan (request type x turn), "
               "fitted online; deeper first on ties",
    .paper = "Wang et al., KVCache Cache in the Wild, USENIX ATC'25 (section 4.2)",
    .params =
        {
            {"window_s", "1800", "history the reuse fits use, seconds of trace time"},
            {"refit_s", "60", "refit every this many seconds of trace time"},
            {"life", "p90",
             "Life_w: p90 = 90th percentile of the category's reuse times, p90_all = of all "
             "categories' (one Life for all), none = no limit, or seconds"},
            {"turn_buckets", "5", "turn buckets of a category: 1, 2, ..., n+ (typed only)"},
            {"categories", "typed", "typed = request type x turn bucket, single = one category"},
            {"min_samples", "10",
             "a category with fewer block accesses in the window uses the pooled fit"},
            {"sample", "1",
             "share of block keys the fits track (a hash sample; below 1 is faster, approximate)"},
        },
    .make = [](const PolicyContext& ctx, const Params& p) -> std::unique_ptr<Policy> {
      return std::make_unique<Wa>(ctx, p);
    },
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
  const Fit* f = wa ? wa->fit(group) : nullptr;
  if (!f || !f->valid) return false;
  *pi = f->pi;
  *lambda = f->lambda;
  *life_s = f->life_s;
  return true;
}

uint32_t group_of(const Policy& p, CategoryId type, uint32_t turn) {
  return dynamic_cast<const Wa&>(p).group_of(type, turn);
}

}  // namespace wa_testing
}  // namespace kvpolicy
