#include "common.h"

#include <fmt/format.h>

#include "file_options.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/trace/assumed_prompts.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::cli {

void print_assumptions(const Trace::Assumptions& assumptions) {
  if (!assumptions.empty()) fmt::print("{}\n", assumption_line(assumptions));
}

void TraceArgs::add(CLI::App* app, bool required) { add_trace_options(app, *this, required); }

void add_trace_options(CLI::App* app, app::TraceOptions& t, bool required) {
  auto* opt = input_file(app->add_option("--trace,-t", t.path, "trace file"));
  if (required) opt->required();
  app->add_option("--format,-f", t.format, "trace format (auto, or see `kvpolicy trace formats`)")
      ->capture_default_str();
  app->add_flag("--skip-bad-lines", t.skip_bad_lines, "skip and count malformed records");
  app->add_option("--block-tokens", t.block_tokens, "tokens per block (default: the format's)");
  app->add_option("--max-requests", t.max_requests, "read at most this many requests");
  app->add_option("--sessions", t.sessions,
                  "auto: infer sessions from shared prefixes when the trace has none; "
                  "infer: always; keep: as read")
      ->check(CLI::IsMember({"auto", "infer", "keep"}))
      ->capture_default_str();
  app->add_option("--session-min-blocks", t.session_min_blocks,
                  "inference: a request is continued only if it has this many full blocks")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  // wa-study's old flag, now `--sessions infer` in every command.
  app->add_flag_callback(
         "--infer-sessions",
         [&t] {
           fmt::print(stderr, "kvpolicy: --infer-sessions is deprecated; use --sessions infer\n");
           t.sessions = "infer";
         },
         "")
      ->group("");
}

void add_hint_options(CLI::App* app, app::TraceOptions& t) {
  app->add_option("--hint", t.hints,
                  "retention hints from a rule, repeatable (later rules override earlier ones "
                  "on a block): system-prompt=P:D (the leading blocks shared with other "
                  "sessions), session-pin=[P:]D (each turn's whole sequence, P 100 unless "
                  "given), oracle=P:D (from the trace's future: blocks reused within D kept "
                  "until then, blocks never reused priority 0), random=P:D:SHARE, "
                  "adversarial=P:D (the blocks never reused again); P a priority 0-100 (35 = "
                  "no hint), D a duration after release such as 600s, 10m or inf. "
                  "docs/policies.md, Retention hints")
      ->type_name("RULE");
  app->add_option("--hint-seed", t.hint_seed, "seed of the random hint rule's blocks")
      ->capture_default_str();
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

void CostArgs::add(CLI::App* cmd) { add_cost_options(cmd, *this); }

void add_cost_options(CLI::App* cmd, app::CostOptions& cost) {
  cmd->add_option("--model", cost.model,
                  "cost model: a model preset or 'linear' (`kvpolicy cost-model --list`)")
      ->capture_default_str();
  cmd->add_option("--gpu", cost.gpu, "cost model: a GPU preset")->capture_default_str();
  cmd->add_option("--kv-dtype", cost.kv_dtype,
                  "KV cache dtype: auto (the model's), fp16, bf16, fp8; sets KV bytes per token, "
                  "so what a capacity in GB holds")
      ->check(CLI::IsMember({"auto", "fp16", "bf16", "fp8"}))
      ->capture_default_str();
  cmd->add_option("--cost-params", cost.cost_params,
                  "more cost model options, key=value,... (see `kvpolicy cost-model --help`)");
}

void CapacityArgs::add(CLI::App* cmd, const std::string& default_text, const std::string& what,
                       const std::vector<std::string>& old_names) {
  add_capacity_option(cmd, text, single, default_text, what, old_names);
}

void add_capacity_option(CLI::App* cmd, std::string& text, bool single,
                         const std::string& default_text, const std::string& what,
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

void add_policy_option(CLI::App* cmd, std::string& target, const std::string& help,
                       const std::vector<std::string>& old_names) {
  cmd->add_option("--policy,-p", target,
                  help +
                      "; comma-separated, each name[:key=value,...], or the sets online "
                      "(deployable: reads no future), offline, all")
      ->capture_default_str();
  for (auto& old : old_names) add_deprecated_option(cmd, old, "--policy", target);
}

}  // namespace kvpolicy::cli
