// `kvpolicy recommend`: the policy to run at one capacity, chosen from a replay of the online
// policies on a trace (the app layer's grid) or from the rows of a finished compare, simulate or
// mrc run, and its ready-to-paste configuration in vLLM, SGLang and LMCache, with what each engine
// cannot express and why (docs/engines.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvpolicy/app/inputs.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/trace/result_field.h"

namespace kvpolicy::app {

struct RecommendOptions {
  TraceOptions trace;    // -t: a trace to replay (path empty when `results` is given)
  std::string results;   // --from: a compare/simulate/mrc --json file
  std::string capacity;  // -c: one capacity; with `results`, which of its capacities (if several)
  std::string among = "online";  // the candidates replayed on a trace
  std::string policy;            // --policy: force this spec instead of the best
  CostOptions cost;
  uint64_t seed = 1;
  unsigned jobs = 0;  // replays at once; 0 = every core
};

// One candidate's measured hit rate at the capacity.
struct RecommendCandidate {
  std::string policy;  // its spec, name[:params]
  double block_hit_rate = 0;
  bool offline = false;
};

// One engine's way of running the chosen policy, or, when the engine cannot run it with every
// request field it reads, the best candidate it can.
struct EngineConfig {
  std::string engine;          // vllm, sglang, lmcache
  std::string policy;          // what this engine's configuration runs
  double block_hit_rate = -1;  // that policy's in the replay; < 0 when not measured
  std::string support;         // how the engine runs `policy`: native, score, kvpolicy or cannot
  // How it runs the chosen policy: as `support`, or partial (without request fields it reads).
  std::string chosen_support;
  bool partial = false;     // runs, but without request fields the policy reads
  std::string missing;      // the request fields it would run without, in words
  std::string limit;        // why it cannot run the policy in full (not in the JSON: see `why`)
  std::string install;      // the install line ("" when it cannot)
  std::string config;       // the ready-to-paste configuration ("" when it cannot)
  std::string command;      // the engine's launch line with it (MODEL to fill in)
  std::string alternative;  // the kvpolicy-backend form when `config` is a simpler one, or ""
  std::string requires_version;  // the engine version the configuration needs, or ""
  std::string why;               // why it cannot, or what the engine changes against the replay
};

struct Recommendation {
  std::string source;  // "trace" or "results"
  std::string input;   // the file read
  std::string trace;   // the trace's name (its path as replayed)
  std::string policy;  // the spec chosen
  bool forced = false;
  bool randomized = false;
  size_t capacity_blocks = 0;
  double capacity_gb = 0;
  double capacity_share = -1;  // of the trace's unique blocks; < 0 when unknown
  uint32_t block_tokens = 0;
  double kv_bytes_per_block = 0;
  std::string cost_model;
  uint64_t block_accesses = 0;
  double block_hit_rate = 0, lru_hit_rate = 0;
  double margin_points = 0;        // (policy - lru) x 100
  double noise_points = 0;         // margins below this are noise (docs/engines.md)
  double seed_spread_points = -1;  // a randomized policy's spread over seeds; < 0 = not run
  bool within_noise = false;
  // Whether the trace's requests have several categories (types); unknown (true) from rows. A
  // field the trace does not vary is no loss where an engine does not pass it.
  bool varied_categories = true;
  std::vector<RecommendCandidate> candidates;  // best first
  std::vector<EngineConfig> engines;           // vllm, sglang, lmcache

  std::string text() const;     // as `kvpolicy recommend` prints it
  std::string to_json() const;  // one JSON object (docs/formats.md)
};

// Replays the candidates on the trace, or reads the rows of o.results, chooses and writes the
// engines' configurations. Throws ConfigError or InputError (naming file, line and field).
Recommendation run_recommend(const RecommendOptions& o);

// The chosen policy in each engine (recommend_engines.cc): r's policy, capacity and block size.
std::vector<EngineConfig> engine_configs(const Recommendation& r);

// docs/engines.md's capability matrix: one row per registered policy (default parameters), its
// support in each engine and, when it cannot, why (`kvpolicy recommend --matrix` prints it).
std::string engine_matrix_markdown();

// The noise rule: two standard errors of the difference of two hit rates over `accesses`
// independent block accesses, and at least 0.1 points; in points.
double hit_rate_noise_points(double a, double b, uint64_t accesses);

// The fields of recommend's object and of each engine's, declared once (docs/formats.md).
const std::vector<ResultFieldOf<Recommendation>>& recommend_fields();
const std::vector<ResultFieldOf<EngineConfig>>& engine_config_fields();

}  // namespace kvpolicy::app
