// Options and helpers shared by the subcommands: loading a trace, progress, output files.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/app/inputs.h"
#include "kvpolicy/app/progress.h"
#include "kvpolicy/core/capacity.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy::cli {

// The application layer's inputs, under the names the commands have always used.
using app::CostOptions;
using app::drop_repeated_configs;
using app::expand_policy_sets_text;
using app::first_of_each;
using app::gb_text;
using app::percent_text;
using app::policies_the_trace_feeds;
using app::Progress;
using app::resolve_capacity;
using app::ResolvedCapacity;
using app::with_commas;

// The line above every table of results on a trace whose prompts an assumption model made
// (`trace import --assume`): "assumed prompts: ..." on stdout; nothing for any other trace.
void print_assumptions(const Trace::Assumptions& assumptions);

// --trace/--format/--skip-bad-lines/--block-tokens/--max-requests/--sessions: app::TraceOptions
// from flags (--infer-sessions is a deprecated spelling of --sessions infer).
void add_trace_options(CLI::App* app, app::TraceOptions& trace, bool required);
// --hint RULE (repeatable) and --hint-seed: retention hints from rules (docs/policies.md).
void add_hint_options(CLI::App* app, app::TraceOptions& trace);
struct TraceArgs : app::TraceOptions {
  void add(CLI::App* app, bool required);
  // Loads the trace (app::load_trace), printing what was skipped, sorted or inferred to stderr.
  Trace load() const { return app::load_trace(*this); }
  Trace load(size_t* continued_requests) const {
    return app::load_trace(*this, continued_requests);
  }
};

// An old spelling of an option, kept for one release: it sets `target` like `new_name` does and
// prints "kvpolicy: OLD is deprecated; use NEW" on stderr. Hidden from --help.
void add_deprecated_option(CLI::App* cmd, const std::string& old_name, const std::string& new_name,
                           std::string& target);

// --model, --gpu, --kv-dtype and --cost-params: app::CostOptions from flags.
struct CostArgs : app::CostOptions {
  void add(CLI::App* cmd);
};
void add_cost_options(CLI::App* cmd, app::CostOptions& cost);

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
  std::vector<CapacitySpec> specs() const { return app::capacity_specs(text, single); }
  // `cost` must be at the trace's block size (with_block_tokens). Throws ConfigError below one
  // block.
  std::vector<ResolvedCapacity> resolve(size_t unique_blocks, const CostModel& cost) const {
    return app::resolve_capacities(text, unique_blocks, cost, single);
  }
};

// The same option on a capacity list held elsewhere (an app options struct).
void add_capacity_option(CLI::App* cmd, std::string& text, bool single,
                         const std::string& default_text, const std::string& what,
                         const std::vector<std::string>& old_names = {"--capacities"});

// -p/--policy: a list of name[:key=value,...] specs, where the sets "online", "offline" and "all"
// expand to their members (expand_policy_sets). `old_names` stay as deprecated aliases.
void add_policy_option(CLI::App* cmd, std::string& target, const std::string& help,
                       const std::vector<std::string>& old_names = {"--policies"});

// The built-in default workload `compare` and `make run` use when no trace is given.
Trace default_workload(uint64_t seed);

// A finite number in [lo, hi]: CLI's NonNegativeNumber lets nan and inf through, which then
// reach the results (a "nan" in JSON, a DRAM tier of 2^63 blocks).
CLI::Validator finite_in(double lo, double hi);

}  // namespace kvpolicy::cli
