// PolicyTree's calls for the engines' seams (docs/api.md, "What an engine's seam needs"): every
// online policy keeps its contract when the owner removes blocks it did not choose, protects
// blocks from an eviction, asks for all or nothing, confirms evictions later, inserts chains,
// reports duplicates, touches blocks it does not have, or resets the cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kvpolicy/cache/policy_tree.h"
#include "kvpolicy/core/error.h"

namespace kvpolicy {

void PrintTo(const PolicySpec& spec, std::ostream* os);

namespace {

std::vector<PolicySpec> online_policies_and_variants() {
  std::vector<PolicySpec> out;
  for (auto& p : PolicyRegistry::instance().all()) {
    std::vector<std::string> params{""};
    params.insert(params.end(), p.variants.begin(), p.variants.end());
    for (auto& v : params)
      if (PolicySpec spec{p.name, v}; !needs_future(spec)) out.push_back(spec);
  }
  return out;
}

// Every request carries a continuation score, so LPC's default predictor takes it.
RequestInfo request(Time t, SessionId session = 1) {
  return {.time = t, .session = session, .continuation = 0.5f};
}

// A chain of `n` keys starting at `first` (each the next one's parent in a prefix tree).
std::vector<BlockKey> chain(BlockKey first, size_t n) {
  std::vector<BlockKey> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = first + i;
  return keys;
}

class OwnerCalls : public ::testing::TestWithParam<PolicySpec> {
 protected:
  // Fills a tree with a few sessions' chains, request by request.
  void fill(PolicyTree& t, size_t sessions, size_t length, Time& now) {
    for (size_t s = 0; s < sessions; ++s) {
      t.begin_request(request(now += 10, s + 1));
      t.insert_chain(chain(1000 * (s + 1), length), std::nullopt, true);
      t.end_request();
    }
  }
  // Evicts everything evictable; returns the keys in order.
  static std::vector<BlockKey> drain(PolicyTree& t) { return t.evict(t.size()); }
};

// A removed block (and its subtree) leaves at once, whatever its pins; the policy never names it
// and the rest drains in full: its bookkeeping stayed consistent (the driver checks each victim).
TEST_P(OwnerCalls, RemoveDropsTheSubtreeAndThePolicyForgetsIt) {
  for (TreeShape shape : {TreeShape::kPrefix, TreeShape::kFlat}) {
    PolicyTree t(GetParam(), 64, 16, 3, shape);
    Time now = 0;
    fill(t, 4, 6, now);
    t.pin(1002);
    t.pin(3005);
    std::vector<BlockKey> gone = t.remove(1002);
    if (shape == TreeShape::kPrefix) {
      EXPECT_EQ(gone, (std::vector<BlockKey>{1005, 1004, 1003, 1002})) << "descendants first";
    } else {
      EXPECT_EQ(gone, std::vector<BlockKey>{1002}) << "flat: blocks stand alone";
    }
    EXPECT_EQ(t.remove(3005), std::vector<BlockKey>{3005}) << "a pinned leaf goes too";
    for (BlockKey k : gone) EXPECT_FALSE(t.contains(k));
    EXPECT_EQ(t.stats().removed, gone.size() + 1);
    EXPECT_EQ(t.stats().pinned, 0u);
    EXPECT_THROW(t.remove(1002), Error);
    EXPECT_EQ(t.remove_all(std::vector<BlockKey>{1002, 2000}, true),
              shape == TreeShape::kPrefix ? 6u : 1u);
    std::vector<BlockKey> rest = drain(t);
    EXPECT_EQ(t.size(), 0u);
    for (BlockKey k : rest) EXPECT_TRUE(std::find(gone.begin(), gone.end(), k) == gone.end());
    EXPECT_EQ(t.tree().check_invariants(), "");
  }
}

// Removal inside an open request: the request's holds on the block go with it.
TEST_P(OwnerCalls, RemoveDuringARequest) {
  PolicyTree t(GetParam(), 16, 16, 3);
  Time now = 0;
  t.begin_request(request(now += 10));
  t.insert_chain(chain(10, 4), std::nullopt);
  t.hit(10);
  EXPECT_EQ(t.remove(12).size(), 2u);
  t.end_request();
  EXPECT_EQ(t.stats().pinned, 0u);
  EXPECT_EQ(drain(t), (std::vector<BlockKey>{11, 10}));
}

// A duplicate insert is no event: the policy's later choices equal a twin that never saw it.
TEST_P(OwnerCalls, DuplicateInsertIsNotAHit) {
  PolicyTree a(GetParam(), 12, 16, 3), b(GetParam(), 12, 16, 3);
  Time now = 0, then = 0;
  fill(a, 3, 4, now);
  fill(b, 3, 4, then);
  a.begin_request(request(now += 10));
  EXPECT_EQ(a.insert(1000, std::nullopt), Inserted::kCached);
  EXPECT_EQ(a.insert(3000, std::nullopt), Inserted::kCached);
  a.end_request();
  b.begin_request(request(then += 10));
  b.end_request();
  EXPECT_EQ(a.stats().hits, b.stats().hits);
  EXPECT_EQ(a.stats().duplicates, 2u);
  EXPECT_EQ(drain(a), drain(b));
}

// insert_chain is the run of single inserts, in one call; it stops at the first refusal.
TEST_P(OwnerCalls, InsertChainEqualsSingleInserts) {
  PolicyTree a(GetParam(), 10, 16, 3), b(GetParam(), 10, 16, 3);
  Time now = 0;
  for (int r = 0; r < 6; ++r) {
    std::vector<BlockKey> keys = chain(100 * (r % 3 + 1), 3 + r);
    now += 10;
    a.begin_request(request(now, r % 3 + 1));
    size_t cached = a.insert_chain(keys, std::nullopt, true);
    a.end_request();
    b.begin_request(request(now, r % 3 + 1));
    size_t n = 0;
    std::optional<BlockKey> parent;
    for (BlockKey k : keys) {
      if (b.insert(k, parent, true) == Inserted::kRefused) break;
      parent = k;
      ++n;
    }
    b.end_request();
    EXPECT_EQ(cached, n);
  }
  EXPECT_EQ(drain(a), drain(b));
  PolicyTree full(GetParam(), 3, 16, 3);
  full.begin_request(request(1));
  EXPECT_EQ(full.insert_chain(chain(1, 5), std::nullopt), 3u) << "full, and held by the request";
  full.end_request();
}

// Excluded blocks (and their ancestors) are spared; all-or-nothing refuses without a trace: the
// policy's later choices equal a twin's that never saw the refused call.
TEST_P(OwnerCalls, EvictSparesExcludedAndAllOrNothingChangesNothing) {
  for (TreeShape shape : {TreeShape::kPrefix, TreeShape::kFlat}) {
    PolicyTree a(GetParam(), 40, 16, 3, shape), b(GetParam(), 40, 16, 3, shape);
    Time now = 0, then = 0;
    fill(a, 5, 5, now);
    fill(b, 5, 5, then);
    a.pin(2004);
    b.pin(2004);
    std::vector<BlockKey> exclude{1004, 3002};
    size_t spared = shape == TreeShape::kPrefix ? 5 + 5 + 3 : 3;
    EXPECT_EQ(a.evictable(exclude), 25 - spared);
    EXPECT_EQ(a.evict(26 - spared, {.exclude = exclude, .all_or_nothing = true}),
              std::vector<BlockKey>{});
    EXPECT_EQ(a.size(), 25u);
    std::vector<BlockKey> gone = a.evict(25, {.exclude = exclude});
    std::vector<BlockKey> twin = b.evict(25, {.exclude = exclude});
    EXPECT_EQ(gone, twin);
    EXPECT_EQ(gone.size(), 25 - spared);
    for (BlockKey k : {1004, 3002, 2004}) EXPECT_TRUE(a.contains(k)) << k;
    EXPECT_EQ(a.evictable(), shape == TreeShape::kPrefix ? 8u : 2u) << "excluded no more";
  }
}

// victims() then commit() makes evict()'s choices; cancel() gives blocks back, evictable again.
TEST_P(OwnerCalls, TwoPhaseEvictionMatchesEvict) {
  PolicyTree a(GetParam(), 30, 16, 3, TreeShape::kFlat), b(GetParam(), 30, 16, 3, TreeShape::kFlat);
  Time now = 0, then = 0;
  fill(a, 5, 6, now);
  fill(b, 5, 6, then);
  std::vector<BlockKey> named = a.victims(4, std::vector<BlockKey>{5000});
  EXPECT_EQ(named, b.evict(4, {.exclude = std::vector<BlockKey>{5000}}));
  EXPECT_EQ(a.stats().pending, 4u);
  for (BlockKey k : named) EXPECT_FALSE(a.contains(k)) << "pending is not cached";
  EXPECT_EQ(a.evictable(), 26u) << "pending blocks cannot be named twice";
  EXPECT_EQ(a.commit(std::span(named).first(3)), 3u);
  EXPECT_EQ(a.size(), 27u);
  a.begin_request(request(now += 10));
  EXPECT_EQ(a.cancel(std::span(named).last(1)), 1u);
  a.end_request();
  EXPECT_TRUE(a.contains(named[3]));
  EXPECT_EQ(a.stats().pending, 0u);
  EXPECT_EQ(a.commit(named), 0u) << "nothing pending any more";
  EXPECT_EQ(drain(a).size(), 27u);
}

// The batch calls skip untracked (and pending) keys on request, and throw otherwise.
TEST_P(OwnerCalls, IgnoreMissing) {
  PolicyTree t(GetParam(), 8, 16, 3);
  Time now = 0;
  fill(t, 1, 3, now);
  std::vector<BlockKey> keys{1000, 77, 1001, 78};
  t.begin_request(request(now += 10));
  EXPECT_EQ(t.hits(keys, true), 2u);
  t.end_request();
  EXPECT_THROW(t.hits(keys), Error);
  EXPECT_EQ(t.pins(keys, true), 2u);
  EXPECT_EQ(t.stats().pinned, 2u);
  EXPECT_EQ(t.unpins(keys, true), 2u);
  EXPECT_EQ(t.stats().pinned, 0u);
}

// clear() starts afresh: the same calls then give a new tree's decisions.
TEST_P(OwnerCalls, ClearStartsAfresh) {
  PolicyTree a(GetParam(), 12, 16, 3), b(GetParam(), 12, 16, 3);
  Time now = 0, then = 0;
  fill(a, 3, 5, now);
  a.pin(1000);
  a.clear();
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.stats().pinned, 0u);
  then = now;
  fill(a, 3, 5, now);
  fill(b, 3, 5, then);
  EXPECT_EQ(drain(a), drain(b));
  a.begin_request(request(now += 10));
  EXPECT_THROW(a.clear(), Error);
  a.end_request();
}

// Random owner calls of every kind, checked after each: the tree's invariants, the counts, and
// every victim an evictable block (the driver throws on a policy bug).
TEST_P(OwnerCalls, RandomOwnerCallsKeepTheContract) {
  for (TreeShape shape : {TreeShape::kPrefix, TreeShape::kFlat}) {
    PolicyTree t(GetParam(), 48, 16, 5, shape);
    std::mt19937_64 rng(11);
    std::set<BlockKey> pinned;
    std::set<BlockKey> pending;  // named by victims(); an insert or a remove may settle them
    auto is_pending = [&](BlockKey k) { return t.tree().find(k) != kNoNode && !t.contains(k); };
    Time now = 0;
    for (int step = 0; step < 1500; ++step) {
      int op = rng() % 8;
      BlockKey session = 1 + rng() % 12;
      std::vector<BlockKey> keys = chain(1000 * session, 1 + rng() % 8);
      switch (op) {
        case 0:
        case 1:
          t.begin_request(request(now += 10, session));
          t.hits(keys, true);
          t.insert_chain(keys, std::nullopt, true);
          t.end_request();
          break;
        case 2:
          if (t.contains(keys.back()) && pinned.size() < 6 && pinned.insert(keys.back()).second)
            t.pin(keys.back());
          break;
        case 3:
          if (!pinned.empty()) {
            BlockKey k = *pinned.begin();
            if (t.contains(k)) t.unpin(k);
            pinned.erase(k);
          }
          break;
        case 4:
          if (t.contains(keys.front()))
            for (BlockKey k : t.remove(keys.front())) pinned.erase(k);  // its pins went with it
          break;
        case 5: {
          std::vector<BlockKey> exclude{keys.front()};
          size_t can = t.evictable(exclude);
          size_t want = rng() % 6;
          std::vector<BlockKey> gone = t.evict(want, {.exclude = exclude, .all_or_nothing = true});
          EXPECT_EQ(gone.size(), want <= can ? want : 0u);
          EXPECT_TRUE(std::find(gone.begin(), gone.end(), keys.front()) == gone.end());
          break;
        }
        case 6: {
          std::vector<BlockKey> named = t.victims(rng() % 4);
          for (BlockKey k : named) EXPECT_TRUE(pending.insert(k).second) << "named twice";
          break;
        }
        case 7:
          if (!pending.empty()) {
            std::vector<BlockKey> named(pending.begin(), pending.end());
            t.begin_request(request(now += 10, session));
            EXPECT_EQ(t.cancel(std::span(named).first(named.size() / 2)), named.size() / 2);
            t.end_request();
            EXPECT_EQ(t.commit(named), named.size() - named.size() / 2);
            pending.clear();
          }
          break;
      }
      ASSERT_EQ(t.tree().check_invariants(), "") << "step " << step;
      ASSERT_LE(t.size(), t.capacity());
      std::erase_if(pending, [&](BlockKey k) { return !is_pending(k); });
      ASSERT_EQ(t.stats().pending, pending.size()) << "step " << step;
    }
    t.commit(std::vector<BlockKey>(pending.begin(), pending.end()));
    for (BlockKey k : pinned)
      if (t.contains(k)) t.unpin(k);
    size_t cached = t.size();
    EXPECT_EQ(t.evictable(), cached);
    EXPECT_EQ(t.evict(cached).size(), cached);
    EXPECT_EQ(t.size(), 0u) << "everything unpinned drains";
  }
}

// The guard's LRU order is lru.cc's under an owner's calls too, where a request lists no blocks
// and (flat) every block is a root: guarded around LRU evicts as LRU does (its keys once came from
// the request's block count, so there all blocks tied). Each request hits a random earlier
// chain's cached prefix, inserts a new chain under it (or alone), and sometimes evicts a batch.
TEST(PolicyTreeGuard, GuardedAroundLruEvictsAsLruWithoutTheRequestsBlocks) {
  for (TreeShape shape : {TreeShape::kPrefix, TreeShape::kFlat}) {
    PolicyTree lru({"lru", ""}, 48, 16, 3, shape);
    PolicyTree guarded({"guarded", ""}, 48, 16, 3, shape);
    std::mt19937_64 rng(7);
    BlockKey next = 1;
    std::vector<std::vector<BlockKey>> chains;
    for (int r = 0; r < 400; ++r) {
      std::vector<BlockKey> hit;
      if (!chains.empty()) {
        const auto& c = chains[rng() % chains.size()];
        for (BlockKey k : c) {
          if (!lru.contains(k)) break;
          hit.push_back(k);
        }
      }
      std::vector<BlockKey> fresh = chain(next, 1 + rng() % 6);
      next += fresh.size();
      std::optional<BlockKey> parent;
      if (!hit.empty()) parent = hit.back();
      for (PolicyTree* t : {&lru, &guarded}) {
        t->begin_request(request(Time(r)));
        ASSERT_EQ(t->hits(hit), hit.size());
        t->insert_chain(fresh, parent, true);
        t->end_request();
      }
      std::vector<BlockKey> whole = hit;
      whole.insert(whole.end(), fresh.begin(), fresh.end());
      chains.push_back(whole);
      if (rng() % 5 == 0) {
        size_t n = 1 + rng() % 8;
        ASSERT_EQ(guarded.evict(n), lru.evict(n)) << "request " << r;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryOnlinePolicy, OwnerCalls,
                         ::testing::ValuesIn(online_policies_and_variants()),
                         [](const ::testing::TestParamInfo<PolicySpec>& info) {
                           std::string name = info.param.label();
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace kvpolicy
