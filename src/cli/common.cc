#include "common.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "file_options.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::cli {

void TraceArgs::add(CLI::App* app, bool required) {
  auto* opt = input_file(app->add_option("--trace,-t", path, "trace file"));
  if (required) opt->required();
  app->add_option("--format,-f", format, "trace format (auto, or see `kvpolicy trace formats`)")
      ->capture_default_str();
  app->add_flag("--skip-bad-lines", skip_bad_lines, "skip and count malformed records");
  app->add_option("--block-tokens", block_tokens, "tokens per block (default: the format's)");
  app->add_option("--max-requests", max_requests, "read at most this many requests");
  app->add_option("--sessions", sessions,
                  "auto: infer sessions from shared prefixes when the trace has none; "
                  "infer: always; keep: as read")
      ->check(CLI::IsMember({"auto", "infer", "keep"}))
      ->capture_default_str();
  app->add_option("--session-min-blocks", session_min_blocks,
                  "inference: a request is continued only if it has this many full blocks")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  // wa-study's old flag, now `--sessions infer` in every command.
  app->add_flag_callback(
         "--infer-sessions",
         [this] {
           fmt::print(stderr, "kvpolicy: --infer-sessions is deprecated; use --sessions infer\n");
           sessions = "infer";
         },
         "")
      ->group("");
}

ReadOptions TraceArgs::read_options() const {
  ReadOptions opts;
  opts.skip_bad_lines = skip_bad_lines;
  opts.block_tokens = block_tokens;
  opts.max_requests = max_requests;
  return opts;
}

Trace TraceArgs::load(size_t* continued_requests) const {
  ReadOptions opts = read_options();
  ReadReport report;
  Trace t = read_trace(path, format, opts, &report);
  if (report.skipped_lines)
    fmt::print(stderr, "kvpolicy: skipped {} bad line(s) of {}; first: {}\n", report.skipped_lines,
               report.lines, report.first_skipped);
  if (report.sorted)
    fmt::print(stderr, "kvpolicy: {}: timestamps were out of order; sorted\n", path);
  bool has_sessions =
      std::any_of(t.session.begin(), t.session.end(), [](SessionId s) { return s != kNoSession; });
  size_t continued = 0;
  if (sessions == "infer" || (sessions == "auto" && !has_sessions)) {
    continued = infer_sessions(t, session_min_blocks);
    fmt::print(stderr,
               "kvpolicy: sessions inferred from shared prefixes: {} of {} requests continue an "
               "earlier one\n",
               continued, t.size());
  }
  if (continued_requests) *continued_requests = continued;
  return t;
}

Progress::Progress(std::string what)
    : what_(std::move(what)), start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() {
  if (shown_) fmt::print(stderr, "\n");
}

void Progress::update(double done, const std::string& detail) {
  // Parallel replays each report the share done with their own part counted, so a later report
  // can be smaller: the display keeps the largest, and never runs backwards.
  done = done_ = std::max(done_, done);
  auto now = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  bool tty = isatty(STDERR_FILENO);
  // A terminal line is redrawn in place; a log gets a line every 10 s.
  auto every = tty ? std::chrono::milliseconds(500) : std::chrono::milliseconds(10000);
  if (elapsed < 3.0 || now - last_ < every) return;
  last_ = now;
  double eta = done > 0 ? elapsed * (1 - done) / done : 0;
  fmt::print(stderr, "{}{}: {:5.1f}% {} elapsed {:.0f}s, about {:.0f}s left{}", tty ? "\r" : "",
             what_, done * 100, detail, elapsed, eta, tty ? "   " : "\n");
  shown_ = tty;
}

CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        std::optional<double> v = read_number(text);
        if (!v || *v < lo || *v > hi)
          return fmt::format("'{}' is not a finite number in [{:g}, {:g}]", text, lo, hi);
        return "";
      },
      fmt::format("NUMBER in [{:g}, {:g}]", lo, hi));
}

std::vector<bool> first_of_each(const std::vector<std::string>& keys,
                                const std::vector<std::string>& labels) {
  std::vector<bool> keep(keys.size(), true);
  std::set<std::string> seen;
  std::string repeated;
  for (size_t i = 0; i < keys.size(); ++i) {
    keep[i] = seen.insert(keys[i]).second;
    if (!keep[i]) repeated += (repeated.empty() ? "" : ", ") + labels[i];
  }
  if (!repeated.empty())
    fmt::print(stderr, "kvpolicy: given more than once, run once: {}\n", repeated);
  return keep;
}

void add_deprecated_option(CLI::App* cmd, const std::string& old_name, const std::string& new_name,
                           std::string& target) {
  cmd->add_option_function<std::string>(
         old_name,
         [old_name, new_name, &target](const std::string& value) {
           fmt::print(stderr, "kvpolicy: {} is deprecated; use {}\n", old_name, new_name);
           target = value;
         },
         "deprecated: " + new_name)
      ->group("");  // hidden
}

void CostArgs::add(CLI::App* cmd) {
  cmd->add_option("--model", model,
                  "cost model: a model preset or 'linear' (`kvpolicy cost-model --list`)")
      ->capture_default_str();
  cmd->add_option("--gpu", gpu, "cost model: a GPU preset")->capture_default_str();
  cmd->add_option("--kv-dtype", kv_dtype,
                  "KV cache dtype: auto (the model's), fp16, bf16, fp8; sets KV bytes per token, "
                  "so what a capacity in GB holds")
      ->check(CLI::IsMember({"auto", "fp16", "bf16", "fp8"}))
      ->capture_default_str();
  cmd->add_option("--cost-params", cost_params,
                  "more cost model options, key=value,... (see `kvpolicy cost-model --help`)");
}

CostModel CostArgs::make(const std::string& extra) const {
  std::string params = cost_params;
  // Only when asked, so a run with the defaults keeps the cost model label it always had.
  auto append = [&](const std::string& item) { params += (params.empty() ? "" : ",") + item; };
  if (kv_dtype != "auto") append("kv_dtype=" + kv_dtype);
  if (!extra.empty()) append(extra);
  return CostModel::make(model, gpu, params);
}

std::string with_commas(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string gb_text(double gb) {
  if (gb >= 100) return fmt::format("{:.0f}", gb);
  if (gb >= 10) return fmt::format("{:.1f}", gb);
  if (gb >= 1) return fmt::format("{:.2f}", gb);
  if (!(gb > 0)) return "0";
  // Three significant digits in fixed notation ({:.3g} writes 1e-05).
  int decimals = std::min(15, 2 - int(std::floor(std::log10(gb))));
  return fmt::format("{:.{}f}", gb, decimals);
}

std::string ResolvedCapacity::label() const {
  if (capacity.is_fraction())
    return fmt::format("{} ({} blocks, {} GB)", capacity.label(), with_commas(blocks), gb_text(gb));
  return fmt::format("{} ({} blocks, {} GB, {}% of unique)", text, with_commas(blocks), gb_text(gb),
                     percent_text(unique_share));
}

std::string percent_text(double share) {
  return share < 1 ? fmt::format("{:.3g}", share * 100) : with_commas(uint64_t(share * 100 + 0.5));
}

std::string ResolvedCapacity::written() const {
  return capacity.is_fraction() ? capacity.label() : text;
}

void CapacityArgs::add(CLI::App* cmd, const std::string& default_text, const std::string& what,
                       const std::vector<std::string>& old_names) {
  if (text.empty()) text = default_text;  // a command may have set its own default
  cmd->add_option("--capacity,-c", text,
                  what + (single ? ": " : ", comma-separated: ") +
                      "blocks (4096), a share of the trace's unique blocks "
                      "(0.05 or 5%), tokens (10000t) or KV memory (40GB, 4.8GiB; through "
                      "--model and --kv-dtype)")
      ->capture_default_str();
  for (auto& old : old_names) add_deprecated_option(cmd, old, "--capacity", text);
}

std::vector<CapacitySpec> CapacityArgs::specs() const {
  auto out = parse_capacity_list(text);
  if (single && out.size() != 1) throw ConfigError("--capacity takes one capacity here");
  return out;
}

ResolvedCapacity resolve_capacity(const CapacitySpec& spec, size_t unique_blocks,
                                  const CostModel& cost) {
  ResolvedCapacity r;
  r.text = spec.text;
  r.capacity = replay_capacity(spec, unique_blocks, cost.block_tokens(), cost.kv_bytes_per_block());
  r.blocks = r.capacity.blocks(unique_blocks);
  r.gb = double(r.blocks) * cost.kv_bytes_per_block() / 1e9;
  r.unique_share = unique_blocks ? double(r.blocks) / double(unique_blocks) : 0;
  return r;
}

std::vector<ResolvedCapacity> CapacityArgs::resolve(size_t unique_blocks,
                                                    const CostModel& cost) const {
  std::vector<ResolvedCapacity> out;
  for (const CapacitySpec& spec : specs())
    out.push_back(resolve_capacity(spec, unique_blocks, cost));
  return out;
}

void add_policy_option(CLI::App* cmd, std::string& target, const std::string& help,
                       const std::vector<std::string>& old_names) {
  cmd->add_option("--policy,-p", target,
                  help +
                      "; comma-separated, each name[:key=value,...], or the sets online "
                      "(deployable: reads no future), offline, all")
      ->capture_default_str();
  for (auto& old : old_names) add_deprecated_option(cmd, old, "--policy", target);
}

std::vector<PolicySpec> policies_the_trace_feeds(const std::string& text, const Trace& trace,
                                                 std::string* skipped) {
  std::string note;
  std::vector<PolicySpec> out = policies_for_trace(text, trace.has_continuation(), &note);
  if (skipped)
    *skipped = note;
  else if (!note.empty())
    fmt::print(stderr, "kvpolicy: {}\n", note);
  return out;
}

std::string expand_policy_sets_text(const std::string& text) {
  std::string out;
  for (auto& s : expand_policy_sets(text)) out += (out.empty() ? "" : ",") + s.label();
  return out;
}

}  // namespace kvpolicy::cli
