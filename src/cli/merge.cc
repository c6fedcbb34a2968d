// `kvpolicy merge OUT SHARD...`: joins the --json files of a sweep's shards (--shard i/n) into
// the file one run of the whole sweep writes.
#include <fmt/format.h>

#include <algorithm>

#include "command.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/cell_sweep.h"
#include "kvpolicy/serve/serve.h"
#include "kvpolicy/sim/sweep.h"
#include "kvpolicy/trace/json_record.h"

namespace kvpolicy::cli {
namespace {

// Fields that time the run rather than describe its result: a policy's or router's *_seconds.
void zero_timing(PolicyStats& stats) {
  for (auto& [name, value] : stats)
    if (name.ends_with("_seconds")) value = 0;
}

// A replay row (simulate) or a serve-mode row ("mode":"serve"); anything else is refused by the
// parsers, naming file, line and field.
RowIdentity identify(const ResultLine& line, const std::string& path) {
  JsonRecord j(line.text, path, line.line_no);
  std::string_view mode;
  if (j.object()["mode"].get(mode) == simdjson::SUCCESS && mode == "serve") {
    ServeResult r = parse_serve_result(line.text, path, line.line_no);
    r.sim_seconds = 0;
    zero_timing(r.router_stats);
    return {"serve|" + r.key(), r.to_json()};
  }
  ReplayResult r = parse_result_json(line.text, path, line.line_no);
  r.replay_seconds = r.replay_cpu_seconds = r.ns_per_access = 0;
  zero_timing(r.policy_stats);
  return {"replay|" + result_key(r), r.to_json()};
}

void add(CLI::App& app) {
  auto out = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand(
      "merge",
      "join the --json files of a sweep's shards (simulate or serve --shard i/n) into one");
  output_file(cmd->add_option("out", *out, "the joined results file (written all or nothing)"))
      ->required();
  input_file(
      cmd->add_option("shards", *inputs, "the shards' --json files, in shard order (0/n first)"))
      ->required()
      ->check(CLI::ExistingFile);
  cmd->footer(
      "Rows are copied as they are, file after file: a shard's file lists its configurations in "
      "configuration order and shards are contiguous runs of it, so the shards in shard order "
      "give the single run's order. Refused, naming file and line: a line that is no simulate "
      "or serve result, a last line cut short, and a configuration in two places (a duplicate, "
      "or conflicting results).");
  cmd->callback([out, inputs] {
    std::string text = merge_result_files(*inputs, identify);
    write_file_atomically(*out, text);
    size_t rows = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    fmt::print("merged {} rows from {} file(s) into {}\n", rows, inputs->size(), *out);
  });
}

CommandRegistrar registrar(27, add);

}  // namespace
}  // namespace kvpolicy::cli
