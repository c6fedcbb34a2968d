// The oracle (next use of every block access) against a quadratic reference.
#include <gtest/gtest.h>

#include <vector>

#include "kvpolicy/trace/trace.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

// For each access, the request of the nearest access of the same key after it.
void expect_matches_reference(const Trace& trace) {
  Oracle o = compute_oracle(trace);
  size_t n = trace.blocks.size();
  std::vector<uint32_t> request_of(n);
  for (size_t r = 0; r < trace.size(); ++r)
    for (uint64_t a = trace.block_offset[r]; a < trace.block_offset[r + 1]; ++a)
      request_of[a] = static_cast<uint32_t>(r);
  ASSERT_EQ(o.next_request.size(), n);
  for (size_t a = 0; a < n; ++a) {
    uint32_t next = Oracle::kNoNext;
    for (size_t b = a + 1; b < n && next == Oracle::kNoNext; ++b)
      if (trace.blocks[b] == trace.blocks[a]) next = request_of[b];
    ASSERT_EQ(o.next_request[a], next) << "access " << a;
  }
}

TEST(Oracle, MatchesAQuadraticReference) {
  for (uint64_t seed = 1; seed <= 3; ++seed)
    expect_matches_reference(testing::random_workload({.seed = seed, .requests = 200}));
}

TEST(Oracle, KeyRepeatedWithinARequest) {
  // Keys as given (not chained), so one prompt can hold a key twice.
  Trace t;
  std::vector<BlockKey> a = {7, 8, 7}, b = {8, 9}, c = {7};
  t.add_request_keys(0, a, 48, 1);
  t.add_request_keys(1, b, 32, 1);
  t.add_request_keys(2, c, 16, 1);
  expect_matches_reference(t);
  Oracle o = compute_oracle(t);
  EXPECT_EQ(o.next_request[0], 0u);  // key 7's next use is later in the same prompt
  EXPECT_EQ(o.next_request[2], 2u);
}

}  // namespace
}  // namespace kvpolicy
