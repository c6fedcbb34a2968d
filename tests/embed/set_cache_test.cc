// The set-associative embedding cache against references on one set (a 64-row fully
// associative cache): LRU against a list, FPB and LARU with perfect predictions against
// Belady's misses, HF with one candidate against LRU; LARU's robustness next to FPB's collapse
// under adversarial predictions; SLS outputs against a direct sum.
#include "kvpolicy/embed/set_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <list>
#include <map>
#include <set>
#include <vector>

#include "kvpolicy/core/error.h"
#include "kvpolicy/embed/sls.h"

namespace kvpolicy::embed {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Keys drawn so that some recur soon and most later: Zipf-like by squaring a uniform draw.
std::vector<EmbKey> skewed_keys(size_t n, uint64_t universe, uint64_t seed) {
  std::vector<EmbKey> keys(n);
  uint64_t x = seed;
  for (auto& k : keys) {
    x = mix64(x + 0x9e3779b97f4a7c15ULL);
    double u = double(x >> 11) * 0x1.0p-53;
    k = static_cast<EmbKey>(u * u * u * double(universe));
  }
  return keys;
}

std::vector<double> next_use(const std::vector<EmbKey>& keys) {
  std::vector<double> next(keys.size(), kInf);
  std::map<EmbKey, size_t> later;
  for (size_t i = keys.size(); i-- > 0;) {
    auto it = later.find(keys[i]);
    if (it != later.end()) next[i] = double(it->second);
    later[keys[i]] = i;
  }
  return next;
}

// Misses of one 64-row cache run by `policy`, each access's prediction set from `predict`.
template <typename Predict>
uint64_t misses_of(SetPolicy policy, const std::vector<EmbKey>& keys, Predict predict,
                   uint32_t hf = 4, uint32_t filter_bits = 8192) {
  SetAssociativeCache cache({.capacity = 64,
                             .dim = 1,
                             .policy = policy,
                             .hf_candidates = hf,
                             .laru_filter_bits = filter_bits});
  std::vector<float> row(1, 0.0f);
  uint64_t misses = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!cache.find(keys[i], double(i))) {
      ++misses;
      cache.insert(keys[i], row, double(i));
    }
    cache.set_prediction(keys[i], predict(i));
  }
  return misses;
}

uint64_t lru_reference(const std::vector<EmbKey>& keys, size_t k) {
  std::list<EmbKey> order;  // most recent first
  uint64_t misses = 0;
  for (EmbKey key : keys) {
    auto it = std::find(order.begin(), order.end(), key);
    if (it != order.end()) {
      order.erase(it);
    } else {
      ++misses;
      if (order.size() == k) order.pop_back();
    }
    order.push_front(key);
  }
  return misses;
}

uint64_t belady_reference(const std::vector<EmbKey>& keys, size_t k) {
  std::vector<double> next = next_use(keys);
  std::map<EmbKey, double> cached;  // key -> its next use
  uint64_t misses = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!cached.count(keys[i])) {
      ++misses;
      if (cached.size() == k) {
        auto victim = std::max_element(cached.begin(), cached.end(),
                                       [](auto& a, auto& b) { return a.second < b.second; });
        cached.erase(victim);
      }
    }
    cached[keys[i]] = next[i];
  }
  return misses;
}

TEST(SetCache, LruIsLruPerSet) {
  auto keys = skewed_keys(20000, 400, 1);
  EXPECT_EQ(misses_of(SetPolicy::kLru, keys, [](size_t) { return 0.0; }), lru_reference(keys, 64));
}

TEST(SetCache, HfWithOneCandidateIsLru) {
  auto keys = skewed_keys(20000, 400, 2);
  auto next = next_use(keys);
  EXPECT_EQ(misses_of(
                SetPolicy::kHf, keys, [&](size_t i) { return next[i]; }, 1),
            lru_reference(keys, 64));
}

// With perfect predictions FPB is Belady, and LARU is too (1-consistency) when its filter of
// prediction-evicted keys has no false positives; the paper's 8192 bits per set cost little.
TEST(SetCache, PerfectPredictionsGiveBeladysMisses) {
  for (uint64_t seed : {3, 4, 5}) {
    auto keys = skewed_keys(20000, 300, seed);
    auto next = next_use(keys);
    uint64_t opt = belady_reference(keys, 64);
    auto oracle = [&](size_t i) { return next[i]; };
    EXPECT_EQ(misses_of(SetPolicy::kFpb, keys, oracle), opt);
    EXPECT_EQ(misses_of(SetPolicy::kLaru, keys, oracle, 4, 1u << 20), opt);
    uint64_t paper = misses_of(SetPolicy::kLaru, keys, oracle);
    EXPECT_GE(paper, opt);
    EXPECT_LT(double(paper), 1.05 * double(opt));
    EXPECT_LT(opt, lru_reference(keys, 64));
  }
}

// The adversary (the true next use negated: the key needed soonest looks furthest) makes FPB
// collapse; LARU stays near LRU (O(k)-robust), as the paper's Figure 10 shows.
TEST(SetCache, AdversarialPredictionsSinkFpbNotLaru) {
  auto keys = skewed_keys(40000, 300, 6);
  auto next = next_use(keys);
  auto adversary = [&](size_t i) { return -next[i]; };
  double lru = double(lru_reference(keys, 64));
  double fpb = double(misses_of(SetPolicy::kFpb, keys, adversary));
  double laru = double(misses_of(SetPolicy::kLaru, keys, adversary));
  EXPECT_GT(fpb, 1.5 * lru);
  EXPECT_LT(laru, 1.15 * lru);
}

TEST(SetCache, LaruTrustsLessAfterPredictionInducedMisses) {
  auto keys = skewed_keys(20000, 300, 7);
  auto next = next_use(keys);
  SetAssociativeCache cache({.capacity = 64, .dim = 1, .policy = SetPolicy::kLaru});
  std::vector<float> row(1, 0.0f);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!cache.find(keys[i], double(i))) cache.insert(keys[i], row, double(i));
    cache.set_prediction(keys[i], -next[i]);
  }
  EXPECT_GT(cache.stats().prediction_misses, 0u);
  EXPECT_GT(cache.stats().phases, 1u);
  EXPECT_LT(cache.stats().prediction_evictions, cache.stats().evictions);
}

TEST(SetCache, SetsAndRowsAndErrors) {
  SetAssociativeCache cache({.capacity = 1000, .dim = 4, .policy = SetPolicy::kLru});
  EXPECT_EQ(cache.capacity(), 1024u) << "16 whole sets of 64";
  std::vector<float> row = {1, 2, 3, 4};
  cache.insert(make_key(3, 77), row, 0);
  const float* got = cache.find(make_key(3, 77), 1);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(std::vector<float>(got, got + 4), row);
  EXPECT_EQ(cache.find(make_key(4, 77), 1), nullptr);
  EXPECT_THROW(cache.insert(make_key(5, 1), std::vector<float>(3), 2), Error);
  EXPECT_THROW(SetAssociativeCache({.capacity = 0}), ConfigError);
  EXPECT_THROW(parse_set_policy("mru"), ConfigError);
}

// A store of synthetic rows for the SLS tests.
class SyntheticStore final : public EmbeddingStore {
 public:
  uint32_t dim() const override { return 16; }
  void fetch(std::span<const EmbKey> keys, std::span<float> out) override {
    for (size_t i = 0; i < keys.size(); ++i) synthetic_row(keys[i], out.subspan(i * 16, 16));
    fetches += keys.size();
  }
  std::string name() const override { return "synthetic"; }
  uint64_t fetches = 0;
};

EmbeddingTrace small_trace() {
  EmbeddingTrace t;
  t.name = "test";
  auto keys = skewed_keys(30000, 3000, 9);
  for (size_t s = 0; s * 30 < keys.size(); ++s)
    t.add_sample(Time(s),
                 std::span(keys).subspan(s * 30, std::min<size_t>(30, keys.size() - s * 30)));
  return t;
}

TEST(Sls, OutputsEqualADirectSumForEveryPolicy) {
  EmbeddingTrace trace = small_trace();
  SyntheticStore direct_store;
  double want = 0;
  for (size_t s = 0; s < trace.samples(); ++s)
    for (float v : direct_sls(trace, s, direct_store)) want += v;
  for (SetPolicy p : {SetPolicy::kLru, SetPolicy::kFpb, SetPolicy::kHf, SetPolicy::kLaru}) {
    for (PredictorKind k : {PredictorKind::kOracle, PredictorKind::kGbm}) {
      SyntheticStore store;
      SlsResult r =
          run_sls(trace, store,
                  {.capacity = 256, .policy = p, .predictor = k, .async = false, .batch = 64});
      EXPECT_EQ(r.checksum, want) << set_policy_name(p) << " " << predictor_name(k);
      EXPECT_EQ(store.fetches, r.unique_lookups - r.hits) << "every miss fetched once";
      EXPECT_GT(r.hits, 0u);
    }
  }
}

TEST(Sls, OracleLaruBeatsLruAndSyncRunsRepeat) {
  EmbeddingTrace trace = small_trace();
  SyntheticStore a, b, c;
  SlsOptions o{.capacity = 256, .policy = SetPolicy::kLru, .batch = 64};
  SlsResult lru = run_sls(trace, a, o);
  o.policy = SetPolicy::kLaru;
  o.predictor = PredictorKind::kOracle;
  SlsResult laru = run_sls(trace, b, o);
  EXPECT_GT(laru.hits, lru.hits);
  o.predictor = PredictorKind::kGbm;
  o.async = false;
  SlsResult g1 = run_sls(trace, c, o);
  SyntheticStore d;
  SlsResult g2 = run_sls(trace, d, o);
  EXPECT_EQ(g1.hits, g2.hits) << "sync mode is deterministic";
}

}  // namespace
}  // namespace kvpolicy::embed
