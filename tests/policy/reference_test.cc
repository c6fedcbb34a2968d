// Policies against slow, obviously correct references on random prefix workloads; the victim
// sequences must be identical. LRU, FIFO, LFU and GDSF: every eviction scans all cached blocks
// for the evictable leaf with the smallest key of the rule. SIEVE and S3-FIFO: the same rules as
// the policy files state them, on std::list queues and a linear-search ghost, which checks the fast
// data structures (hand, parked heap slot, two-queue links, bucketed ghost with its filter).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <list>
#include <tuple>
#include <unordered_map>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/policy/policy.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::random_workload;
using testing::request_view;

enum class Rule { kLru, kFifo, kLfu };

class ReferencePolicy final : public Policy {
 public:
  ReferencePolicy(const PrefixTree& tree, Rule rule) : tree_(tree), rule_(rule) {}

  void on_request_begin(const RequestView&) override { ++clock_; }
  void on_access(NodeId n, const AccessInfo& info) override {
    if (n >= last_.size()) {
      last_.resize(n + 1);
      inserted_.resize(n + 1);
      count_.resize(n + 1);
    }
    last_[n] = clock_;
    if (!info.reused()) {
      inserted_[n] = clock_;
      count_[n] = 0;
    }
    ++count_[n];
  }
  void on_evictable(NodeId) override {}
  void on_unevictable(NodeId) override {}
  NodeId victim(Time) override {
    NodeId best = kNoNode;
    std::tuple<uint64_t, uint64_t, int64_t> best_key{};
    for (NodeId n = 0; n < tree_.id_limit(); ++n) {
      if (!tree_.contains(n) || !tree_.is_evictable(n)) continue;
      int64_t deeper_first = -int64_t{tree_.depth(n)};
      std::tuple<uint64_t, uint64_t, int64_t> key;
      switch (rule_) {
        case Rule::kLru:
          key = {last_[n], 0, deeper_first};
          break;
        case Rule::kFifo:
          key = {inserted_[n], 0, deeper_first};
          break;
        case Rule::kLfu:
          key = {count_[n], last_[n], deeper_first};
          break;
      }
      if (best == kNoNode || key < best_key) {
        best = n;
        best_key = key;
      }
    }
    return best;
  }
  void on_removed(NodeId, Removal) override {}
  void reserve_ids(size_t) override {}  // grows on access: a reference, not a fast path

 private:
  const PrefixTree& tree_;
  Rule rule_;
  uint64_t clock_ = 0;
  std::vector<uint64_t> last_, inserted_, count_;
};

// GDSF by full scan: priority = clock + frequency x cost(depth), the clock being the last
// victim's priority; ties by older last access, then deeper.
class ReferenceGdsf final : public Policy {
 public:
  ReferenceGdsf(const PrefixTree& tree, std::function<double(uint32_t)> cost)
      : tree_(tree), cost_(std::move(cost)) {}
  void on_request_begin(const RequestView&) override { ++clock_; }
  void on_access(NodeId n, const AccessInfo& info) override {
    if (n >= freq_.size()) {
      freq_.resize(n + 1);
      priority_.resize(n + 1);
      last_.resize(n + 1);
    }
    freq_[n] = info.reused() ? freq_[n] + 1 : 1;
    priority_[n] = inflation_ + freq_[n] * cost_(tree_.depth(n));
    last_[n] = clock_;
  }
  void on_evictable(NodeId) override {}
  void on_unevictable(NodeId) override {}
  NodeId victim(Time) override {
    NodeId best = kNoNode;
    for (NodeId n = 0; n < tree_.id_limit(); ++n) {
      if (!tree_.contains(n) || !tree_.is_evictable(n)) continue;
      auto key = [&](NodeId x) {
        return std::make_tuple(priority_[x], last_[x], -int64_t{tree_.depth(x)});
      };
      if (best == kNoNode || key(n) < key(best)) best = n;
    }
    return best;
  }
  void reserve_ids(size_t) override {}
  void on_removed(NodeId n, Removal) override { inflation_ = priority_[n]; }

 private:
  const PrefixTree& tree_;
  std::function<double(uint32_t)> cost_;
  uint64_t clock_ = 0;
  double inflation_ = 0;
  std::vector<uint64_t> freq_, last_;
  std::vector<double> priority_;
};

// SIEVE as the paper states it, on a std::list: new blocks at the new end (a request's new
// blocks deepest first), the hand walks from old to new and wraps, passing blocks that are not
// evictable leaves without touching their bit.
class ReferenceSieve final : public Policy {
 public:
  explicit ReferenceSieve(const PrefixTree& tree) : tree_(tree), hand_(queue_.end()) {}
  void on_request_begin(const RequestView&) override { last_new_ = kNoNode; }
  void on_access(NodeId n, const AccessInfo& info) override {
    if (n >= visited_.size()) visited_.resize(n + 1);
    if (info.reused()) {
      visited_[n] = true;
      return;
    }
    visited_[n] = false;
    NodeId parent = tree_.parent(n);
    auto pos = parent != kNoNode && parent == last_new_ ? find(parent) : queue_.end();
    queue_.insert(pos, n);
    last_new_ = n;
  }
  void on_evictable(NodeId) override {}
  void on_unevictable(NodeId) override {}
  NodeId victim(Time) override {
    if (std::none_of(queue_.begin(), queue_.end(), [&](NodeId n) { return evictable(n); }))
      return kNoNode;
    for (;;) {
      if (hand_ == queue_.end()) hand_ = queue_.begin();
      NodeId n = *hand_;
      if (evictable(n)) {
        if (!visited_[n]) return n;
        visited_[n] = false;
      }
      ++hand_;
    }
  }
  void reserve_ids(size_t) override {}
  void on_removed(NodeId n, Removal) override {
    auto it = find(n);
    if (it == hand_) ++hand_;
    queue_.erase(it);
  }

 private:
  bool evictable(NodeId n) const { return tree_.is_evictable(n); }
  std::list<NodeId>::iterator find(NodeId n) { return std::find(queue_.begin(), queue_.end(), n); }
  const PrefixTree& tree_;
  std::list<NodeId> queue_;
  std::list<NodeId>::iterator hand_;
  std::vector<bool> visited_;
  NodeId last_new_ = kNoNode;
};

// S3-FIFO with libCacheSim's rules on std::lists (see s3fifo.cc for the prefix-tree rules).
class ReferenceS3Fifo final : public Policy {
 public:
  ReferenceS3Fifo(const PrefixTree& tree, size_t k, bool fill_main_first = true)
      : tree_(tree), fill_main_first_(fill_main_first) {
    small_cap_ = std::max<size_t>(1, static_cast<size_t>(k * 0.1));
    main_cap_ = k > small_cap_ ? k - small_cap_ : 0;
    ghost_cap_ = static_cast<size_t>(k * 0.9);
  }
  void on_request_begin(const RequestView&) override {
    add_evicted_to_ghost();
    chosen_ = kNoNode;
    last_new_ = kNoNode;
  }
  void on_request_end(const RequestView&, std::span<const NodeId>) override {
    add_evicted_to_ghost();
  }
  void on_access(NodeId n, const AccessInfo& info) override {
    chosen_ = kNoNode;
    if (n >= freq_.size()) {
      freq_.resize(n + 1);
      in_main_.resize(n + 1);
    }
    if (info.reused()) {
      freq_[n] = std::min(freq_[n] + 1, 3);
      return;
    }
    freq_[n] = 0;
    bool main = false;
    auto g = std::find(ghost_.begin(), ghost_.end(), tree_.key(n));
    bool ghost_hit = g != ghost_.end();
    if (ghost_hit) ghost_.erase(g);
    add_evicted_to_ghost();  // the evictions for this block come after its lookup
    if (ghost_hit) {
      main = true;
    } else if (fill_main_first_ && !has_evicted_ && small_.size() >= small_cap_) {
      main = true;
    }
    auto& q = main ? main_ : small_;
    NodeId parent = tree_.parent(n);
    bool before_parent = parent != kNoNode && parent == last_new_ && in_main_[parent] == main;
    q.insert(before_parent ? std::find(q.begin(), q.end(), parent) : q.end(), n);
    in_main_[n] = main;
    last_new_ = n;
  }
  void on_evictable(NodeId) override { chosen_ = kNoNode; }
  void on_unevictable(NodeId) override { chosen_ = kNoNode; }
  // Its scans move blocks, so it keeps its choice until told anything, as s3fifo does.
  NodeId victim(Time) override {
    if (chosen_ == kNoNode) chosen_ = scan();
    return chosen_;
  }
  NodeId scan() {
    if (count_evictable(small_) + count_evictable(main_) == 0) return kNoNode;
    for (;;) {
      bool main = main_.size() > main_cap_ || small_.empty();
      if (count_evictable(main ? main_ : small_) == 0) main = !main;
      if (main) {
        for (;;) {
          NodeId x = main_.front();
          main_.pop_front();
          main_.push_back(x);
          if (!tree_.is_evictable(x)) continue;
          if (freq_[x] > 0) {
            --freq_[x];
            continue;
          }
          main_.pop_back();
          main_.push_front(x);
          return x;
        }
      }
      while (count_evictable(small_) > 0) {
        NodeId x = small_.front();
        small_.pop_front();
        if (freq_[x] >= 2) {
          freq_[x] = 0;
          main_.push_back(x);
          in_main_[x] = true;
        } else if (!tree_.is_evictable(x)) {
          small_.push_back(x);
        } else {
          small_.push_front(x);
          return x;
        }
      }
    }
  }
  void reserve_ids(size_t) override {}
  void on_removed(NodeId n, Removal) override {
    chosen_ = kNoNode;
    has_evicted_ = true;
    if (in_main_[n]) {
      main_.remove(n);
      return;
    }
    small_.remove(n);
    evicted_.push_back(tree_.key(n));
  }

 private:
  NodeId chosen_ = kNoNode;
  size_t count_evictable(const std::list<NodeId>& q) const {
    return std::count_if(q.begin(), q.end(), [&](NodeId n) { return tree_.is_evictable(n); });
  }
  void add_evicted_to_ghost() {
    for (BlockKey k : evicted_) {
      ghost_.push_back(k);
      if (ghost_.size() > ghost_cap_) ghost_.pop_front();
    }
    evicted_.clear();
  }
  const PrefixTree& tree_;
  bool fill_main_first_;
  size_t small_cap_, main_cap_, ghost_cap_;
  std::list<NodeId> small_, main_;
  std::list<BlockKey> ghost_;
  std::vector<BlockKey> evicted_;  // from small, for the ghost after the next lookup
  std::vector<int> freq_;
  std::vector<bool> in_main_;
  bool has_evicted_ = false;
  NodeId last_new_ = kNoNode;
};

struct Run {
  std::vector<BlockKey> victims;
  std::vector<uint32_t> hits;
};

// `make` builds the policy under test for the given tree.
template <typename Make>
Run run(const Trace& trace, size_t capacity, Make make) {
  Run out;
  auto tree = std::make_unique<PrefixTree>();
  const PrefixTree& t = *tree;
  auto recorder = std::make_unique<testing::VictimKeyRecorder>(make(t), t, &out.victims);
  PrefixCache cache(capacity, std::move(recorder), std::move(tree));
  cache.set_checking(true);
  for (size_t r = 0; r < trace.size(); ++r)
    out.hits.push_back(cache.access(request_view(trace, r)).hit_blocks);
  return out;
}

// `slow(tree, capacity)` builds the reference for a cache of that capacity.
template <typename Slow>
void expect_same_victims(const std::string& name, Slow slow) {
  for (uint64_t w = 1; w <= 4; ++w) {
    Trace trace = random_workload({.seed = 100 + w, .requests = 400});
    size_t unique = count_unique_blocks(trace);
    for (size_t cap : {size_t{3}, size_t{20}, unique / 10, unique / 4}) {
      SCOPED_TRACE(name + " workload " + std::to_string(w) + " capacity " + std::to_string(cap));
      Run fast = run(trace, cap, [&](const PrefixTree& t) {
        PolicyContext ctx;
        ctx.tree = &t;
        ctx.capacity_blocks = cap;
        return make_policy(parse_policy_spec(name), ctx);
      });
      Run ref = run(trace, cap, [&](const PrefixTree& t) { return slow(t, cap); });
      ASSERT_GT(ref.victims.size(), 0u);
      ASSERT_EQ(fast.victims.size(), ref.victims.size());
      for (size_t i = 0; i < ref.victims.size(); ++i)
        ASSERT_EQ(fast.victims[i], ref.victims[i]) << "victim " << i << " differs";
      EXPECT_EQ(fast.hits, ref.hits);
    }
  }
}

void expect_same_victims(const std::string& name, Rule rule) {
  expect_same_victims(name, [rule](const PrefixTree& t, size_t) -> std::unique_ptr<Policy> {
    return std::make_unique<ReferencePolicy>(t, rule);
  });
}

TEST(Reference, LruMatchesFullScan) { expect_same_victims("lru", Rule::kLru); }
TEST(Reference, FifoMatchesFullScan) { expect_same_victims("fifo", Rule::kFifo); }
TEST(Reference, LfuMatchesFullScan) { expect_same_victims("lfu", Rule::kLfu); }

TEST(Reference, GdsfMatchesFullScan) {
  expect_same_victims(
      "gdsf:cost=depth", [](const PrefixTree& t, size_t) -> std::unique_ptr<Policy> {
        return std::make_unique<ReferenceGdsf>(t, [](uint32_t d) { return 1.0 + 0.05 * d; });
      });
  // The default cost: the cost model's FLOPs for a 16-token block after d cached blocks.
  expect_same_victims("gdsf", [](const PrefixTree& t, size_t) -> std::unique_ptr<Policy> {
    return std::make_unique<ReferenceGdsf>(t, [](uint32_t d) {
      CostModel m;
      return m.prefill_flops(16, 16 * uint64_t{d}) / m.prefill_flops(16, 0);
    });
  });
}

TEST(Reference, SieveMatchesListReference) {
  expect_same_victims("sieve", [](const PrefixTree& t, size_t) -> std::unique_ptr<Policy> {
    return std::make_unique<ReferenceSieve>(t);
  });
}

TEST(Reference, S3FifoMatchesListReference) {
  expect_same_victims("s3fifo", [](const PrefixTree& t, size_t k) -> std::unique_ptr<Policy> {
    return std::make_unique<ReferenceS3Fifo>(t, k);
  });
  expect_same_victims("s3fifo:fill_main_first=false",
                      [](const PrefixTree& t, size_t k) -> std::unique_ptr<Policy> {
                        return std::make_unique<ReferenceS3Fifo>(t, k, false);
                      });
}

// libCacheSim's S3-FIFO on a flat object cache, written from its rules in the order its
// cache_get_base runs them: find the object (small, else the ghost, which a miss leaves, else
// main), evict until there is room, insert. Counters count every hit (capped only when main
// reinserts: min(f, 3) - 1); a promoted object starts at 0. One-block requests replay exactly
// this (an oracleGeneral file); kvpolicy's s3fifo must agree request by request.
class FlatS3Fifo {
 public:
  FlatS3Fifo(size_t k, bool fill_main_first)
      : k_(k),
        small_cap_(static_cast<size_t>(k * 0.1)),
        main_cap_(k - small_cap_),
        ghost_cap_(static_cast<size_t>(k * 0.9)),
        fill_main_first_(fill_main_first) {}

  bool get(uint64_t key) {
    if (auto it = freq_.find(key); it != freq_.end()) {
      ++it->second;
      return true;
    }
    auto g = std::find(ghost_.begin(), ghost_.end(), key);
    bool ghost_hit = g != ghost_.end();
    if (ghost_hit) ghost_.erase(g);
    while (small_.size() + main_.size() >= k_) evict();
    bool to_main = ghost_hit || (fill_main_first_ && !evicted_ && small_.size() >= small_cap_);
    (to_main ? main_ : small_).push_back(key);
    freq_[key] = 0;
    return false;
  }

 private:
  void evict() {
    evicted_ = true;
    if (main_.size() > main_cap_ || small_.empty()) {
      for (;;) {
        uint64_t x = main_.front();
        main_.pop_front();
        if (int64_t f = freq_[x]; f >= 1) {
          main_.push_back(x);
          freq_[x] = std::min<int64_t>(f, 3) - 1;
        } else {
          freq_.erase(x);
          return;
        }
      }
    }
    while (!small_.empty()) {
      uint64_t x = small_.front();
      small_.pop_front();
      if (freq_[x] >= 2) {
        main_.push_back(x);
        freq_[x] = 0;
      } else {
        freq_.erase(x);
        ghost_.push_back(x);
        if (ghost_.size() > ghost_cap_) ghost_.pop_front();
        return;
      }
    }
  }

  size_t k_, small_cap_, main_cap_, ghost_cap_;
  bool fill_main_first_;
  bool evicted_ = false;
  std::deque<uint64_t> small_, main_, ghost_;
  std::unordered_map<uint64_t, int64_t> freq_;
};

// One-block requests drawn from a skewed popularity (a few keys take most requests), so that
// blocks get promoted, reinserted and found in the ghost.
Trace flat_skewed_workload(uint64_t seed, uint32_t requests, uint64_t objects) {
  Trace t;
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (uint32_t r = 0; r < requests; ++r) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    double u = double(x >> 11) * 0x1.0p-53;
    uint64_t id = 1 + static_cast<uint64_t>(double(objects) * u * u * u);  // skewed to small ids
    t.add_request(r, std::span<const uint64_t>(&id, 1), 16, 1);
  }
  return t;
}

TEST(Reference, S3FifoEqualsLibCacheSimsRulesOnObjects) {
  for (bool fill_main_first : {true, false}) {
    for (uint64_t seed : {1, 2, 3}) {
      Trace trace = flat_skewed_workload(seed, 20000, 3000);
      size_t unique = count_unique_blocks(trace);
      for (size_t cap : {size_t{20}, unique / 100, unique / 10, unique / 2}) {
        SCOPED_TRACE(
            fmt::format("fill_main_first={} seed {} capacity {}", fill_main_first, seed, cap));
        std::string spec = fill_main_first ? "s3fifo" : "s3fifo:fill_main_first=false";
        auto fast = run(trace, cap, [&](const PrefixTree& t) {
          PolicyContext ctx;
          ctx.tree = &t;
          ctx.capacity_blocks = cap;
          return make_policy(parse_policy_spec(spec), ctx);
        });
        FlatS3Fifo ref(cap, fill_main_first);
        size_t differ = 0, first = trace.size();
        for (size_t r = 0; r < trace.size(); ++r) {
          if ((fast.hits[r] == 1) != ref.get(trace.prompt(r)[0]) && differ++ == 0) first = r;
        }
        EXPECT_EQ(differ, 0u) << "first at request " << first;
      }
    }
  }
}

// The three rules must actually disagree somewhere, or the checks above prove little.
TEST(Reference, RulesDisagreeOnTheseWorkloads) {
  Trace trace = random_workload({.seed = 101, .requests = 400});
  size_t cap = count_unique_blocks(trace) / 10;
  auto victims = [&](Rule rule) {
    return run(trace, cap,
               [&](const PrefixTree& t) -> std::unique_ptr<Policy> {
                 return std::make_unique<ReferencePolicy>(t, rule);
               })
        .victims;
  };
  auto lru = victims(Rule::kLru), fifo = victims(Rule::kFifo), lfu = victims(Rule::kLfu);
  EXPECT_NE(lru, fifo);
  EXPECT_NE(lru, lfu);
  EXPECT_NE(fifo, lfu);
}

}  // namespace
}  // namespace kvpolicy
