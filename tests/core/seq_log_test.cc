// SeqLog (include/kvpolicy/core/order/seq_log.h) against a std::deque of (counter, value).
#include "kvpolicy/core/order/seq_log.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>
#include <utility>

namespace kvpolicy {
namespace {

// Random appends and drops (long enough runs of drops to compact the vector many times), every
// entry checked after each step.
void check_against_deque(uint32_t first, uint64_t seed) {
  SeqLog<uint64_t> log(first);
  std::deque<std::pair<uint32_t, uint64_t>> ref;
  uint32_t next = first;
  std::mt19937_64 rng(seed);
  for (int step = 0; step < 20000; ++step) {
    // Phases of mostly appends then mostly drops, so the log both grows past and shrinks below
    // the compaction threshold.
    bool appending = (step / 2500) % 2 == 0;
    if (ref.empty() || rng() % 10 < (appending ? 8u : 2u)) {
      uint64_t v = rng();
      log.push_back(v);
      ref.emplace_back(next++, v);
    } else {
      ASSERT_EQ(log.front(), ref.front().second);
      log.pop_front();
      ref.pop_front();
    }
    ASSERT_EQ(log.size(), ref.size());
    ASSERT_EQ(log.empty(), ref.empty());
    ASSERT_EQ(log.end(), next);
    ASSERT_EQ(log.first(), ref.empty() ? next : ref.front().first);
    if (step % 97 == 0)
      for (const auto& [seq, v] : ref) ASSERT_EQ(log[seq], v) << "counter " << seq;
  }
}

TEST(SeqLog, MatchesADequeThroughCompactions) { check_against_deque(1, 1); }

TEST(SeqLog, CountersWrapAround) {
  // Counters are uint32_t: a log started just below 2^32 indexes across the wrap.
  check_against_deque(UINT32_MAX - 3000, 2);
}

TEST(SeqLog, EmptyLogKeepsItsPosition) {
  SeqLog<int> log(7);
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(log.first(), 7u);
  EXPECT_EQ(log.end(), 7u);
  log.push_back(1);
  log.push_back(2);
  log.pop_front();
  log.pop_front();
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(log.first(), 9u);  // the next append is counter 9
  log.push_back(3);
  EXPECT_EQ(log[9], 3);
  log[9] = 4;
  EXPECT_EQ(log.front(), 4);
}

}  // namespace
}  // namespace kvpolicy
