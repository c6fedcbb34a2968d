#include "kvpolicy/embed/sls.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <unordered_map>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/core/percentile.h"
#include "kvpolicy/predict/key_gbm.h"

namespace kvpolicy::embed {

PredictorKind parse_predictor(const std::string& name) {
  for (PredictorKind k :
       {PredictorKind::kOracle, PredictorKind::kNoisy, PredictorKind::kGbm, PredictorKind::kWeak})
    if (name == predictor_name(k)) return k;
  throw ConfigError("embedding predictor '" + name + "': expected oracle, noisy, gbm or weak");
}

const char* predictor_name(PredictorKind k) {
  switch (k) {
    case PredictorKind::kOracle:
      return "oracle";
    case PredictorKind::kNoisy:
      return "noisy";
    case PredictorKind::kGbm:
      return "gbm";
    case PredictorKind::kWeak:
      return "weak";
  }
  return "?";
}

std::vector<uint64_t> next_lookup(const EmbeddingTrace& trace) {
  std::vector<uint64_t> next(trace.lookups(), std::numeric_limits<uint64_t>::max());
  std::unordered_map<EmbKey, uint64_t> later;
  later.reserve(trace.lookups() / 4);
  for (size_t i = trace.lookups(); i-- > 0;) {
    auto [it, fresh] = later.try_emplace(trace.keys[i], i);
    if (!fresh) {
      next[i] = it->second;
      it->second = i;
    }
  }
  return next;
}

std::vector<float> direct_sls(const EmbeddingTrace& trace, size_t sample, EmbeddingStore& store) {
  auto keys = trace.sample(sample);
  std::vector<float> rows(keys.size() * store.dim()), out(store.dim(), 0.0f);
  store.fetch(keys, rows);
  for (size_t j = 0; j < keys.size(); ++j)
    for (uint32_t d = 0; d < store.dim(); ++d) out[d] += rows[j * store.dim() + d];
  return out;
}

namespace {

// out += row, dim floats: the pooling loop, four floats per instruction (SSE, in every x86-64).
// GCC 12 at -O2 leaves the plain loop scalar (its cheap cost model will not add an epilogue),
// so the vector type is spelt out; each float is still one addition, so sums stay bit-exact.
void add_row(float* __restrict out, const float* __restrict row, uint32_t dim) {
  using f4 = float __attribute__((vector_size(16)));
  uint32_t d = 0;
  for (; d + 4 <= dim; d += 4) {
    f4 a, b;
    std::memcpy(&a, out + d, sizeof a);
    std::memcpy(&b, row + d, sizeof b);
    a += b;
    std::memcpy(out + d, &a, sizeof a);
  }
  for (; d < dim; ++d) out[d] += row[d];
}

// How well answers rank the truth: the share of pairs (with distinct answers and distinct true
// intervals, each from the time it was asked) that the answers order as the truth does, over
// random pairs; 0.5 is chance.
double concordance(const std::vector<std::pair<double, double>>& v, uint64_t seed) {
  if (v.size() < 2) return 0.5;
  uint64_t agree = 0, total = 0, x = seed;
  for (int i = 0; i < 200000; ++i) {
    x = mix64(x + 1);
    const auto& a = v[x % v.size()];
    x = mix64(x + 1);
    const auto& b = v[x % v.size()];
    if (a.first == b.first || a.second == b.second) continue;
    agree += (a.first < b.first) == (a.second < b.second);
    ++total;
  }
  return total ? double(agree) / double(total) : 0.5;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

SlsResult run_sls(const EmbeddingTrace& trace, EmbeddingStore& store, const SlsOptions& o) {
  if (o.batch == 0) throw ConfigError("sls: batch must be at least one sample");
  if (!(o.noise_p >= 0 && o.noise_p <= 1)) throw ConfigError("sls: noise p must be in [0, 1]");
  const uint32_t dim = store.dim();
  SetCacheOptions co;
  co.capacity = o.capacity;
  co.dim = dim;
  co.policy = o.policy;
  SetAssociativeCache cache(co);
  const bool learned = is_learned(o.policy);
  const bool oracle =
      learned && (o.predictor == PredictorKind::kOracle || o.predictor == PredictorKind::kNoisy);
  // The oracles answer from the trace's future; the GBM's answers are scored against it.
  std::vector<uint64_t> next = learned ? next_lookup(trace) : std::vector<uint64_t>{};
  // (predicted, true) interval to the next access from when it was asked, for a sample of keys.
  std::vector<std::pair<double, double>> scored;
  std::unique_ptr<KeyModel> gbm;
  // GBM: each key's last lookup and the time, when last asked (to score the answer).
  std::unordered_map<EmbKey, std::pair<uint64_t, double>> asked;
  if (learned && !oracle) {
    KeyGbmConfig g;
    g.async = o.async;
    g.seed = o.seed;
    if (o.predictor == PredictorKind::kWeak) g.features = 1, g.trees = 1;
    gbm = make_key_gbm(g);
  }
  std::mt19937_64 rng(o.seed);

  SlsResult res;
  res.trace = trace.name;
  res.policy = set_policy_name(o.policy);
  res.predictor = learned ? predictor_name(o.predictor) : "-";
  res.store = store.name();
  res.capacity = cache.capacity();
  size_t unique_keys = count_unique_keys(trace);
  res.cache_ratio = unique_keys ? double(cache.capacity()) / double(unique_keys) : 0;
  res.batch = o.batch;
  res.dim = dim;

  std::unordered_map<EmbKey, uint32_t> slot;  // key -> its row in this query's buffer
  std::vector<EmbKey> unique, missed;
  std::vector<uint64_t> last_lookup;  // per unique key: its last lookup in this query
  std::vector<uint32_t> miss_slot;
  std::vector<float> buffer, fetched, out(dim);
  std::vector<double> latency;
  const size_t samples = trace.samples();
  for (size_t first = 0; first < samples; first += o.batch) {
    size_t end = std::min<size_t>(samples, first + o.batch);
    auto t0 = std::chrono::steady_clock::now();
    double now = double(trace.sample_offset[first]);  // logical time: the query's first lookup
    // Deduplicate the query's keys, as HugeCTR does before it probes the cache.
    slot.clear();
    unique.clear();
    last_lookup.clear();
    for (uint64_t i = trace.sample_offset[first]; i < trace.sample_offset[end]; ++i) {
      auto [it, fresh] = slot.try_emplace(trace.keys[i], uint32_t(unique.size()));
      if (fresh) {
        unique.push_back(trace.keys[i]);
        last_lookup.push_back(i);
      } else {
        last_lookup[it->second] = i;
      }
    }
    // The oracles' answers, told as each key is used (before a later miss of this query picks
    // a victim in its set).
    auto oracle_answer = [&](uint32_t u) {
      uint64_t n = next[last_lookup[u]];
      double p =
          n == std::numeric_limits<uint64_t>::max() ? SetAssociativeCache::kNever : double(n);
      if (o.predictor == PredictorKind::kNoisy && double(rng() >> 11) * 0x1.0p-53 < o.noise_p)
        p = -p;  // the adversary: the key needed soonest looks furthest
      return p;
    };
    // Gather: hits copied out of the cache (an insert below may take their slot), misses noted.
    buffer.resize(unique.size() * dim);
    missed.clear();
    miss_slot.clear();
    for (uint32_t u = 0; u < unique.size(); ++u) {
      if (const float* row = cache.find(unique[u], now)) {
        std::copy_n(row, dim, &buffer[size_t(u) * dim]);
        if (oracle) cache.set_prediction(unique[u], oracle_answer(u));
      } else {
        missed.push_back(unique[u]);
        miss_slot.push_back(u);
      }
    }
    if (!missed.empty()) {
      fetched.resize(missed.size() * dim);
      auto ts = std::chrono::steady_clock::now();
      store.fetch(missed, fetched);
      res.store_ms += ms_since(ts);
      for (size_t j = 0; j < missed.size(); ++j) {
        std::copy_n(&fetched[j * dim], dim, &buffer[size_t(miss_slot[j]) * dim]);
        cache.insert(missed[j], std::span<const float>(&fetched[j * dim], dim), now);
        if (oracle) cache.set_prediction(missed[j], oracle_answer(miss_slot[j]));
      }
    }
    // The learned predictor: answers of its last task applied, this query's keys asked for.
    if (gbm) {
      // Answers applied, and a sample of them scored against when each key really came back.
      auto apply = [&] {
        for (auto& [key, p] : gbm->take_results()) {
          cache.set_prediction(key, p);
          if (auto it = asked.find(key); it != asked.end() && scored.size() < 200000) {
            uint64_t n = next[it->second.first];
            double t = it->second.second;
            scored.emplace_back(p - t, n == std::numeric_limits<uint64_t>::max() ? 1e300 : n - t);
          }
        }
      };
      apply();                                      // the previous task's (async)
      for (uint32_t u = 0; u < unique.size(); ++u)  // scored: one key in 8
        if ((mix64(unique[u]) & 7) == 0) asked[unique[u]] = {last_lookup[u], now};
      gbm->observe(unique, now);
      gbm->request(unique, now);
      if (!o.async) apply();
    }
    // Pool: each sample's rows summed in lookup order.
    for (size_t s = first; s < end; ++s) {
      std::fill(out.begin(), out.end(), 0.0f);
      for (EmbKey k : trace.sample(s)) add_row(out.data(), &buffer[size_t(slot[k]) * dim], dim);
      double sum = 0;
      for (float v : out) sum += v;
      res.checksum += sum;
    }
    latency.push_back(ms_since(t0));
    res.unique_lookups += unique.size();
    res.hits += unique.size() - missed.size();
    if (o.progress && latency.size() % 64 == 0) o.progress(double(end) / double(samples));
  }
  res.queries = latency.size();
  res.samples = samples;
  res.lookups = trace.lookups();
  res.hit_rate = res.unique_lookups ? double(res.hits) / double(res.unique_lookups) : 0;
  double total = 0;
  for (double l : latency) total += l;
  res.mean_latency_ms = latency.empty() ? 0 : total / double(latency.size());
  std::vector<double> sorted = latency;
  std::sort(sorted.begin(), sorted.end());
  res.p50_latency_ms = percentile_nearest_rank(sorted, 50);
  res.p99_latency_ms = percentile_nearest_rank(sorted, 99);
  res.throughput = total > 0 ? double(samples) / (total / 1e3) : 0;
  res.stats = cache.stats().as_policy_stats();
  if (gbm) res.stats.emplace_back("rank_concordance", concordance(scored, o.seed));
  if (gbm)
    for (auto& s : gbm->stats()) res.stats.push_back(s);
  return res;
}

std::string SlsResult::to_json() const {
  JsonObject j;
  j.add("mode", "sls").add("trace", trace).add("policy", policy).add("predictor", predictor);
  j.add("store", store).add("capacity", capacity).add("cache_ratio", cache_ratio, 6);
  j.add("batch", batch).add("dim", dim).add("queries", queries).add("samples", samples);
  j.add("lookups", lookups).add("unique_lookups", unique_lookups).add("hits", hits);
  j.add("hit_rate", hit_rate, 6).add("mean_latency_ms", mean_latency_ms, 4);
  j.add("p50_latency_ms", p50_latency_ms, 4).add("p99_latency_ms", p99_latency_ms, 4);
  j.add("throughput", throughput, 1).add("store_ms", store_ms, 3).add("checksum", checksum, 6);
  for (auto& [k, v] : stats) j.add(k, v);
  return j.str();
}

}  // namespace kvpolicy::embed
