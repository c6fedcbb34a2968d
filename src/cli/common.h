// Options and helpers shared by the subcommands: loading a trace, progress, output files.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "kvpolicy/core/capacity.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy::cli {

// --trace/--format/--skip-bad-lines/--block-tokens/--max-requests, and the built-in workload.
struct TraceArgs {
  std::string path;
  std::string format = "auto";
  bool skip_bad_lines = false;
  uint32_t block_tokens = 0;
  uint64_t max_requests = 0;
  // auto: infer sessions from shared prefixes when the trace carries none; infer: always;
  // keep: as read.
  std::string sessions = "auto";  // --infer-sessions is a deprecated spelling of "infer"
  uint32_t session_min_blocks = 2;

  void add(CLI::App* app, bool required);
  // The reader options these flags set.
  ReadOptions read_options() const;
  // Loads the trace, printing what was skipped, sorted or inferred to stderr.
  Trace load() const { return load(nullptr); }
  // Also tells how many requests inference put into an earlier request's session (0 if none).
  Trace load(size_t* continued_requests) const;
};

// An old spelling of an option, kept for one release: it sets `target` like `new_name` does and
// prints "kvpolicy: OLD is deprecated; use NEW" on stderr. Hidden from --help.
void add_deprecated_option(CLI::App* cmd, const std::string& old_name, const std::string& new_name,
                           std::string& target);

// --model, --gpu, --kv-dtype and --cost-params: the cost model that prices TTFT and turns KV
// memory ("40GB") into blocks. One definition, so a capacity in GB means the same in every
// command.
struct CostArgs {
  std::string model = CostModel::kDefaultModel;
  std::string gpu = CostModel::kDefaultGpu;
  std::string kv_dtype = "auto";
  std::string cost_params;

  void add(CLI::App* cmd);
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

// -c/--capacity: blocks (4096), a share of the trace's unique blocks (0.05 or 5%), tokens
// (10000t) or KV memory (40GB, 4.8GiB, through CostArgs). The old --capacities (and any other
// spelling given) stays as a deprecated alias.
struct CapacityArgs {
  std::string text;
  bool single = false;  // one capacity only

  // `what` names what is sized ("capacities", "KV memory per GPU"); `default_text` applies
  // unless `text` was set already.
  void add(CLI::App* cmd, const std::string& default_text, const std::string& what = "capacities",
           const std::vector<std::string>& old_names = {"--capacities"});
  // Parses without a trace (to fail before loading one); throws ConfigError.
  std::vector<CapacitySpec> specs() const;
  // `cost` must be at the trace's block size (with_block_tokens). Throws ConfigError below one
  // block.
  std::vector<ResolvedCapacity> resolve(size_t unique_blocks, const CostModel& cost) const;
};
ResolvedCapacity resolve_capacity(const CapacitySpec& spec, size_t unique_blocks,
                                  const CostModel& cost);

// "9,140": thousands separated, for block counts in tables.
std::string with_commas(uint64_t n);
// KV memory in GB for tables and sentences, never with an exponent: "1234", "12.4", "1.23",
// "0.0312".
std::string gb_text(double gb);
// A share as a percentage without the sign: "2.5", "40", "1,140" (a capacity above the trace).
std::string percent_text(double share);

// -p/--policy: a list of name[:key=value,...] specs, where the sets "online", "offline" and "all"
// expand to their members (expand_policy_sets). `old_names` stay as deprecated aliases.
void add_policy_option(CLI::App* cmd, std::string& target, const std::string& help,
                       const std::vector<std::string>& old_names = {"--policies"});
// The policies of `text` that `trace` can feed (policies_for_trace), saying on stderr which a set
// brought that it cannot; or, given `skipped`, leaving that line to the caller (a table's note).
std::vector<PolicySpec> policies_the_trace_feeds(const std::string& text, const Trace& trace,
                                                 std::string* skipped = nullptr);
// The sets of `text` expanded (expand_policy_sets), written back as a list parse_policy_list
// reads (for options that take text).
std::string expand_policy_sets_text(const std::string& text);

// The built-in default workload `compare` and `make run` use when no trace is given.
Trace default_workload(uint64_t seed);

// A progress line on stderr, shown only once a run has taken more than a few seconds.
class Progress {
 public:
  explicit Progress(std::string what);
  ~Progress();
  void update(double done, const std::string& detail = "");

 private:
  std::string what_;
  std::chrono::steady_clock::time_point start_, last_;
  bool shown_ = false;
  double done_ = 0;  // the most reported: parallel jobs report out of order, the display must not
};

// A finite number in [lo, hi]: CLI's NonNegativeNumber lets nan and inf through, which then
// reach the results (a "nan" in JSON, a DRAM tier of 2^63 blocks).
CLI::Validator finite_in(double lo, double hi);

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

}  // namespace kvpolicy::cli
