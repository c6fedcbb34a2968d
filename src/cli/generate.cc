// `kvpolicy trace generate`: write a synthetic workload (GSP, conversation, Zipf) as a native
// trace file that every command reads back with --trace.
#include <fmt/format.h>

#include <chrono>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::cli {
namespace {

struct GenerateArgs {
  std::string kind;
  std::string params;
  uint64_t seed = 1;
  std::string out;
};

std::string kinds_help() {
  std::string s = "\nKinds and their parameters (key=default):\n";
  for (auto& g : workload_generators()) {
    s += fmt::format("  {}: {}\n", g.name, g.description);
    for (auto& p : g.params)
      s += fmt::format("    {:<34} {}\n", p.name + "=" + p.default_value, p.help);
  }
  return s;
}

void run(const GenerateArgs& args) {
  // Readers pick the native format by this suffix.
  const std::string suffix = ".kvtrace";
  if (args.out.size() <= suffix.size() ||
      args.out.compare(args.out.size() - suffix.size(), suffix.size(), suffix) != 0)
    throw ConfigError("--out '" + args.out + "': the output is a native trace, name it *.kvtrace");
  auto start = std::chrono::steady_clock::now();
  const std::string name = fmt::format("{}({}{}seed={})", args.kind, args.params,
                                       args.params.empty() ? "" : ",", args.seed);
  if (args.kind == "zipf") {
    // Streamed to disk as it is made: a billion-access trace never sits in memory.
    ZipfParams p = zipf_params(Params::parse(args.params, zipf_param_specs(), "generator zipf"));
    const uint64_t per_request = uint64_t{p.prefix_blocks} + p.suffix_blocks;
    NativeTraceWriter out(args.out, name, p.block_tokens, p.requests, p.requests * per_request);
    generate_zipf_requests(p, args.seed,
                           [&](Time now, std::span<const BlockKey> keys, uint32_t tokens) {
                             out.add_request_keys(now, keys, tokens, 1);
                           });
    out.finish();
    double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(
        "{}: {} requests, {} block accesses of {} tokens, generated and written in {:.2f} s -> "
        "{}\n",
        name, p.requests, p.requests * per_request, p.block_tokens, gen_s, args.out);
    return;
  }
  Trace t = generate_workload(args.kind, args.params, args.seed);
  t.name = name;
  double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_native(t, args.out);
  TraceFacts f = trace_facts(t);
  fmt::print(
      "{}: {} requests, {} block accesses, {} unique blocks of {} tokens (infinite-cache hit "
      "rate {:.2f}%), generated in {:.2f} s -> {}\n",
      t.name, f.requests, f.block_accesses, f.unique_blocks, t.block_tokens,
      f.infinite_hit_rate * 100, gen_s, args.out);
}

void add(CLI::App& app) {
  // `trace` belongs to trace_cmd.cc; this adds one subcommand to it (or makes it, if absent).
  CLI::App* trace = trace_command(app);
  auto args = std::make_shared<GenerateArgs>();
  auto* cmd = trace->add_subcommand("generate", "write a synthetic workload as a native trace");
  cmd->add_option("--kind,-k", args->kind, "gsp, conversation, agent or zipf")
      ->required()
      ->check(CLI::IsMember({"gsp", "conversation", "agent", "zipf"}));
  cmd->add_option("--params", args->params, "generator parameters, key=value,...");
  cmd->add_option("--seed", args->seed, "random seed")->capture_default_str();
  output_file(cmd->add_option("--out,-o", args->out, "output file (.kvtrace)"))->required();
  cmd->footer(kinds_help());
  cmd->callback([args] { run(*args); });
}

// After `trace` (order 40) exists.
CommandRegistrar registrar(95, add);

}  // namespace
}  // namespace kvpolicy::cli
