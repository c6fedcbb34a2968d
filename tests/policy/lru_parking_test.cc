// lru's parked blocks (src/policy/lru.cc): with retention hints withholding leaves, its victims
// are those of the plain scan of its recency list (the implementation before issue 37's third
// pass, kept here as the reference), request by request.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "../src/policy/retention.h"
#include "kvpolicy/cache/cache.h"
#include "kvpolicy/core/order/intrusive_list.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/hints.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

// lru.cc before parking: one list, each victim() scans it from the head.
class ScanLru final : public Policy {
 public:
  explicit ScanLru(const PolicyContext& ctx) : tree_(*ctx.tree) {}
  void reserve_ids(size_t ids) override { list_.resize(ids); }
  void on_access(NodeId n, const AccessInfo& info) override {
    if (list_.contains(n)) list_.erase(n);
    NodeId parent = tree_.parent(n);
    if (info.position == 0 || parent == kNoNode || !list_.contains(parent)) {
      list_.push_back(n);
    } else {
      list_.insert_before(n, parent);
    }
  }
  void on_evictable(NodeId) override {}
  void on_unevictable(NodeId) override {}
  NodeId victim(Time) override {
    for (NodeId n = list_.front(); n != kNoNode; n = list_.next(n))
      if (tree_.is_evictable(n)) return n;
    return kNoNode;
  }
  void on_removed(NodeId n, Removal) override { list_.erase(n); }
  size_t memory_bytes() const override { return list_.memory_bytes(); }

 private:
  const PrefixTree& tree_;
  IntrusiveList list_;
};

// Per request: the hit blocks, and the number of blocks cached after it.
std::vector<uint64_t> run(const Trace& t, size_t cap, bool reference) {
  auto tree = std::make_unique<PrefixTree>(cap);
  PolicyContext ctx;
  ctx.tree = tree.get();
  ctx.capacity_blocks = cap;
  ctx.retention.emplace();
  std::unique_ptr<Policy> p =
      reference ? std::make_unique<Retention>(ctx, std::make_unique<ScanLru>(ctx), 35)
                : make_policy({"lru", ""}, ctx);
  PrefixCache cache(cap, std::move(p), std::move(tree));
  cache.set_checking(true);
  std::vector<uint64_t> out;
  for (size_t r = 0; r < t.size(); ++r) {
    out.push_back(cache.access(request_view(t, r)).hit_blocks);
    out.push_back(cache.tree().size());
  }
  return out;
}

TEST(LruParking, VictimsEqualThePlainScanUnderHints) {
  AgentParams ap;
  ap.sessions = 30;
  ap.session_rate = 2;
  ap.prefixes = 4;
  ap.prefix_tokens_mean = 800;
  Trace agent = generate_agent(ap, 11);
  Trace random = testing::random_workload({.seed = 5, .requests = 300});
  int cases = 0;
  for (const Trace* base : {&agent, &random}) {
    for (const char* rule : {"session-pin=20s", "session-pin=120s", "system-prompt=90:60s",
                             "oracle=90:60s", "random=90:30s:0.3", "adversarial=100:inf"}) {
      SCOPED_TRACE(std::string(rule) + (base == &agent ? " agent" : " random"));
      Trace t = *base;
      std::vector<HintRule> rules = {parse_hint_rule(rule)};
      apply_hint_rules(t, rules);
      for (size_t div : {4, 8}) {
        size_t cap = count_unique_blocks(t) / div;
        std::vector<uint64_t> parked = run(t, cap, false), scan = run(t, cap, true);
        ASSERT_EQ(parked.size(), scan.size());
        for (size_t i = 0; i < parked.size(); ++i)
          ASSERT_EQ(parked[i], scan[i]) << "request " << i / 2 << (i % 2 ? " size" : " hits");
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 24);
}

}  // namespace
}  // namespace kvpolicy
