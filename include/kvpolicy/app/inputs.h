// The inputs every front end (the command line, Python) resolves the same way: a trace loaded
// from a file, capacities resolved against it, the cost model, and the policies it can feed.
// Plain option structs: a front end fills them from its own flags or arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/core/capacity.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/trace/trace.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::app {

// How to read a trace: the file, its format, and session inference.
struct TraceOptions {
  std::string path;
  std::string format = "auto";
  bool skip_bad_lines = false;
  uint32_t block_tokens = 0;
  uint64_t max_requests = 0;
  // auto: infer sessions from shared prefixes when the trace carries none; infer: always;
  // keep: as read.
  std::string sessions = "auto";
  uint32_t session_min_blocks = 2;
  // Retention hint rules (`--hint`, hints.h), added to the trace's own hints after sessions are
  // inferred; `hint_seed` picks the random rule's blocks.
  std::vector<std::string> hints;
  uint64_t hint_seed = 1;

  // The reader options these settings give; throws ConfigError on an unknown `sessions`.
  ReadOptions read_options() const;
};

// Loads the trace, printing what was skipped, sorted or inferred to stderr. Also tells how many
// requests inference put into an earlier request's session (0 if none).
Trace load_trace(const TraceOptions& opts, size_t* continued_requests = nullptr);

// The cost model that prices TTFT and turns KV memory ("40GB") into blocks: one definition, so a
// capacity in GB means the same in every command.
struct CostOptions {
  std::string model = CostModel::kDefaultModel;
  std::string gpu = CostModel::kDefaultGpu;
  std::string kv_dtype = "auto";
  std::string cost_params;

  // Throws ConfigError on an unknown preset or option. `extra` is more key=value options (tp=2).
  CostModel make(const std::string& extra = "") const;
};

// A capacity resolved against a trace and a cost model.
struct ResolvedCapacity {
  // What replays take (replay_capacity): a share when written as one, else whole blocks.
  CapacitySpec capacity;
  size_t blocks = 0;
  double gb = 0;            // KV memory of `blocks`
  double unique_share = 0;  // blocks / the trace's unique blocks
  std::string text;         // as written
  // "5% (9,140 blocks, 575 GB)" or "40GB (19,073 blocks, 40 GB, 2.7% of unique)": the capacity as
  // written, then blocks, GB of KV and (when not written as one) the share of unique blocks.
  std::string label() const;
  // "5%" for a share, else as written ("40GB"): a narrow column's capacity.
  std::string written() const;
};

// `cost` must be at the trace's block size (with_block_tokens).
ResolvedCapacity resolve_capacity(const CapacitySpec& spec, size_t unique_blocks,
                                  const CostModel& cost);
// A list of capacities (parse_capacity_list); `single` asks for exactly one. Throws ConfigError.
std::vector<CapacitySpec> capacity_specs(const std::string& text, bool single = false);
std::vector<ResolvedCapacity> resolve_capacities(const std::string& text, size_t unique_blocks,
                                                 const CostModel& cost, bool single = false);

// "9,140": thousands separated, for block counts in tables.
std::string with_commas(uint64_t n);
// KV memory in GB for tables and sentences, never with an exponent: "1234", "12.4", "1.23",
// "0.0312".
std::string gb_text(double gb);
// A share as a percentage without the sign: "2.5", "40", "1,140" (a capacity above the trace).
std::string percent_text(double share);

// The one rule for policies a trace cannot feed (policies_for_trace): a policy named in `text`
// that reads continuation scores the trace lacks is a ConfigError; one a set (online, all)
// brought is left out, and said on stderr; or, given `skipped`, that line is left to the caller.
std::vector<PolicySpec> policies_the_trace_feeds(const std::string& text, const Trace& trace,
                                                 std::string* skipped = nullptr);
// The sets of `text` expanded (expand_policy_sets), written back as a list parse_policy_list
// reads (for options that take text).
std::string expand_policy_sets_text(const std::string& text);

// Which configurations come first (true) and which repeat an earlier one's result key (false):
// -p lru,lru, -c 5%,0.05, --workers 1,1. The repeats are named on stderr in one line; their rows
// would repeat in --json, which `kvpolicy merge` refuses.
std::vector<bool> first_of_each(const std::vector<std::string>& keys,
                                const std::vector<std::string>& labels);

// Keeps each configuration once (first_of_each), by `key`, naming repeats by `label`.
template <typename Config, typename KeyFn, typename LabelFn>
void drop_repeated_configs(std::vector<Config>& configs, KeyFn key, LabelFn label) {
  std::vector<std::string> keys, labels;
  for (const Config& c : configs) {
    keys.push_back(key(c));
    labels.push_back(label(c));
  }
  std::vector<bool> keep = first_of_each(keys, labels);
  size_t kept = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    if (!keep[i]) continue;
    if (kept != i) configs[kept] = std::move(configs[i]);  // a self-move would empty it
    ++kept;
  }
  configs.resize(kept);
}

}  // namespace kvpolicy::app
