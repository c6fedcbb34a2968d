// `kvpolicy doctor` (docs/doctor.md): loads a trace or imports a log keeping its prompts, then
// measures each section and the remedies.
#include "kvpolicy/app/doctor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "doctor_internal.h"
#include "kvpolicy/core/error.h"

namespace kvpolicy::app {
namespace doctor {
namespace {

// The share section 1 falls back to when the GPU's free KV memory holds the whole trace (an
// infinite cache teaches nothing about eviction).
constexpr double kFallbackShare = 0.10;

Input load(const DoctorSpec& spec) {
  Input in;
  bool log = !spec.log.input.empty(), file = !spec.trace.path.empty();
  if (log == file) throw ConfigError("doctor: give either a trace (-t) or a log (--input)");
  if (file) {
    in.trace = load_trace(spec.trace, &in.inferred);
    return in;
  }
  ImportSpec log_spec = spec.log;
  log_spec.opts.keep_prompts = true;
  ImportedLog read = read_log(log_spec);
  in.trace = std::move(read.trace);
  in.tokenizer = std::move(read.tokenizer);
  in.sorted = read.report.sorted;
  in.prompts = std::move(read.report.prompts);
  return in;
}

// Section 1's capacity: as given, else the KV memory the GPU leaves after the weights, else (when
// that holds every block, or the model is linear) a share of the unique blocks.
CapacitySpec choose_capacity(const DoctorSpec& spec, const Trace& t, const CostModel& cost,
                             size_t unique, std::string& label) {
  CostModel at_b = cost.with_block_tokens(std::max<uint32_t>(t.block_tokens, 1));
  if (!spec.capacity.empty()) {
    ResolvedCapacity c = resolve_capacities(spec.capacity, unique, at_b, true).front();
    label = c.label();
    return c.capacity;
  }
  double free = 0;
  if (!cost.is_linear()) free = cost.tensor_parallel() * cost.gpu().mem_bytes - cost.weight_bytes();
  size_t blocks = free > 0 ? at_b.blocks_for_bytes(free) : 0;
  if (blocks > 0 && blocks < unique) {
    label =
        fmt::format("{} blocks: the {:.1f} GB {} leaves for KV after the weights (-c to change)",
                    with_commas(blocks), free / 1e9, cost.label());
    return CapacitySpec::whole_blocks(blocks);
  }
  // A tiny trace's share can round to no block: one block then.
  CapacitySpec share = kFallbackShare * double(unique) >= 0.5 ? CapacitySpec::share(kFallbackShare)
                                                              : CapacitySpec::whole_blocks(1);
  label = fmt::format(
      "{} blocks, {}% of the trace's unique blocks (at least one): the {:.1f} GB {} leaves for "
      "KV would hold every block (-c to change)",
      with_commas(share.blocks(unique)), percent_text(kFallbackShare), free / 1e9, cost.label());
  return share;
}

}  // namespace

bool Input::has_text() const {
  return !prompts.empty() &&
         std::all_of(prompts.begin(), prompts.end(), [](auto& p) { return !p.text.empty(); });
}
bool Input::has_tokens() const {
  return !prompts.empty() &&
         std::all_of(prompts.begin(), prompts.end(), [](auto& p) { return !p.tokens.empty(); });
}

}  // namespace doctor

void DoctorSpec::share_input_options() {
  if (log.input.empty()) {
    if (!log.map.empty()) throw ConfigError("doctor: --map goes with --input (a log), not with -t");
    return;
  }
  if (trace.format != "auto" && trace.format != "csv" && trace.format != "jsonl")
    throw ConfigError("doctor: a log's --format is csv, jsonl or auto");
  if (log.map.empty() && log.preset.empty())
    throw ConfigError("doctor: --input needs --map or --preset (as trace import)");
  log.opts.format = trace.format;
  log.opts.skip_bad_lines = trace.skip_bad_lines;
  log.opts.block_tokens = trace.block_tokens ? trace.block_tokens : 16;
}

DoctorReport run_doctor(const DoctorSpec& spec) {
  using namespace doctor;
  auto start = std::chrono::steady_clock::now();
  if (spec.workers < 1 || spec.workers > 4096)
    throw ConfigError("doctor: --workers must be in [1, 4096]");
  CostModel cost = spec.cost.make();
  Input in = load(spec);
  const Trace& t = in.trace;
  DoctorReport rep;
  rep.input = spec.log.input.empty() ? spec.trace.path : spec.log.input;
  rep.requests = t.size();
  rep.block_tokens = t.block_tokens;
  rep.content = in.has_text() ? "text" : in.has_tokens() ? "tokens" : "blocks";
  rep.sanity = import_sanity(t, in.sorted);
  rep.unique_blocks = count_unique_blocks(t);
  rep.policy = spec.policy;
  Measured m;
  m.capacity = choose_capacity(spec, t, cost, rep.unique_blocks, rep.capacity_label);
  rep.capacity_blocks = m.capacity.blocks(rep.unique_blocks);

  AnchorCounts anchors;
  const std::vector<KeptPrompt>* prompts = in.prompts.empty() ? nullptr : &in.prompts;
  rep.within = within_sessions(t, prompts, anchors);
  if (in.inferred)
    rep.within.basis += fmt::format(
        "; the sessions were inferred from shared prefixes ({} requests continue an earlier one), "
        "so a break within them is rare by construction",
        in.inferred);
  rep.across = across_sessions(t, prompts, anchors);
  rep.answers = answers_within_sessions(t, prompts);
  m.anchors = top_anchors(anchors);
  m.token_anchors = top_token_anchors(anchors);

  measure_cache(in, spec, cost, m, rep);
  measure_block_size(in, spec, cost, m, rep);
  if (!spec.skip_routing) measure_routing(in, spec, m, rep);
  measure_remedies(in, spec, cost, m, rep);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rep;
}

}  // namespace kvpolicy::app
