// SparseLengthsSum through the embedding cache, the LCR paper's DLRM benchmark (section 4): a
// query is a batch of samples; for each sample the rows of its lookups are gathered and summed.
// Rows come from the cache, misses from the backing store (then cached); a learned policy's
// predictions come from the oracle, the noisy oracle or the online GBM (KeyGbm, async as in the
// paper). Latency is the wall time of each query.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kvpolicy/core/access.h"
#include "kvpolicy/embed/embedding.h"
#include "kvpolicy/embed/set_cache.h"

namespace kvpolicy::embed {

enum class PredictorKind : uint8_t {
  kOracle,  // each key's true next access (offline)
  kNoisy,   // the oracle, each answer replaced with probability p by minus its true time
  kGbm,     // KeyGbm with four features (the paper's)
  kWeak,    // KeyGbm with one feature and one tree (the paper's robustness study)
};
PredictorKind parse_predictor(const std::string& name);  // oracle, noisy, gbm, weak
const char* predictor_name(PredictorKind k);

struct SlsOptions {
  size_t capacity = 0;  // rows
  SetPolicy policy = SetPolicy::kLru;
  PredictorKind predictor = PredictorKind::kGbm;
  double noise_p = 0;    // kNoisy's p
  bool async = true;     // kGbm / kWeak: a background task (false: inline, deterministic)
  uint32_t batch = 512;  // samples per query
  uint64_t seed = 1;
  // Called now and then with the share of queries done; may be empty.
  std::function<void(double)> progress = {};
};

struct SlsResult {
  std::string trace, policy, predictor, store;
  size_t capacity = 0;
  double cache_ratio = 0;  // capacity / distinct keys of the trace
  uint32_t batch = 0;
  uint32_t dim = 0;
  uint64_t queries = 0, samples = 0, lookups = 0;
  uint64_t unique_lookups = 0;  // after deduplication within each query
  uint64_t hits = 0;            // of the unique lookups
  double hit_rate = 0;          // hits / unique lookups
  double mean_latency_ms = 0, p50_latency_ms = 0, p99_latency_ms = 0;
  double throughput = 0;  // samples per second of query time
  double store_ms = 0;    // time in the backing store's fetches, summed
  double checksum = 0;    // sum of every output, to check against a direct computation
  PolicyStats stats;      // the cache's and the predictor's counters
  std::string to_json() const;
};

// Index of each lookup's next lookup of the same key (kNever-like: UINT64_MAX if none).
std::vector<uint64_t> next_lookup(const EmbeddingTrace& trace);

// Runs every query of the trace through a cache of options.capacity rows over `store`.
SlsResult run_sls(const EmbeddingTrace& trace, EmbeddingStore& store, const SlsOptions& options);

// The SLS outputs of one sample summed straight from the store, for checks: the sum of its
// lookups' rows, added in lookup order.
std::vector<float> direct_sls(const EmbeddingTrace& trace, size_t sample, EmbeddingStore& store);

}  // namespace kvpolicy::embed
