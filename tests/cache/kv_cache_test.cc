// KvCache and PolicyTree, the embedding API: every online policy makes in them the decisions it
// makes in replay, pins hold, evict() frees what it says, and misuse is one clear error.
#include "kvpolicy/cache/kv_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/cache/held_blocks.h"
#include "kvpolicy/cache/policy_tree.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/text_trace.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::random_workload;

RequestInfo info_of(const Trace& trace, size_t r) {
  RequestInfo info;
  info.time = trace.time[r];
  info.session = trace.session[r];
  info.turn = trace.turn[r];
  info.category = trace.category[r];
  info.prompt_tokens = trace.prompt_tokens[r];
  info.output_tokens = trace.output_tokens[r];
  if (trace.has_continuation()) info.continuation = trace.continuation[r];
  return info;
}

std::vector<PolicySpec> online_policies() {
  std::vector<PolicySpec> out;
  for (auto& p : PolicyRegistry::instance().all()) {
    PolicySpec spec{p.name, ""};
    if (!needs_future(spec)) out.push_back(spec);
  }
  return out;
}

class EveryOnlinePolicy : public ::testing::TestWithParam<PolicySpec> {};

// Request by request, KvCache::insert gives replay's hits, insertions and evictions.
TEST_P(EveryOnlinePolicy, KvCacheMakesReplaysDecisions) {
  const PolicySpec& spec = GetParam();
  for (uint64_t w = 1; w <= 2; ++w) {
    Trace trace = random_workload({.seed = w, .requests = 300});
    for (size_t capacity : {12, 40}) {
      SCOPED_TRACE(spec.label() + " workload " + std::to_string(w) + " capacity " +
                   std::to_string(capacity));
      PolicyContext ctx;
      ctx.block_tokens = trace.block_tokens;
      ctx.seed = 7;
      PrefixCache replay(capacity, spec, ctx);
      KvCache cache(spec, capacity, trace.block_tokens, 7);
      for (size_t r = 0; r < trace.size(); ++r) {
        AccessResult want = replay.access(request_view(trace, r));
        AccessResult got = cache.insert(trace.prompt(r), info_of(trace, r));
        ASSERT_EQ(got.hit_blocks, want.hit_blocks) << "request " << r;
        ASSERT_EQ(got.inserted_blocks, want.inserted_blocks) << "request " << r;
        ASSERT_EQ(got.evictions, want.evictions) << "request " << r;
      }
      EXPECT_EQ(cache.size(), replay.hbm_size());
      EXPECT_EQ(cache.policy_tree().tree().check_invariants(), "");
    }
  }
}

// Pins survive any amount of pressure; evict() frees unpinned blocks only, in the policy's order.
TEST_P(EveryOnlinePolicy, PinnedBlocksStayAndEvictFreesTheRest) {
  const PolicySpec& spec = GetParam();
  Trace trace = random_workload({.seed = 5, .requests = 200});
  KvCache cache(spec, 30, trace.block_tokens, 3);
  std::vector<BlockKey> pinned(trace.prompt(0).begin(), trace.prompt(0).end());
  cache.insert(pinned, info_of(trace, 0));
  ASSERT_EQ(cache.match(pinned), pinned.size());
  cache.pin(pinned);
  for (size_t r = 1; r < trace.size(); ++r) {
    cache.insert(trace.prompt(r), info_of(trace, r));
    ASSERT_LE(cache.size(), 30u);
    ASSERT_EQ(cache.match(pinned), pinned.size()) << "a pinned block left at request " << r;
  }
  size_t before = cache.size();
  std::vector<BlockKey> gone = cache.evict(before);
  EXPECT_EQ(cache.size(), before - gone.size());
  EXPECT_EQ(cache.size(), pinned.size()) << "everything unpinned can go";
  for (BlockKey k : gone) EXPECT_EQ(std::count(pinned.begin(), pinned.end(), k), 0);
  cache.unpin(pinned);
  EXPECT_EQ(cache.evict(1000).size(), pinned.size());
  EXPECT_EQ(cache.size(), 0u);
  PolicyTreeStats s = cache.stats();
  EXPECT_EQ(s.pinned, 0u);
  EXPECT_EQ(s.evictions, s.inserted);
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryOnlinePolicy, ::testing::ValuesIn(online_policies()),
                         [](const auto& info) { return info.param.name; });

TEST(KvCache, BlockKeysAreTraceImportsKeys) {
  std::vector<uint32_t> tokens(16 * 3 + 5);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<uint32_t>(i * 7 + 1);
  KvCache cache({"lru", ""}, 8, 16);
  std::vector<BlockKey> keys = cache.block_keys(tokens);
  ASSERT_EQ(keys.size(), 3u) << "the partial last block is not cached";
  std::vector<uint64_t> ids;
  text_block_ids(tokens.data(), 48, 16, ids);
  BlockKey key = kRootKey;
  for (size_t b = 0; b < 3; ++b) {
    key = chain_key(key, ids[b]);
    EXPECT_EQ(keys[b], key);
  }
}

TEST(KvCache, LookupTellsHitsAndMatchDoesNot) {
  KvCache cache({"lru", ""}, 2, 1);
  std::vector<BlockKey> a = {1}, b = {2}, c = {3};
  cache.insert(a);
  cache.insert(b);
  EXPECT_EQ(cache.match(a), 1u);  // no side effect: a stays the least recent
  cache.insert(c);
  EXPECT_EQ(cache.match(a), 0u);
  EXPECT_EQ(cache.lookup(b), 1u);  // b is used now: c goes next
  cache.insert(a);
  EXPECT_EQ(cache.match(b), 1u);
  EXPECT_EQ(cache.match(c), 0u);
}

TEST(KvCache, InsertStopsWhenEverythingIsPinned) {
  KvCache cache({"lru", ""}, 3, 1);
  std::vector<BlockKey> p = {10, 11, 12};
  cache.insert(p);
  cache.pin(p);
  std::vector<BlockKey> q = {20, 21};
  AccessResult r = cache.insert(q);
  EXPECT_EQ(r.inserted_blocks, 0u);
  EXPECT_EQ(cache.stats().refused, 1u);
  cache.unpin(std::span(p).subspan(2));  // the leaf only
  r = cache.insert(q);
  EXPECT_EQ(r.inserted_blocks, 1u) << "one block freed, then the leaf's parent is pinned";
}

TEST(KvCache, MisuseIsOneClearError) {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { KvCache({"nope", ""}, 8); }).find("nope"), std::string::npos);
  EXPECT_NE(message([] { KvCache({"lru", "x=1"}, 8); }).find("x"), std::string::npos);
  EXPECT_NE(message([] { KvCache({"lru", ""}, 0); }).find("at least one block"), std::string::npos);
  EXPECT_NE(message([] { KvCache({"belady", ""}, 8); }).find("future"), std::string::npos);
  KvCache cache({"lru", ""}, 8, 1);
  std::vector<BlockKey> k = {1, 2};
  EXPECT_NE(message([&] { cache.pin(k); }).find("not cached"), std::string::npos);
  cache.insert(k);
  EXPECT_NE(message([&] { cache.unpin(k); }).find("not pinned"), std::string::npos);
}

// An engine's session ids are its own (a hash, a database id): T-LRU kept an array indexed by
// them, so an id near 2^32 asked for 32 GiB (issue 26's sparse-session defect, here reached
// through the embedding API).
TEST(KvCache, LargeSessionIdsCostNoMemory) {
  KvCache cache({"tlru", ""}, 64, 16);
  std::vector<BlockKey> k = {1, 2, 3};
  for (uint32_t s : {0xFFFFFFF0u, 7u, 0xFFFFFFF0u}) {
    AccessResult r = cache.insert(k, {.session = s, .prompt_tokens = 48, .output_tokens = 16});
    EXPECT_EQ(r.hit_blocks + r.inserted_blocks, 3u);
  }
  EXPECT_EQ(cache.match(k), 3u);
}

// A time past 2^62 us overflowed WA's refit arithmetic (UBSan); the API refuses it where it
// enters, before any policy sees it, and the cache stays usable.
TEST(KvCache, TimesOutsideTheTraceRangeAreRefused) {
  for (const char* policy : {"wa", "lru"}) {
    KvCache cache({policy, ""}, 8, 1);
    std::vector<BlockKey> k = {1, 2};
    cache.insert(k, {.time = 5});
    EXPECT_THROW(cache.insert(k, {.time = INT64_MAX - 5}), Error) << policy;
    EXPECT_THROW(cache.insert(k, {.time = kMaxTime}), Error) << policy;
    EXPECT_EQ(cache.insert(k, {.time = kMaxTime - 1}).hit_blocks, 2u) << policy;
  }
  PolicyTree t({"lru", ""}, 3);
  EXPECT_THROW(t.begin_request({.time = -1}), Error);
  EXPECT_FALSE(t.in_request());
}

// PolicyTree driven as an engine's radix cache drives it: node ids as keys, explicit cycles.
TEST(PolicyTree, ExternalTreeWithRequestCycles) {
  PolicyTree t({"lru", ""}, 3);
  t.begin_request({.time = 10});
  EXPECT_EQ(t.insert(100, std::nullopt), Inserted::kAdded);
  EXPECT_EQ(t.insert(101, 100), Inserted::kAdded);
  t.end_request();
  t.begin_request({.time = 20});
  EXPECT_EQ(t.insert(200, std::nullopt), Inserted::kAdded);
  EXPECT_EQ(t.insert(201, 200), Inserted::kRefused) << "full: the owner evicts first";
  EXPECT_EQ(t.evict(1), std::vector<BlockKey>{101}) << "the least recent leaf";
  EXPECT_EQ(t.insert(201, 200), Inserted::kAdded);
  t.end_request();
  EXPECT_FALSE(t.contains(101));
  EXPECT_TRUE(t.contains(100));
  EXPECT_THROW(t.begin_request({.time = 5}), Error);  // time went backwards
  EXPECT_THROW(t.insert(300, 999), Error);            // unknown parent
  EXPECT_THROW(t.end_request(), Error);               // none open
  t.hit(100);                                         // an implicit cycle of its own
  EXPECT_FALSE(t.in_request());
  std::vector<BlockKey> gone = t.evict(1);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0], 201u) << "201 was used before the hit on 100";
}

// LPC reading the request's own score: a request without one is refused before it opens, so
// the next (corrected) request goes through, and the message says what to pass, not how to build
// a trace for replay (issue 32, item 12).
TEST(KvCache, RequestRefusedByThePolicyIsNotLeftOpen) {
  KvCache cache({"lpc", ""}, 8, 1);
  std::vector<BlockKey> k = {1, 2};
  std::string message;
  try {
    cache.insert(k);
  } catch (const ConfigError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("continuation"), std::string::npos) << message;
  EXPECT_EQ(message.find("trace build"), std::string::npos) << message;
  EXPECT_EQ(message.find("predictor=oracle"), std::string::npos) << message;
  EXPECT_FALSE(cache.policy_tree().in_request());
  EXPECT_EQ(cache.stats().requests, 0u);
  AccessResult r = cache.insert(k, {.continuation = 0.7f});
  EXPECT_EQ(r.inserted_blocks, 2u);
  EXPECT_EQ(cache.match(k), 2u);

  PolicyTree t({"lpc", ""}, 8);
  EXPECT_THROW(t.begin_request(), ConfigError);
  EXPECT_FALSE(t.in_request());
  t.begin_request({.continuation = 0.2f});
  EXPECT_EQ(t.insert(5, std::nullopt), Inserted::kAdded);
  t.end_request();
  EXPECT_EQ(t.stats().requests, 1u);
}

// One request of a million blocks: the parent of each insert was found by scanning the request's
// held blocks from the front, so this ran for hours (quadratic); now it is linear (issue 32,
// item 13).
TEST(PolicyTree, OneVeryLongRequestIsLinear) {
  constexpr size_t kBlocks = 1'000'000;
  std::vector<BlockKey> keys(kBlocks);
  for (size_t b = 0; b < kBlocks; ++b) keys[b] = 1000 + b;
  KvCache cache({"lru", ""}, kBlocks, 1);
  EXPECT_EQ(cache.insert(keys).inserted_blocks, kBlocks);
  EXPECT_EQ(cache.insert(keys).hit_blocks, kBlocks);
  EXPECT_EQ(cache.stats().pinned, 0u);
  EXPECT_EQ(cache.stats().evictions, 0u);
}

// The same by counting: the held-blocks bookkeeping of a request of n blocks (each inserted under
// the previous one, then all hit again) takes a few steps per block, whatever n is; scanning the
// held list for each parent took n^2 / 2.
TEST(PolicyTree, HeldBlocksBookkeepingIsLinearInTheRequest) {
  auto steps_per_block = [](size_t blocks) {
    PolicyTree t({"lru", ""}, blocks);
    t.begin_request();
    std::optional<BlockKey> parent;
    for (size_t b = 0; b < blocks; ++b) {
      EXPECT_EQ(t.insert(1000 + b, parent), Inserted::kAdded);
      parent = 1000 + b;
    }
    t.end_request();
    t.begin_request();
    for (size_t b = 0; b < blocks; ++b) t.hit(1000 + b);
    t.end_request();
    EXPECT_EQ(t.stats().pinned, 0u);
    return double(t.held_steps()) / double(blocks);
  };
  double small = steps_per_block(1000), large = steps_per_block(100'000);
  EXPECT_LE(small, 5.0);
  EXPECT_LE(large, 5.0);
  EXPECT_NEAR(large, small, 0.01);
}

TEST(HeldBlocks, AStampPerRequest) {
  HeldBlocks h;
  h.resize(4);
  h.begin();
  EXPECT_FALSE(h.holds(2));
  h.add(2);
  h.add(2);  // a block hit twice is held twice
  EXPECT_TRUE(h.holds(2));
  EXPECT_FALSE(h.holds(3));
  std::vector<NodeId> released;
  h.release_all([&](NodeId n) { released.push_back(n); });
  EXPECT_EQ(released, (std::vector<NodeId>{2, 2}));
  h.begin();
  EXPECT_FALSE(h.holds(2));  // the next request holds nothing yet
  EXPECT_EQ(h.size(), 0u);
}

}  // namespace
}  // namespace kvpolicy
