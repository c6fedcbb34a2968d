// slru, priority, hpt and wlfu against full-scan references: every eviction scans all cached
// blocks for the evictable leaf with the smallest key of the rule as docs/policies.md states
// it; the victim sequences must be identical. Also the reductions each rule promises (slru at
// threshold 1, priority without priorities and hpt per block are lru / lfu exactly), and
// hand-checked sequences.
#include <gtest/gtest.h>

#include <deque>
#include <tuple>
#include <vector>

#include "engine_policies_support.h"
#include "kvpolicy/core/error.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::engine_workload;
using testing::expect_same_victims;
using testing::MakePolicy;
using testing::registry_policy;
using testing::replay_victims;
using testing::ScriptedCache;
using Path = std::vector<uint64_t>;

enum class Rule { kSlru, kPriorityMax, kPriorityLast, kHptPath, kHptBlock, kWlfu };

// hit_count (requests reaching the block since it came in), last access request, the highest /
// last priority, and every access in order for the windowed count.
class ScanReference final : public Policy {
 public:
  ScanReference(const PrefixTree& tree, Rule rule, uint64_t param)
      : tree_(tree), rule_(rule), param_(param) {}
  void on_request_begin(const RequestView&) override { ++clock_; }
  void on_access(NodeId n, const AccessInfo& info) override {
    if (n >= count_.size()) {
      count_.resize(n + 1);
      last_.resize(n + 1);
      prio_.resize(n + 1);
      life_.resize(n + 1);
    }
    if (!info.reused()) {
      count_[n] = 0;
      prio_[n] = info.priority;
      ++life_[n];
    }
    ++count_[n];
    last_[n] = clock_;
    if (rule_ == Rule::kPriorityMax) prio_[n] = std::max(prio_[n], info.priority);
    if (rule_ == Rule::kPriorityLast) prio_[n] = info.priority;
    window_.push_back({n, life_[n]});
    if (rule_ == Rule::kWlfu && window_.size() > param_) window_.pop_front();
  }
  void on_evictable(NodeId) override {}
  void on_unevictable(NodeId) override {}
  NodeId victim(Time) override {
    NodeId best = kNoNode;
    std::tuple<double, uint64_t, int64_t> best_key{};
    for (NodeId n = 0; n < tree_.id_limit(); ++n) {
      if (!tree_.contains(n) || !tree_.is_evictable(n)) continue;
      std::tuple<double, uint64_t, int64_t> key{primary(n), last_[n], -int64_t{tree_.depth(n)}};
      if (best == kNoNode || key < best_key) {
        best = n;
        best_key = key;
      }
    }
    return best;
  }
  void on_removed(NodeId n, Removal) override { ++life_[n]; }  // its window entries expire
  void reserve_ids(size_t) override {}

 private:
  double primary(NodeId n) const {
    switch (rule_) {
      case Rule::kSlru:
        return count_[n] >= param_ ? 1 : 0;
      case Rule::kPriorityMax:
      case Rule::kPriorityLast:
        return prio_[n];
      case Rule::kHptPath:  // equal ratios of small integers divide to equal doubles
        return double(count_[n]) / double(tree_.depth(n) + 1);
      case Rule::kHptBlock:
        return double(count_[n]);
      case Rule::kWlfu: {
        double c = 0;
        for (auto& [m, life] : window_) c += m == n && life == life_[n];
        return c;
      }
    }
    return 0;
  }
  const PrefixTree& tree_;
  Rule rule_;
  uint64_t param_;
  uint64_t clock_ = 0;
  std::vector<uint64_t> count_, last_, life_;
  std::vector<int32_t> prio_;
  std::deque<std::pair<NodeId, uint64_t>> window_;
};

MakePolicy reference(Rule rule, uint64_t param = 0) {
  return [rule, param](const PrefixTree& t, size_t) -> std::unique_ptr<Policy> {
    return std::make_unique<ScanReference>(t, rule, param);
  };
}

TEST(EnginePolicies, SlruMatchesFullScan) {
  expect_same_victims("slru", registry_policy("slru"), reference(Rule::kSlru, 2));
  expect_same_victims("slru:protected_threshold=3", registry_policy("slru:protected_threshold=3"),
                      reference(Rule::kSlru, 3));
}

TEST(EnginePolicies, PriorityMatchesFullScan) {
  expect_same_victims("priority", registry_policy("priority"), reference(Rule::kPriorityMax),
                      /*priorities=*/true);
  expect_same_victims("priority:combine=last", registry_policy("priority:combine=last"),
                      reference(Rule::kPriorityLast), /*priorities=*/true);
}

TEST(EnginePolicies, HptMatchesFullScan) {
  expect_same_victims("hpt", registry_policy("hpt"), reference(Rule::kHptPath));
  expect_same_victims("hpt:per=block", registry_policy("hpt:per=block"),
                      reference(Rule::kHptBlock));
}

TEST(EnginePolicies, WlfuMatchesFullScan) {
  for (uint64_t w : {1, 7, 60, 500}) {
    std::string spec = "wlfu:window=" + std::to_string(w);
    expect_same_victims(spec, registry_policy(spec), reference(Rule::kWlfu, w));
  }
}

// The reductions the docs state: each pair must evict identically on every workload.
TEST(EnginePolicies, ReductionsToLruAndLfu) {
  expect_same_victims("priority without priorities", registry_policy("priority"),
                      registry_policy("lru"));
  expect_same_victims("slru threshold 1", registry_policy("slru:protected_threshold=1"),
                      registry_policy("lru"));
  expect_same_victims("hpt per block", registry_policy("hpt:per=block"), registry_policy("lfu"));
  // A window longer than the whole trace counts every access since insertion: lfu.
  expect_same_victims("wlfu, endless window", registry_policy("wlfu:window=100000000"),
                      registry_policy("lfu"));
}

// ... and the rules must differ from their base somewhere, or the comparisons prove little.
TEST(EnginePolicies, RulesDifferFromTheirBase) {
  Trace trace = engine_workload(101, /*priorities=*/true);
  size_t cap = count_unique_blocks(trace) / 10;
  auto victims = [&](const std::string& spec) {
    return replay_victims(trace, cap, registry_policy(spec)).victims;
  };
  auto lru = victims("lru"), lfu = victims("lfu");
  EXPECT_NE(victims("priority"), lru);
  EXPECT_NE(victims("priority"), victims("priority:combine=last"));
  EXPECT_NE(victims("slru"), lru);
  EXPECT_NE(victims("slru"), lfu);
  EXPECT_NE(victims("hpt"), lfu);
  EXPECT_NE(victims("wlfu:window=20"), lfu);
}

TEST(Slru, ProbationaryBlocksGoFirst) {
  ScriptedCache c("slru", 3);
  c.request({1});
  c.request({1});  // hit_count 2: protected
  c.request({2});
  c.request({3});  // {2} and {3} probationary
  c.request({4});  // evicts {2}: the oldest probationary, though {1} is older
  c.request({5});  // evicts {3}
  c.request({6});  // evicts {4}
  EXPECT_EQ(c.victims(), (std::vector<Path>{{2}, {3}, {4}}));
  EXPECT_TRUE(c.cached({1}));
}

TEST(Hpt, PerPathEvictsTheDeeperOfEqualHits) {
  // Leaves {3} (depth 0) and {1, 2} (depth 1, newer), one hit each. Per path {1, 2} has 1/2 hit
  // per block of prefix against 1: it goes. Per block (lfu) the older {3} goes.
  ScriptedCache path("hpt", 3), block("hpt:per=block", 3);
  for (ScriptedCache* c : {&path, &block}) {
    c->request({3});
    c->request({1, 2});
    c->request({4});
  }
  EXPECT_EQ(path.victims(), (std::vector<Path>{{1, 2}}));
  EXPECT_EQ(block.victims(), (std::vector<Path>{{3}}));
}

TEST(EnginePolicies, RejectBadParameters) {
  EXPECT_THROW(ScriptedCache("slru:protected_threshold=0", 3), ConfigError);
  EXPECT_THROW(ScriptedCache("priority:combine=min", 3), ConfigError);
  EXPECT_THROW(ScriptedCache("hpt:per=node", 3), ConfigError);
  EXPECT_THROW(ScriptedCache("wlfu:window=-1", 3), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
