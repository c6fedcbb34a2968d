// Session inference: a hand-worked example, a slow literal reference on random workloads, and the
// share of continued requests on the Mooncake trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "kvpolicy/trace/trace.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy {
namespace {

struct Req {
  std::vector<uint64_t> ids;
  uint32_t tokens;
};

Trace make(uint32_t block_tokens, const std::vector<Req>& reqs) {
  Trace t;
  t.block_tokens = block_tokens;
  Time now = 0;
  for (auto& r : reqs) t.add_request(now += 10, r.ids, r.tokens, 1);
  return t;
}

TEST(InferSessions, HandExample) {
  // Two tokens per block. The comment gives each request's full blocks and its parent.
  Trace t = make(2, {
                        {{1, 2, 3}, 6},         // r0 full [1 2 3]; new session 0
                        {{1, 2, 3, 4, 5}, 9},   // r1 full [1 2 3 4]; continues r0
                        {{7, 8}, 4},            // r2 full [7 8]; new session 1
                        {{1, 2, 3, 4, 9}, 10},  // r3: r0 and r1 qualify; r1 is longer
                        {{1, 2, 3, 6}, 8},      // r4: only r0 qualifies (a branch)
                        {{7, 8, 1}, 5},         // r5 full [7 8]; continues r2
                        {{7, 8, 5}, 6},         // r6: r2 and r5 tie in length; r5 is later
                        {{1}, 1},               // r7: one (partial) block; no parent
                        {{1, 2}, 3},            // r8: [1] is r7's only full block
                    });
  Trace one = t;
  EXPECT_EQ(infer_sessions(t), 5u);
  EXPECT_EQ(t.session, (std::vector<SessionId>{0, 0, 1, 0, 0, 1, 1, 2, 3}));
  EXPECT_EQ(t.turn, (std::vector<uint32_t>{1, 2, 1, 3, 2, 2, 3, 1, 1}));
  // With one-block parents allowed, r8 continues r7 ("at least 1" full block).
  EXPECT_EQ(infer_sessions(one, 1), 6u);
  EXPECT_EQ(one.session, (std::vector<SessionId>{0, 0, 1, 0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(one.turn, (std::vector<uint32_t>{1, 2, 1, 3, 2, 2, 3, 1, 2}));
}

// The rule read literally: compare r's prompt with every earlier request's full blocks.
size_t reference(Trace& t, uint32_t min_parent_blocks) {
  size_t continued = 0;
  SessionId next = 0;
  auto full = [&](size_t q) {
    size_t f = std::max<size_t>(t.prompt_tokens[q] / t.block_tokens, 1);
    return std::min<size_t>(f, t.prompt_blocks(q));
  };
  for (size_t r = 0; r < t.size(); ++r) {
    size_t best = kNoRequest, best_len = 0;
    for (size_t q = 0; q < r; ++q) {
      size_t f = full(q);
      if (f < std::max<uint32_t>(min_parent_blocks, 1) || f > t.prompt_blocks(r)) continue;
      if (!std::equal(t.prompt(q).begin(), t.prompt(q).begin() + f, t.prompt(r).begin())) continue;
      if (f >= best_len) best = q, best_len = f;  // ">=": the later of equals
    }
    if (best != kNoRequest) {
      t.session[r] = t.session[best];
      t.turn[r] = t.turn[best] + 1;
      ++continued;
    } else {
      t.session[r] = next++;
      t.turn[r] = 1;
    }
  }
  return continued;
}

TEST(InferSessions, MatchesLiteralReferenceOnRandomConversations) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    std::mt19937_64 rng(seed);
    const uint32_t B = 4;
    std::vector<Req> reqs;
    std::vector<std::vector<uint64_t>> histories;
    for (int r = 0; r < 400; ++r) {
      std::vector<uint64_t> ids;
      int kind = static_cast<int>(rng() % 4);
      if (kind == 0 || histories.empty()) {
        ids = {rng() % 3};  // a shared "system prompt" block, then a fresh question
      } else {
        ids = histories[rng() % histories.size()];  // next turn, a retry or a branch
        if (kind == 3) ids.resize(rng() % (ids.size() + 1));
      }
      size_t extra = rng() % 4;
      for (size_t i = 0; i < extra; ++i) ids.push_back(rng() % 5);
      if (ids.empty()) ids.push_back(0);
      // Tokens: the last block is full or partial.
      uint32_t tokens = static_cast<uint32_t>(ids.size() * B - rng() % B);
      reqs.push_back({ids, tokens});
      histories.push_back(ids);
    }
    for (uint32_t min_blocks : {1u, 2u, 3u}) {
      Trace fast = make(B, reqs), slow = make(B, reqs);
      EXPECT_EQ(infer_sessions(fast, min_blocks), reference(slow, min_blocks));
      EXPECT_EQ(fast.session, slow.session) << seed << " " << min_blocks;
      EXPECT_EQ(fast.turn, slow.turn) << seed << " " << min_blocks;
    }
  }
}

TEST(InferSessions, MooncakeShareOfContinuedRequests) {
  const char* dir = std::getenv("KVPOLICY_DATA");
  std::string path =
      dir ? std::string(dir) + "/mooncake-conversation/conversation_trace.jsonl" : std::string();
  if (path.empty() || !std::filesystem::exists(path))
    GTEST_SKIP() << "KVPOLICY_DATA unset or the Mooncake trace is absent";
  // The literal reference is quadratic: compare on the first 2,000 requests.
  ReadOptions head;
  head.max_requests = 2000;
  Trace fast = read_trace(path, "mooncake", head), slow = fast;
  EXPECT_EQ(infer_sessions(fast), reference(slow, 2));
  EXPECT_EQ(fast.session, slow.session);
  EXPECT_EQ(fast.turn, slow.turn);
  // The traces README: about a third of the requests start with all full blocks of an earlier
  // one. Block 0 is every request's (a shared system prompt), so one-block parents would make
  // nearly every request a continuation.
  Trace t = read_trace(path, "mooncake", {}), loose = t;
  double share = double(infer_sessions(t)) / t.size();
  EXPECT_GT(share, 0.30);
  EXPECT_LT(share, 0.36);
  EXPECT_GT(double(infer_sessions(loose, 1)) / loose.size(), 0.99);
}

}  // namespace
}  // namespace kvpolicy
