// The reuse predictor (predictor=reuse): its bounded tables stay bounded, it learns a planted
// pattern from labels that include the censored class, its compiled trees answer as XGBoost
// does, it is deterministic, and LARU with it beats LRU where the pattern decides the hits.
#include "kvpolicy/predict/reuse_predictor.h"

#include <gtest/gtest.h>

#include <map>
#include <unordered_map>

#include "kvpolicy/core/error.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy {
namespace {

double stat(const PolicyStats& s, const std::string& name) {
  for (auto& [k, v] : s)
    if (k == name) return v;
  ADD_FAILURE() << "no stat " << name;
  return 0;
}

TEST(GenerationalMap, StaysBoundedAndKeepsWhatIsInUse) {
  GenerationalMap<uint64_t> m(1000);
  bool found;
  for (uint64_t k = 1; k <= 20000; ++k) {
    m.get(k, &found) = k * 3;
    m.get(7, &found) = 21;  // touched every time: never forgotten
    ASSERT_LE(m.size(), m.bound());
  }
  ASSERT_NE(m.find(7), nullptr);
  EXPECT_EQ(*m.find(7), 21u);
  EXPECT_EQ(m.find(1), nullptr);  // untouched for many generations
  // The newest keys are all there with their values, moved across a generation or not.
  for (uint64_t k = 19800; k <= 20000; ++k) {
    ASSERT_NE(m.find(k), nullptr) << k;
    EXPECT_EQ(*m.find(k), k * 3);
  }
  EXPECT_GT(m.generations(), 10u);
}

// A trace where category 1 sessions repeat one 4-block prompt every ~30 s and category 0
// requests scan 8 fresh blocks every 0.5 s, never reused: 480 scan blocks arrive between two
// turns of a hot session, more than the cache below holds, so LRU loses every hot block.
Trace planted_trace(uint64_t seed) {
  Trace t;
  t.block_tokens = 16;
  Rng rng(seed);
  struct Event {
    Time at;
    int session;  // -1: scan
  };
  std::vector<Event> events;
  const int kHot = 40;
  const double kSeconds = 1500;
  for (int s = 0; s < kHot; ++s)
    for (double at = rng.uniform() * 30; at < kSeconds; at += 27 + 6 * rng.uniform())
      events.push_back({Time(at * 1e6), s});
  for (double at = 0; at < kSeconds; at += 0.5) events.push_back({Time(at * 1e6), -1});
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.at < b.at; });
  uint64_t next_scan = 1'000'000;
  std::vector<uint32_t> turns(kHot, 0);
  for (const Event& e : events) {
    std::vector<uint64_t> ids;
    if (e.session >= 0) {
      for (uint64_t i = 0; i < 4; ++i) ids.push_back(uint64_t(e.session) * 100 + i);
      t.add_request(e.at, ids, 64, 10, SessionId(e.session), ++turns[size_t(e.session)], 1);
    } else {
      for (int i = 0; i < 8; ++i) ids.push_back(next_scan++);
      t.add_request(e.at, ids, 128, 10, kNoSession, 1, 0);
    }
  }
  t.category_names = {"scan", "hot"};
  return t;
}

ReuseConfig planted_config() {
  ReuseConfig c;
  c.horizon_s = 60;
  c.sample = 1;
  c.first_fit = 500;
  c.key_table = 4096;
  return c;
}

// Feeds every access of the trace to the predictor, one node id per key (an infinite cache).
struct Feed {
  std::unordered_map<BlockKey, NodeId> ids;
  std::vector<Time> answers;  // the last request's predictions, in prompt order
  std::vector<Time> all;      // every request's
  void run(const Trace& t, ReusePredictor& p, size_t requests) {
    std::vector<NodeId> path;
    for (size_t r = 0; r < requests; ++r) {
      RequestView v = request_view(t, r);
      p.on_request_begin(v);
      AccessInfo info = AccessInfo::of_request(v);
      path.clear();
      for (uint32_t i = 0; i < v.blocks.size(); ++i) {
        auto [it, fresh] = ids.emplace(v.blocks[i], NodeId(ids.size()));
        info.position = i;
        info.access = v.first_access + i;
        info.kind = fresh ? AccessKind::kInserted : AccessKind::kReused;
        p.on_access(it->second, info);
        path.push_back(it->second);
      }
      answers.resize(path.size());
      p.predict(path, answers);
      all.insert(all.end(), answers.begin(), answers.end());
    }
  }
};

TEST(ReusePredictor, LearnsAPlantedPatternFromLabelsWithTheCensoredClass) {
  Trace t = planted_trace(3);
  ReusePredictor p(planted_config(), t.block_tokens);
  Feed feed;
  feed.run(t, p, t.size());
  // Scan blocks are never reused: their samples resolve as negatives when H runs out.
  EXPECT_GT(p.negatives_by_timeout(), 10000u);
  EXPECT_GT(p.positives(), 2000u);
  ASSERT_GT(p.version(), 0u);
  PolicyStats s = p.stats();
  // Out of sample (each answer came from a model that had not seen its label).
  EXPECT_GT(stat(s, "reuse_auc"), 0.95);
  // A hot block's reuse probability is high, a scan block's low.
  size_t hot_request = 0, scan_request = 0;
  while (t.category[hot_request] != 1) ++hot_request;
  while (t.category[scan_request] != 0) ++scan_request;
  NodeId hot = feed.ids.at(t.prompt(hot_request)[0]);
  NodeId scan = feed.ids.at(t.prompt(scan_request)[0]);
  float prob[2];
  float rows[2 * ReuseFeatures::kCount];
  std::copy(p.row(hot), p.row(hot) + ReuseFeatures::kCount, rows);
  std::copy(p.row(scan), p.row(scan) + ReuseFeatures::kCount, rows + ReuseFeatures::kCount);
  p.probabilities(rows, 2, prob);
  EXPECT_GT(prob[0], 0.8);
  EXPECT_LT(prob[1], 0.1);
  // The gains are shares of the model's total.
  double gain = 0;
  for (int f = 0; f < ReuseFeatures::kCount; ++f)
    for (auto& [k, v] : s)
      if (k == std::string("gain_") + ReuseFeatures::name(f)) gain += v;
  EXPECT_NEAR(gain, 1.0, 1e-6);
}

TEST(ReusePredictor, CompiledTreesAnswerAsXgboost) {
  Trace t = planted_trace(5);
  ReusePredictor p(planted_config(), t.block_tokens);
  Feed feed;
  feed.run(t, p, t.size());
  ASSERT_GT(p.version(), 0u);
  std::vector<float> rows;
  for (auto& [key, id] : feed.ids)
    rows.insert(rows.end(), p.row(id), p.row(id) + ReuseFeatures::kCount);
  size_t n = rows.size() / ReuseFeatures::kCount;
  std::vector<float> ours(n), theirs(n);
  p.probabilities(rows.data(), n, ours.data());
  p.xgboost_probabilities(rows.data(), n, theirs.data());
  double lo = 1, hi = 0;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_NEAR(ours[i], theirs[i], 1e-5) << "row " << i;
    lo = std::min<double>(lo, ours[i]);
    hi = std::max<double>(hi, ours[i]);
  }
  EXPECT_GT(hi - lo, 0.5);  // rows on both sides of the trees' splits were compared
}

TEST(ReusePredictor, IsDeterministicAndKeepsItsKeyTableBounded) {
  Trace t = planted_trace(7);
  ReuseConfig c = planted_config();
  c.key_table = 2048;  // far fewer than the trace's ~24,000 keys, more than 30 s of them
  ReusePredictor a(c, t.block_tokens), b(c, t.block_tokens);
  Feed fa, fb;
  fa.run(t, a, t.size());
  fb.run(t, b, t.size());
  EXPECT_LE(a.keys_tracked(), a.key_table_bound());
  EXPECT_GT(a.keys_tracked(), 0u);
  ASSERT_GT(a.version(), 0u);
  EXPECT_EQ(a.version(), b.version());
  EXPECT_EQ(fa.all, fb.all);
  EXPECT_GT(a.negatives_by_timeout(), 0u);
}

TEST(ReusePredictor, LaruWithItBeatsLruOnThePlantedPattern) {
  Trace t = planted_trace(11);
  Oracle oracle = compute_oracle(t);
  const size_t capacity = 300;  // holds the 160 hot blocks, not a 30 s scan
  ReplayResult lru = replay(t, &oracle, {"lru", ""}, capacity);
  const std::string params = "predictor=reuse,horizon=60,sample=1,first_fit=500,key_table=65536";
  ReplayResult laru = replay(t, &oracle, {"laru", params}, capacity);
  ReplayResult fpb = replay(t, &oracle, {"fpb", params}, capacity);
  EXPECT_LT(lru.block_hit_rate, 0.02);
  EXPECT_GT(laru.block_hit_rate, lru.block_hit_rate + 0.10);
  EXPECT_GT(fpb.block_hit_rate, lru.block_hit_rate + 0.10);
}

TEST(ReusePredictor, RejectsBadParameters) {
  PredictorContext ctx;
  for (const char* bad : {"predictor=reuse,load_model=a,save_model=b"}) {
    PredictorConfig c = predictor_config(Params::parse(bad, predictor_param_specs(), "test"));
    EXPECT_THROW(make_predictor(c, ctx), ConfigError) << bad;
  }
  PredictorConfig c = predictor_config(Params::parse(
      "predictor=reuse,load_model=/nonexistent/model.json", predictor_param_specs(), "test"));
  EXPECT_THROW(make_predictor(c, ctx), Error);
}

}  // namespace
}  // namespace kvpolicy
