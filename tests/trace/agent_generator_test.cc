// The agent workload generator (docs/formats.md, "Agent workloads"): its stated statistics.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/params.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/hints.h"

namespace kvpolicy {
namespace {

TEST(AgentGenerator, PausesHaveTheStatedMean) {
  AgentParams p;
  p.sessions = 3000;
  p.session_rate = 5;
  // The defaults: median 3 s (sigma 1), 10 % long pauses of median 120 s (sigma 0.5).
  EXPECT_NEAR(p.mean_pause_s(), 0.9 * 3 * std::exp(0.5) + 0.1 * 120 * std::exp(0.125), 1e-9);
  Trace t = generate_agent(p, 11);
  // A turn follows the previous one after its answer's decode time and a pause.
  std::vector<Time> last(p.sessions, -1);
  std::vector<uint32_t> out(p.sessions, 0);
  double sum = 0;
  size_t n = 0, long_ones = 0;
  for (size_t r = 0; r < t.size(); ++r) {
    SessionId s = t.session[r];
    if (last[s] >= 0) {
      double pause =
          double(t.time[r] - last[s]) / kMicrosPerSecond - out[s] * p.decode_ms_per_token * 1e-3;
      EXPECT_GT(pause, -1e-5);
      sum += pause;
      ++n;
      long_ones += pause > 30;
    }
    last[s] = t.time[r];
    out[s] = t.output_tokens[r];
  }
  ASSERT_GT(n, 20000u);
  EXPECT_NEAR(sum / double(n), p.mean_pause_s(), 0.05 * p.mean_pause_s());
  // Above 30 s: nearly all long pauses (P(long > 30 s) = 0.997) and few short ones (1.1 %).
  double share = double(long_ones) / double(n);
  EXPECT_NEAR(share, 0.1 * 0.997 + 0.9 * 0.011, 0.01);
}

TEST(AgentGenerator, SessionsShareTheirAgentsPrefix) {
  AgentParams p;
  p.sessions = 2000;
  p.prefixes = 400;
  p.prefix_alpha = 0;  // uniform: most prefixes are drawn
  Trace t = generate_agent(p, 4);
  std::vector<uint32_t> shared = shared_prefix_blocks(t);
  // The distinct shared prefixes (first block key and length) and their mean length in tokens.
  std::set<std::pair<BlockKey, uint32_t>> prefixes;
  for (size_t r = 0; r < t.size(); ++r)
    if (shared[r] > 0) prefixes.insert({t.prompt(r)[0], shared[r]});
  ASSERT_GT(prefixes.size(), 300u);
  EXPECT_LE(prefixes.size(), p.prefixes);
  double tokens = 0;
  for (auto& [key, blocks] : prefixes) tokens += (blocks + 0.5) * p.block_tokens;
  // Full blocks of a log-normal length with the stated mean (sigma 0.3 over 300+ draws).
  EXPECT_NEAR(tokens / double(prefixes.size()), p.prefix_tokens_mean, 0.05 * p.prefix_tokens_mean);
  // Prefix share: the shared prefix's part of all block accesses, as AgentParams states it.
  double prefix_blocks = 0;
  for (size_t r = 0; r < t.size(); ++r) prefix_blocks += shared[r];
  double share = prefix_blocks / double(t.num_block_accesses());
  EXPECT_NEAR(share, p.prefix_share(), 0.1 * p.prefix_share());
}

TEST(AgentGenerator, SameSeedSameTraceAndParametersParse) {
  Trace a = generate_workload("agent", "sessions=50,pause_s=1,long_pause_share=0", 3);
  Trace b = generate_workload("agent", "sessions=50,pause_s=1,long_pause_share=0", 3);
  EXPECT_EQ(a.blocks, b.blocks);
  EXPECT_EQ(a.time, b.time);
  EXPECT_THROW(generate_workload("agent", "long_pause_share=2", 3), ConfigError);
}

}  // namespace
}  // namespace kvpolicy
