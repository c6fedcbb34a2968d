#include "kvpolicy/trace/generators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

bool same_trace(const Trace& a, const Trace& b) {
  return a.time == b.time && a.session == b.session && a.turn == b.turn &&
         a.category == b.category && a.prompt_tokens == b.prompt_tokens &&
         a.output_tokens == b.output_tokens && a.block_offset == b.block_offset &&
         a.blocks == b.blocks && a.block_tokens == b.block_tokens;
}

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

TEST(Rng, DistributionMeans) {
  Rng rng(3);
  const int n = 200000;
  double exp_sum = 0, geo_sum = 0, logn_sum = 0, uni_sum = 0;
  for (int i = 0; i < n; ++i) {
    exp_sum += rng.exponential(100);
    geo_sum += rng.geometric(4);
    logn_sum += rng.lognormal_mean(300, 0.8);
    uni_sum += rng.uniform();
  }
  EXPECT_NEAR(exp_sum / n, 100, 1.5);
  EXPECT_NEAR(geo_sum / n, 4, 0.05);
  EXPECT_NEAR(logn_sum / n, 300, 6);
  EXPECT_NEAR(uni_sum / n, 0.5, 0.005);
  EXPECT_EQ(Rng(5).geometric(1.0), 1u);
}

TEST(ZipfSampler, ProbabilitiesAndDraws) {
  // n = 3, alpha = 1: weights 1, 1/2, 1/3 over 11/6 -> 6/11, 3/11, 2/11.
  ZipfSampler z(3, 1.0);
  EXPECT_NEAR(z.probability(0), 6.0 / 11, 1e-12);
  EXPECT_NEAR(z.probability(1), 3.0 / 11, 1e-12);
  EXPECT_NEAR(z.probability(2), 2.0 / 11, 1e-12);
  Rng rng(9);
  std::vector<int> count(3);
  for (int i = 0; i < 110000; ++i) ++count[z(rng)];
  EXPECT_NEAR(count[0], 60000, 800);
  EXPECT_NEAR(count[1], 30000, 700);
  EXPECT_NEAR(count[2], 20000, 600);
  ZipfSampler flat(4, 0.0);
  EXPECT_NEAR(flat.probability(3), 0.25, 1e-12);
}

// --- GSP -------------------------------------------------------------------------------------

GspParams small_gsp(GspOrder order) {
  GspParams p;
  p.groups = 10;
  p.prompts_per_group = 4;
  p.order = order;
  return p;
}

TEST(Gsp, DeterministicForASeed) {
  GspParams p = small_gsp(GspOrder::kRandom);
  EXPECT_TRUE(same_trace(generate_gsp(p, 7), generate_gsp(p, 7)));
  EXPECT_FALSE(same_trace(generate_gsp(p, 7), generate_gsp(p, 8)));
}

TEST(Gsp, LengthsAndSharedPrefixes) {
  GspParams p = small_gsp(GspOrder::kGrouped);
  Trace t = generate_gsp(p, 1);
  ASSERT_EQ(t.size(), 40u);
  EXPECT_EQ(t.block_tokens, 16u);
  std::map<uint32_t, std::vector<size_t>> by_group;
  for (size_t r = 0; r < t.size(); ++r) by_group[t.session[r]].push_back(r);
  ASSERT_EQ(by_group.size(), 10u);
  const uint32_t lengths[] = {512, 1024, 2048, 4096, 8192};
  std::set<BlockKey> first_blocks;
  for (auto& [g, reqs] : by_group) {
    ASSERT_EQ(reqs.size(), 4u);
    uint32_t L = lengths[g % 5];
    size_t shared = L / 2 / 16;  // S_g = L_g / 2, a whole number of blocks here
    for (size_t r : reqs) {
      EXPECT_EQ(t.prompt_tokens[r], L);
      EXPECT_EQ(t.output_tokens[r], 4u);
      EXPECT_EQ(t.category[r], 0);
      ASSERT_EQ(t.prompt_blocks(r), L / 16);
    }
    auto a = t.prompt(reqs[0]);
    for (size_t k = 1; k < reqs.size(); ++k) {
      auto b = t.prompt(reqs[k]);
      EXPECT_TRUE(std::equal(a.begin(), a.begin() + shared, b.begin())) << "group " << g;
      EXPECT_NE(a[shared], b[shared]) << "questions must be unique";
    }
    first_blocks.insert(a[0]);
  }
  EXPECT_EQ(first_blocks.size(), 10u) << "groups must not share prefixes";
  // Every question block is unique: unique blocks = shared prefixes + all question blocks.
  size_t expect_unique = 0;
  for (uint32_t g = 0; g < 10; ++g) expect_unique += lengths[g % 5] / 32 * (1 + 4);
  EXPECT_EQ(count_unique_blocks(t), expect_unique);
}

TEST(Gsp, PartialBlocksAtThePrefixEnd) {
  GspParams p = small_gsp(GspOrder::kGrouped);
  p.groups = 1;
  p.lengths = {100};  // S = 50 tokens: 3 full shared blocks, the 4th straddles into the question
  Trace t = generate_gsp(p, 2);
  ASSERT_EQ(t.prompt_blocks(0), ceil_div(100, 16));
  auto a = t.prompt(0), b = t.prompt(1);
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + 3, b.begin()));
  EXPECT_NE(a[3], b[3]);
}

TEST(Gsp, Orders) {
  Trace rr = generate_gsp(small_gsp(GspOrder::kRoundRobin), 3);
  for (size_t k = 0; k < rr.size(); ++k) {
    EXPECT_EQ(rr.session[k], k % 10) << "round-robin cycles through every group";
    EXPECT_EQ(rr.turn[k], k / 10 + 1);
  }
  Trace grouped = generate_gsp(small_gsp(GspOrder::kGrouped), 3);
  for (size_t k = 0; k < grouped.size(); ++k) EXPECT_EQ(grouped.session[k], k / 4);
  Trace random = generate_gsp(small_gsp(GspOrder::kRandom), 3);
  std::vector<int> per_group(10);
  size_t same_as_rr = 0, same_as_grouped = 0;
  for (size_t k = 0; k < random.size(); ++k) {
    ++per_group[random.session[k]];
    same_as_rr += random.session[k] == rr.session[k];
    same_as_grouped += random.session[k] == grouped.session[k];
  }
  for (int c : per_group) EXPECT_EQ(c, 4);
  EXPECT_LT(same_as_rr, 20u);
  EXPECT_LT(same_as_grouped, 20u);
}

TEST(Gsp, PoissonArrivals) {
  GspParams p = small_gsp(GspOrder::kRandom);
  p.groups = 100;
  p.prompts_per_group = 20;
  p.lengths = {32};
  Trace t = generate_gsp(p, 4);
  EXPECT_EQ(t.time.front(), 0);
  for (size_t r = 1; r < t.size(); ++r) ASSERT_GE(t.time[r], t.time[r - 1]);
  double mean_gap_s = double(t.time.back()) / (t.size() - 1) / kMicrosPerSecond;
  EXPECT_NEAR(mean_gap_s, 1.0 / 12, 0.006);
}

// --- Conversation ----------------------------------------------------------------------------

ConversationParams small_conversation() {
  ConversationParams p;
  p.sessions = 300;
  p.session_rate = 10;  // far more arrivals than the cap allows to run at once
  p.max_active = 5;
  p.system_tokens_mean = 64;
  p.prompt_tokens_mean = 40;
  p.answer_tokens_mean = 50;
  return p;
}

size_t max_overlap(const Trace& t) {
  std::map<SessionId, std::pair<Time, Time>> span;
  for (size_t r = 0; r < t.size(); ++r) {
    auto [it, fresh] = span.try_emplace(t.session[r], t.time[r], t.time[r]);
    if (!fresh) it->second.second = t.time[r];
  }
  std::vector<std::pair<Time, int>> ev;  // starts before ends at equal times: closed intervals
  for (auto& [s, se] : span) {
    ev.push_back({se.first, -1});
    ev.push_back({se.second, +1});
  }
  std::sort(ev.begin(), ev.end());
  size_t open = 0, best = 0;
  for (auto& [time, kind] : ev) {
    if (kind < 0) best = std::max(best, ++open);
    if (kind > 0) --open;
  }
  return best;
}

TEST(Conversation, DeterministicForASeed) {
  ConversationParams p = small_conversation();
  p.sessions = 50;
  EXPECT_TRUE(same_trace(generate_conversation(p, 11), generate_conversation(p, 11)));
  EXPECT_FALSE(same_trace(generate_conversation(p, 11), generate_conversation(p, 12)));
}

TEST(Conversation, TurnsExtendThePreviousContext) {
  ConversationParams p = small_conversation();
  Trace t = generate_conversation(p, 5);
  const uint32_t B = t.block_tokens;
  std::map<SessionId, size_t> last;  // session -> its latest request so far
  size_t continued = 0;
  for (size_t r = 0; r < t.size(); ++r) {
    if (r > 0) {
      ASSERT_GE(t.time[r], t.time[r - 1]);
    }
    ASSERT_EQ(t.prompt_blocks(r), ceil_div(t.prompt_tokens[r], B));
    auto it = last.find(t.session[r]);
    if (it == last.end()) {
      EXPECT_EQ(t.turn[r], 1u);
      last[t.session[r]] = r;
      continue;
    }
    size_t q = it->second;
    EXPECT_EQ(t.turn[r], t.turn[q] + 1);
    // The new context holds the old prompt, its answer and at least one new token.
    EXPECT_GT(t.prompt_tokens[r], t.prompt_tokens[q] + t.output_tokens[q]);
    EXPECT_GT(t.time[r], t.time[q]);
    size_t full = t.prompt_tokens[q] / B;
    auto prev = t.prompt(q), cur = t.prompt(r);
    ASSERT_TRUE(std::equal(prev.begin(), prev.begin() + full, cur.begin()))
        << "turn " << t.turn[r] << " of session " << t.session[r];
    if (t.prompt_tokens[q] % B) {
      EXPECT_NE(prev[full], cur[full]) << "a partial block is not reused";
    }
    it->second = r;
    ++continued;
  }
  EXPECT_EQ(last.size(), p.sessions);
  EXPECT_GT(continued, p.sessions);  // mean 4 turns: plenty of continuations were checked
}

TEST(Conversation, ActiveSessionCap) {
  ConversationParams p = small_conversation();
  Trace capped = generate_conversation(p, 6);
  EXPECT_LE(max_overlap(capped), 5u);
  EXPECT_GE(max_overlap(capped), 4u);  // the cap binds at this arrival rate
  p.max_active = 1000;
  EXPECT_GT(max_overlap(generate_conversation(p, 6)), 5u);  // and without it, it would not hold
}

TEST(Conversation, SharedSystemPrompts) {
  ConversationParams p = small_conversation();
  p.system_prompts = 1;
  p.system_tokens_sigma = 0;
  p.system_tokens_mean = 160;  // exactly 10 blocks, shared by every session
  Trace t = generate_conversation(p, 7);
  std::set<BlockKey> tenth, eleventh;
  for (size_t r = 0; r < t.size(); ++r) {
    if (t.turn[r] != 1) continue;
    tenth.insert(t.prompt(r)[9]);
    eleventh.insert(t.prompt(r)[10]);
  }
  EXPECT_EQ(tenth.size(), 1u);
  EXPECT_EQ(eleventh.size(), p.sessions);
}

TEST(Conversation, DistributionsMatchTheirParameters) {
  ConversationParams p = small_conversation();
  p.sessions = 1500;
  p.max_active = 100000;  // no queueing, so gaps are answer time plus think time
  Trace t = generate_conversation(p, 8);
  std::map<SessionId, size_t> last;
  double turns = double(t.size()) / p.sessions;
  double prompt_sum = 0, answer_sum = 0, think_sum = 0;
  size_t prompts = 0, thinks = 0;
  for (size_t r = 0; r < t.size(); ++r) {
    answer_sum += t.output_tokens[r];
    auto it = last.find(t.session[r]);
    if (it != last.end()) {
      size_t q = it->second;
      prompt_sum += t.prompt_tokens[r] - t.prompt_tokens[q] - t.output_tokens[q];
      ++prompts;
      think_sum += (t.time[r] - t.time[q]) / 1e6 - t.output_tokens[q] * p.decode_ms_per_token / 1e3;
      ++thinks;
    }
    last[t.session[r]] = r;
  }
  EXPECT_NEAR(turns, 4.0, 0.25);
  EXPECT_NEAR(answer_sum / t.size(), 50, 2.5);
  EXPECT_NEAR(prompt_sum / prompts, 40, 3);
  EXPECT_NEAR(think_sum / thinks, 100, 5);
  // Sessions arrive as a Poisson process at 10/s: the last first turn is near 1500 / 10 s.
  Time last_start = 0;
  for (size_t r = 0; r < t.size(); ++r)
    if (t.turn[r] == 1) last_start = std::max(last_start, t.time[r]);
  EXPECT_NEAR(last_start / 1e6, 150, 15);
}

// --- Zipf ------------------------------------------------------------------------------------

TEST(Zipf, CountsUniquenessAndSkew) {
  ZipfParams p;
  p.requests = 20000;
  p.prefixes = 200;
  p.alpha = 1.0;
  p.prefix_blocks = 5;
  p.suffix_blocks = 3;
  Trace t = generate_zipf(p, 2);
  EXPECT_TRUE(same_trace(t, generate_zipf(p, 2)));
  ASSERT_EQ(t.size(), 20000u);
  EXPECT_EQ(t.num_block_accesses(), 20000u * 8);
  std::map<BlockKey, size_t> by_prefix;
  for (size_t r = 0; r < t.size(); ++r) ++by_prefix[t.prompt(r)[0]];
  // Prefix blocks are shared by their documents, every suffix block is new.
  EXPECT_EQ(count_unique_blocks(t), by_prefix.size() * 5 + 20000 * 3);
  std::vector<size_t> counts;
  for (auto& [k, c] : by_prefix) counts.push_back(c);
  std::sort(counts.rbegin(), counts.rend());
  ZipfSampler z(200, 1.0);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_NEAR(double(counts[i]) / p.requests, z.probability(i), 0.01) << "rank " << i;
  // A flatter exponent spreads the accesses: the top prefix loses share.
  p.alpha = 0.3;
  Trace flat = generate_zipf(p, 2);
  std::map<BlockKey, size_t> flat_counts;
  for (size_t r = 0; r < flat.size(); ++r) ++flat_counts[flat.prompt(r)[0]];
  size_t flat_top = 0;
  for (auto& [k, c] : flat_counts) flat_top = std::max(flat_top, c);
  EXPECT_LT(flat_top * 3, counts[0]);
}

// --- By name ---------------------------------------------------------------------------------

// Parameters that ask for more than the machine holds, or for more requests than a trace can
// hold, or times past 2^62 us, are one ConfigError naming them before anything is allocated
// (they ended in an out-of-memory "internal error").
TEST(WorkloadGenerators, HugeParametersAreRefusedUpFront) {
  auto refusal = [](const std::string& kind, const std::string& params) {
    try {
      generate_workload(kind, params, 1);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(generated)");
  };
  EXPECT_NE(refusal("gsp", "groups=4000000000,prompts=4000000000")
                .find("groups=4000000000 x "
                      "prompts=4000000000"),
            std::string::npos);
  EXPECT_NE(refusal("gsp", "groups=60000,prompts=60000,lengths=100000").find("of memory"),
            std::string::npos);
  EXPECT_NE(refusal("conversation", "sessions=4000000000,turns=60").find("sessions=4000000000"),
            std::string::npos);
  EXPECT_NE(
      refusal("zipf", "requests=1,prefixes=1000000000,prefix_blocks=1000000").find("prefixes="),
      std::string::npos);
  EXPECT_NE(refusal("gsp", "groups=2,prompts=2,rate=1e-300").find("raise the rate"),
            std::string::npos);
  EXPECT_NE(refusal("zipf", "requests=10,rate=1e-300").find("raise the rate"), std::string::npos);
}

TEST(WorkloadGenerators, ByNameWithParams) {
  GspParams p;
  p.groups = 2;
  p.prompts_per_group = 3;
  p.order = GspOrder::kGrouped;
  p.lengths = {64, 128};
  EXPECT_TRUE(
      same_trace(generate_workload("gsp", "groups=2,prompts=3,order=grouped,lengths=64/128", 4),
                 generate_gsp(p, 4)));
  EXPECT_THROW(generate_workload("gsp", "group=2", 1), ConfigError);
  EXPECT_THROW(generate_workload("gsp", "order=sideways", 1), ConfigError);
  EXPECT_THROW(generate_workload("gsp", "lengths=64/x", 1), ConfigError);
  EXPECT_THROW(generate_workload("zipf", "alpha=-1", 1), ConfigError);
  EXPECT_THROW(generate_workload("conversation", "max_active=0", 1), ConfigError);
  EXPECT_THROW(generate_workload("nope", "", 1), ConfigError);
  for (auto& g : workload_generators())  // the defaults themselves parse
    EXPECT_NO_THROW(Params::parse("", g.params, g.name)) << g.name;
}

}  // namespace
}  // namespace kvpolicy
