// Trace characterization, the workload analysis of "KVCache Cache in the Wild" (section 3):
// how much an infinite cache reuses, how skewed and how fast the reuse is, per category, and
// how much capacity an ideal policy needs over time. Everything is computed from the trace
// alone (no cache), in one pass plus sorting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

struct CharacterizeOptions {
  // KV bytes per token, for capacities in GB. Default Llama-3.1-8B in fp16: 32 layers x 8 KV
  // heads x 128 dims x 2 (K and V) x 2 bytes = 131072 bytes (0.125 MiB).
  double kv_bytes_per_token = 131072;
  uint32_t turn_buckets = 5;     // category = request type x turn bucket 1, 2, .., n+
  size_t curve_points = 200;     // points of each CDF / curve in the result
  size_t capacity_points = 400;  // time buckets of the capacity-over-time curve
};

// An exponential fit of a sample of reuse times by maximum likelihood (rate = 1 / mean), with
// the Kolmogorov-Smirnov distance between the sample's CDF and the fitted one.
struct ExponentialFit {
  uint64_t samples = 0;
  double mean_s = 0;
  double rate_per_s = 0;  // 0 when there is no sample
  double ks = 0;          // sup |F_sample(x) - (1 - e^{-rate x})|, in [0, 1]
};

struct Quantiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// A CDF as points (x, share of the sample <= x).
struct CdfPoint {
  double x = 0;
  double cdf = 0;
  double fitted = 0;  // the exponential fit's CDF at x, where there is one
};

// One category = request type x turn bucket, or "all".
struct CategoryStats {
  std::string name;  // "text-1", "text-5+", "all"
  uint64_t requests = 0;
  uint64_t block_accesses = 0;  // instances: each is reused later or not
  uint64_t reused = 0;          // accesses whose block is accessed again later
  uint64_t hits = 0;            // block hits of this category's requests (infinite cache)
  double reuse_share = 0;       // reused / block_accesses (the WA policy's pi)
  Quantiles reuse_time_s;       // time from an access to the next access of the same block
  ExponentialFit fit;
  std::vector<CdfPoint> reuse_cdf;  // at log-spaced times, with the fitted CDF
};

struct Characterization {
  std::string trace;
  uint32_t block_tokens = 0;
  double kv_bytes_per_token = 0;
  uint64_t requests = 0;
  uint64_t block_accesses = 0;
  uint64_t unique_blocks = 0;
  uint64_t prompt_tokens = 0;
  double duration_s = 0;
  bool has_sessions = false;  // sessions known (given or inferred)

  // Infinite cache: a block hits if its key was seen before (prefix closure makes the hits a
  // prefix of every prompt). Token hits are capped at the prompt's length.
  double ideal_hit_rate = 0;
  double ideal_token_hit_rate = 0;

  // Skew: blocks sorted by reuses (accesses - 1), most reused first. top10 = share of all
  // reuses that the top 10 % of unique blocks account for; curve = (share of blocks, share of
  // reuses), increasing.
  double top10_reuse_share = 0;
  double reused_block_share = 0;  // unique blocks reused at least once / unique blocks
  std::vector<std::pair<double, double>> skew_curve;

  // Users (when the trace has more than one): hits of each user's requests, and hits whose
  // block was last accessed by another user.
  uint64_t users = 0;
  double top10_user_hit_share = 0;
  double cross_user_hit_share = 0;

  // Single-turn (turn 1) vs multi-turn (turn >= 2) requests.
  uint64_t single_turn_requests = 0, multi_turn_requests = 0;
  uint64_t single_turn_hits = 0, multi_turn_hits = 0;  // block hits, infinite cache
  double multi_turn_hit_share = 0;                     // multi / (single + multi)
  uint64_t sessions = 0;
  Quantiles turns_per_session;

  // Reuse time per category (types x turn buckets, non-empty ones) and over all accesses.
  CategoryStats all;
  std::vector<CategoryStats> categories;
  // Per request type (all turns): share of requests, multi-turn share, share of hits.
  struct TypeStats {
    std::string name;
    double request_share = 0, multi_turn_share = 0, hit_share = 0;
  };
  std::vector<TypeStats> types;

  // Lifespan of a block: first access to last access, over blocks reused at least once.
  Quantiles lifespan_s;
  std::vector<CdfPoint> lifespan_cdf;

  // Capacity an ideal policy needs: after each request, the blocks seen so far that will be
  // accessed again (first access <= now < last access). Per time bucket, the maximum.
  uint64_t peak_live_blocks = 0;
  double peak_live_gb = 0;
  double mean_live_blocks = 0;  // over requests
  struct CapacityPoint {
    double time_s = 0;
    uint64_t live_blocks = 0;
    double live_gb = 0;
  };
  std::vector<CapacityPoint> capacity;
};

// A category's name: "TYPE-B" for request type TYPE and turn bucket B (1..n-1, or n+), or
// "turn B" when the trace has no request types.
std::string category_name(const Trace& trace, CategoryId type, uint32_t turn,
                          uint32_t turn_buckets);

Characterization characterize(const Trace& trace, const CharacterizeOptions& options = {});

// One JSON object with every number and curve.
std::string to_json(const Characterization& c);
// A short human summary (several lines).
std::string summary(const Characterization& c);
// CSV files into `dir` (created if missing): summary.csv, categories.csv, reuse_cdf.csv,
// lifespan_cdf.csv, skew.csv, capacity.csv, types.csv. Throws ConfigError if not writable.
void write_csv(const Characterization& c, const std::string& dir);

}  // namespace kvpolicy
