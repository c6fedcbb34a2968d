// Synthetic workload generators: GSP (shared-prefix groups), multi-turn conversations, and a
// Zipf prefix workload for speed tests. Each is deterministic for a seed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kvpolicy/core/params.h"
#include "kvpolicy/core/types.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

// A small seeded generator with its own distributions. std::*_distribution differ between
// standard libraries; these do not, so a seed names the same trace everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {  // splitmix64
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix64(state_);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }      // bias < n / 2^64
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }
  double normal() {  // Box-Muller, one value per call (simple beats fast here)
    double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  }
  // Log-normal with the given mean and sigma of the underlying normal.
  double lognormal_mean(double mean, double sigma) {
    return mean * std::exp(sigma * normal() - 0.5 * sigma * sigma);
  }
  // Geometric on {1, 2, ...} with the given mean (>= 1).
  uint32_t geometric(double mean) {
    if (mean <= 1.0) return 1;
    double p = 1.0 / mean;
    double k = std::floor(std::log1p(-uniform()) / std::log1p(-p));
    return 1 + static_cast<uint32_t>(std::min(k, 4e9));  // a huge mean must not overflow
  }

 private:
  uint64_t state_;
};

// Zipf(alpha) over ranks 0..n-1: P(i) proportional to 1 / (i + 1)^alpha. O(log n) per draw.
class ZipfSampler {
 public:
  ZipfSampler(size_t n, double alpha);
  size_t operator()(Rng& rng) const;
  double probability(size_t i) const { return cdf_[i] - (i ? cdf_[i - 1] : 0.0); }

 private:
  std::vector<double> cdf_;
};

// Raw id of a block from its tokens (add_request chains it with the prefix).
uint64_t hash_tokens(const uint32_t* tokens, size_t count);

// --- GSP: SGLang's generated-shared-prefix benchmark with KVRouting's defaults -------------
enum class GspOrder { kRandom, kRoundRobin, kGrouped };

struct GspParams {
  uint32_t groups = 128;
  uint32_t prompts_per_group = 32;
  // Group g's total prompt length is lengths[g % lengths.size()] tokens.
  std::vector<uint32_t> lengths = {512, 1024, 2048, 4096, 8192};
  double shared_fraction = 0.5;  // S_g = round(shared_fraction * L_g) shared prefix tokens
  uint32_t output_tokens = 4;
  double rate = 12.0;  // Poisson arrivals, requests per second
  // random: a uniform shuffle; round_robin: for each prompt index i, for each group g, (g, i)
  // (every group's prefix once per cycle, LRU's worst case); grouped: a group's prompts together.
  GspOrder order = GspOrder::kRandom;
  uint32_t block_tokens = 16;
};

// Requests carry session = group, turn = 1 + the group's earlier requests, category 0.
// Tokens are random 32-bit values; a group's shared prefix tokens are drawn once, so its full
// prefix blocks get identical ids in every prompt of the group; questions are fresh per prompt.
// A prompt has ceil(L_g / block_tokens) blocks; a partial last block is hashed from its tokens.
Trace generate_gsp(const GspParams& p, uint64_t seed);
std::vector<ParamSpec> gsp_param_specs();
GspParams gsp_params(const Params& params);  // throws ConfigError on bad values

// --- Conversation: synthetic multi-turn chat ------------------------------------------------
struct ConversationParams {
  uint32_t sessions = 1000;          // conversations in the trace
  double session_rate = 1.0;         // Poisson arrivals of new conversations, per second
  uint32_t max_active = 200;         // at most this many conversations active (LPC's N_conv)
  uint32_t system_prompts = 16;      // shared system-prompt pool
  double system_alpha = 1.0;         // Zipf popularity of the pool
  double system_tokens_mean = 800;   // pool entries' lengths, log-normal
  double system_tokens_sigma = 0.5;  //
  double turns_mean = 4;             // turns per conversation, geometric on {1, 2, ...}
  uint32_t max_turns = 64;           // cap on the geometric tail
  double prompt_tokens_mean = 200;   // each user prompt, log-normal
  double prompt_tokens_sigma = 1.0;  //
  double answer_tokens_mean = 300;   // each answer, log-normal
  double answer_tokens_sigma = 0.8;  //
  double think_mean_s = 100;         // exponential gap after an answer (LPC's lambda_chat)
  double decode_ms_per_token = 20;   // an answer takes output tokens x this before the gap
  uint32_t block_tokens = 16;
};

// A conversation is active from its first turn's arrival until its last answer ends; one that
// arrives while max_active are active starts when the earliest active one ends. Turn k's prompt
// is system prompt + every earlier prompt and answer + a new prompt, so turn k+1 begins with all
// full blocks of turn k's prompt and answer. Records session (0-based, in arrival order), turn
// (1-based) and category 0; prompt_tokens counts the whole context.
Trace generate_conversation(const ConversationParams& p, uint64_t seed);
std::vector<ParamSpec> conversation_param_specs();
ConversationParams conversation_params(const Params& params);

// --- Agent: tool-using agent sessions -------------------------------------------------------
struct AgentParams {
  uint32_t sessions = 500;           // agent sessions in the trace
  double session_rate = 0.5;         // Poisson arrivals of sessions, per second
  uint32_t prefixes = 8;             // shared system+tool prefixes (agent types)
  double prefix_alpha = 1.0;         // Zipf popularity of the prefixes
  double prefix_tokens_mean = 6000;  // their lengths, log-normal
  double prefix_tokens_sigma = 0.3;  //
  double turns_mean = 10;            // turns per session, geometric on {1, 2, ...}
  uint32_t max_turns = 100;          //
  double task_tokens_mean = 300;     // the first turn's task, log-normal
  double task_tokens_sigma = 0.8;    //
  double tool_tokens_mean = 600;     // each tool's output, appended to the next turn's prompt
  double tool_tokens_sigma = 1.0;    //
  double call_tokens_mean = 120;     // each answer (a tool call), log-normal
  double call_tokens_sigma = 0.6;    //
  // The pause between an answer and the next turn (the tool runs): log-normal with median
  // pause_median_s and sigma pause_sigma, or with probability long_pause_share from the long
  // distribution (a slow tool, a human in the loop).
  double pause_median_s = 3;
  double pause_sigma = 1.0;
  double long_pause_share = 0.1;
  double long_pause_median_s = 120;
  double long_pause_sigma = 0.5;
  double decode_ms_per_token = 20;  // an answer takes call tokens x this before the pause
  uint32_t block_tokens = 16;

  // The pauses' mean, seconds (18.0 s with the defaults).
  double mean_pause_s() const;
  // The expected share of prompt tokens in the shared prefix, over a trace: with T turns a
  // session (geometric, so E[N(N-1)/2] = T^2 - T), P T / (T (P + task) + (T^2 - T)(call + tool)),
  // P the prefix length (0.47 with the defaults).
  double prefix_share() const;
  double draw_pause_s(Rng& rng) const;
};

// Session s (0-based, in arrival order) is one agent: turn 1's prompt is its prefix (Zipf-chosen
// among `prefixes`) and a task; turn k+1's prompt is turn k's prompt, its answer and a tool's
// output, sent after the answer's decode time and a pause. Turns are recorded as sessions' turns,
// category 0; prompt_tokens counts the whole context. Every request of a prefix begins with its
// full blocks, shared with other sessions (the system-prompt hint rule finds them).
Trace generate_agent(const AgentParams& p, uint64_t seed);
std::vector<ParamSpec> agent_param_specs();
AgentParams agent_params(const Params& params);

// --- Zipf prefix workload for speed tests ---------------------------------------------------
struct ZipfParams {
  uint64_t requests = 100000;
  uint32_t prefixes = 10000;  // documents, each prefix_blocks long
  double alpha = 0.9;         // Zipf popularity; prefix 0 is the most popular
  uint32_t prefix_blocks = 16;
  uint32_t suffix_blocks = 4;  // unique blocks after the prefix in every request
  double rate = 1000;          // requests per second, evenly spaced
  uint32_t block_tokens = 16;
};

// Request r = prefix d ~ Zipf + suffix_blocks blocks unique to r. No sessions.
// Block accesses = requests x (prefix_blocks + suffix_blocks).
Trace generate_zipf(const ZipfParams& p, uint64_t seed);
// The same requests one at a time (time, chained keys, prompt tokens; output tokens are 1), so a
// trace too large to hold can be written as it is made (`trace generate --kind zipf`).
using ZipfSink = std::function<void(Time, std::span<const BlockKey>, uint32_t)>;
void generate_zipf_requests(const ZipfParams& p, uint64_t seed, const ZipfSink& emit);
std::vector<ParamSpec> zipf_param_specs();
ZipfParams zipf_params(const Params& params);

// --- By name, for the command line -----------------------------------------------------------
struct GeneratorInfo {
  std::string name;
  std::string description;
  std::vector<ParamSpec> params;
  std::function<Trace(const Params&, uint64_t seed)> make;
};
const std::vector<GeneratorInfo>& workload_generators();
// Builds kind ("gsp", "conversation", "zipf") from "key=value,..."; throws ConfigError.
Trace generate_workload(const std::string& kind, const std::string& params, uint64_t seed);

}  // namespace kvpolicy
