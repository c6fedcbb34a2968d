// S3-FIFO as the DRAM tier's policy. An earlier version hung on the Mooncake trace once DRAM
// was at least twice HBM (its victim loop spun when its evictable counts went wrong): here
// every DRAM ratio from 1 to 4 must finish, with every victim checked and the tiers' invariants
// kept after every request.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "kvpolicy/cache/cache.h"
#include "kvpolicy/sim/sim.h"
#include "support/random_workload.h"

namespace kvpolicy {
namespace {

using testing::random_workload;
using testing::request_view;

// Runs `body` on its own thread. A test cannot stop a stuck thread, so a hang ends the test
// binary with a message instead of stalling the suite forever (the body normally takes well
// under a second; the limit allows for sanitizer builds).
void must_finish(const std::string& what, std::function<void()> body) {
  struct State {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
  };
  auto state = std::make_shared<State>();
  std::thread worker([state, &body] {
    body();
    std::lock_guard<std::mutex> lock(state->m);
    state->done = true;
    state->cv.notify_one();
  });
  std::unique_lock<std::mutex> lock(state->m);
  if (!state->cv.wait_for(lock, std::chrono::seconds(120), [&] { return state->done; })) {
    std::fprintf(stderr, "%s did not finish within 120 s (a hang)\n", what.c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }
  lock.unlock();
  worker.join();
}

TEST(S3FifoTiers, DramRatiosOneToFourFinishAndKeepInvariants) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Trace t = random_workload({.seed = seed, .requests = 400});
    for (const char* hbm_policy : {"lru", "s3fifo"}) {
      for (size_t hbm : {12, 30, 80}) {
        for (size_t ratio = 1; ratio <= 4; ++ratio) {
          size_t dram = ratio * hbm;
          std::string what = std::string(hbm_policy) + " over s3fifo, HBM " + std::to_string(hbm) +
                             ", DRAM " + std::to_string(dram) + ", seed " + std::to_string(seed);
          SCOPED_TRACE(what);
          must_finish(what, [&] {
            PolicyContext ctx;
            ctx.block_tokens = t.block_tokens;
            PrefixCache cache(hbm, {hbm_policy, ""}, ctx, dram, {"s3fifo", ""});
            cache.set_checking(true);  // throws if a victim is not an evictable leaf of its tier
            uint64_t dram_hits = 0;
            for (size_t r = 0; r < t.size(); ++r) {
              RequestView v = request_view(t, r);
              AccessResult a;
              try {
                a = cache.access(v);
              } catch (const std::exception& e) {
                ADD_FAILURE() << "request " << r << ": " << e.what();
                return;
              }
              dram_hits += a.dram_hit_blocks;
              ASSERT_LE(cache.hbm_size(), hbm) << "request " << r;
              ASSERT_LE(cache.dram_size(), dram) << "request " << r;
              ASSERT_EQ(cache.tree().check_invariants(), "") << "request " << r;
              for (uint32_t i = 0; i < a.hit_blocks + a.inserted_blocks; ++i)
                ASSERT_NE(cache.tree().find(v.blocks[i]), kNoNode) << "request " << r;
            }
            EXPECT_GT(dram_hits, 0u);  // the DRAM tier was really used
          });
        }
      }
    }
  }
}

// The same through replay(), as the CLI runs it, with its own victim checks; more DRAM never
// costs hits here (more room, same policies), a sanity check on the results themselves.
TEST(S3FifoTiers, ReplayWithGrowingDram) {
  Trace t = random_workload({.seed = 11, .requests = 600});
  for (size_t hbm : {15, 40}) {
    for (size_t ratio = 1; ratio <= 4; ++ratio) {
      std::string what = "replay HBM " + std::to_string(hbm) + " x" + std::to_string(ratio);
      SCOPED_TRACE(what);
      must_finish(what, [&] {
        ReplayOptions opts;
        opts.dram_capacity_blocks = ratio * hbm;
        opts.dram_policy = {"s3fifo", ""};
        opts.check_victims = true;
        ReplayResult r = replay(t, nullptr, {"s3fifo", ""}, hbm, opts);
        EXPECT_GT(r.demotions, 0u);
        EXPECT_LE(r.block_hits, r.block_accesses);
      });
    }
  }
}

}  // namespace
}  // namespace kvpolicy
