// `kvpolicy trace stats|convert|formats`: characterize a trace, convert it, list the readers.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/assumed_prompts.h"
#include "kvpolicy/trace/characterize.h"
#include "kvpolicy/trace/trace_io.h"
#include "kvpolicy/trace/trace_stats.h"

namespace kvpolicy::cli {
namespace {

// Loads the trace with timing (for the load-speed line) and optional session inference.
struct Loaded {
  Trace trace;
  double seconds = 0;
  uint64_t file_bytes = 0;
  size_t continued = 0;  // requests that inference put in an earlier request's session
};

Loaded load_timed(const TraceArgs& args) {
  Loaded l;
  std::error_code ec;
  l.file_bytes = std::filesystem::file_size(args.path, ec);
  if (ec) l.file_bytes = 0;
  auto start = std::chrono::steady_clock::now();
  l.trace = args.load(&l.continued);
  l.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return l;
}

struct StatsArgs {
  TraceArgs trace;
  std::string json;
  // --deep: the workload characterization of "KVCache Cache in the Wild" section 3.
  bool deep = false;
  std::string csv_dir;
  std::string model = CostModel::kDefaultModel;
  double kv_bytes_per_token = 0;  // 0 = the model's
  uint32_t turn_buckets = 5;
};

void stats(const StatsArgs& args) {
  Loaded l = load_timed(args.trace);
  const Trace& t = l.trace;
  TraceStats s = trace_stats(t);
  double mb_per_s = l.seconds > 0 ? l.file_bytes / 1e6 / l.seconds : 0;
  auto pct = [](double a, double b) { return b > 0 ? 100 * a / b : 0.0; };

  print_assumptions(t.assumptions);
  fmt::print("trace {}: {} requests, blocks of {} tokens\n", t.name, s.requests, t.block_tokens);
  fmt::print("load: {:.3f} s ({:.1f} MB, {:.0f} MB/s)\n", l.seconds, l.file_bytes / 1e6, mb_per_s);
  if (s.requests_with_session == 0) {
    fmt::print("sessions: none in the trace (--sessions auto or infer infers them)\n");
  } else {
    fmt::print("sessions: {} ({} of them multi-turn, {:.1f}%)", s.sessions, s.multi_turn_sessions,
               pct(s.multi_turn_sessions, s.sessions));
    if (l.continued) fmt::print("; inferred: {} requests continue an earlier one", l.continued);
    fmt::print("\n");
  }
  fmt::print("turns: 1: {}, 2: {}, 3: {}, 4: {}, 5+: {}; requests after the first turn: {:.1f}%\n",
             s.turns[0], s.turns[1], s.turns[2], s.turns[3], s.turns[4],
             pct(s.later_turn_requests, s.requests));
  fmt::print("blocks: {} accesses, {} unique; infinite-cache hit rate {:.2f}%\n", s.block_accesses,
             s.unique_blocks, 100 * s.infinite_hit_rate);
  auto& tok = s.prompt_tokens;
  auto& blk = s.prompt_blocks;
  fmt::print("prompt tokens: mean {:.1f}, p50 {}, p90 {}, p99 {}, max {}\n", tok.mean, tok.p50,
             tok.p90, tok.p99, tok.max);
  fmt::print("prompt blocks: mean {:.2f}, p50 {}, p90 {}, p99 {}, max {}\n", blk.mean, blk.p50,
             blk.p90, blk.p99, blk.max);
  fmt::print("output tokens: mean {:.1f}\n", s.output_tokens_mean);
  fmt::print("duration {:.1f} s, {:.3f} requests/s\n", s.duration_s, s.request_rate);
  fmt::print(
      "arrivals: the busiest tenth of the span holds {:.1f}% of requests ({:.1f}x the mean "
      "rate); gaps' coefficient of variation {:.2f} (Poisson: 1)\n",
      100 * s.peak_tenth_share, 10 * s.peak_tenth_share, s.gap_cv);
  if (!s.categories.empty()) {
    fmt::print("categories:");
    for (size_t c = 0; c < s.categories.size(); ++c)
      fmt::print(" {}: {}{}", s.categories[c].first, s.categories[c].second,
                 c + 1 < s.categories.size() ? "," : "");
    fmt::print("\n");
  }
  std::string extra =
      fmt::format(R"("continued_requests":{},"load_seconds":{:.6f},"file_bytes":{})", l.continued,
                  l.seconds, l.file_bytes);
  if (!t.assumptions.empty()) extra += ",\"assumptions\":" + json_string(t.assumptions.model);
  if (args.deep) {
    CharacterizeOptions opts;
    opts.turn_buckets = args.turn_buckets;
    opts.kv_bytes_per_token = args.kv_bytes_per_token > 0
                                  ? args.kv_bytes_per_token
                                  : find_model(args.model).kv_bytes_per_token();
    Characterization c = characterize(t, opts);
    fmt::print("\n{}", summary(c));
    extra += ",\"deep\":" + to_json(c);
    if (!args.csv_dir.empty()) write_csv(c, args.csv_dir);
  }
  if (!args.json.empty()) write_file_atomically(args.json, s.to_json(extra) + '\n');
}

struct ConvertArgs {
  TraceArgs trace;
  std::string to;
  std::string out;
  uint32_t obj_size = 1;
  size_t repeat = 1;
};

void convert(const ConvertArgs& args) {
  // An output onto the input would replace the only copy of it, almost surely a mistyped -o;
  // compare files, not spellings (./t.kvtrace, a symlink, a hard link).
  std::error_code ec;
  if (std::filesystem::equivalent(args.trace.path, args.out, ec))
    throw ConfigError("trace convert: the output '" + args.out + "' is the input '" +
                      args.trace.path + "'; write to another file");
  Loaded l = load_timed(args.trace);
  auto start = std::chrono::steady_clock::now();
  Trace repeated;
  if (args.repeat > 1) repeated = repeat_with_fresh_keys(l.trace, args.repeat);
  const Trace& out = args.repeat > 1 ? repeated : l.trace;
  if (args.to == "native")
    write_native(out, args.out);
  else
    write_oracle_general(out, args.out, args.obj_size);
  // oracleGeneral has no place for them: the converted file's hit rates would not say they are
  // the model's.
  if (args.to != "native" && !out.assumptions.empty())
    fmt::print(stderr,
               "kvpolicy: warning: {} has no place for the trace's assumptions; its blocks are "
               "still the assumption model's: {}\n",
               args.to, assumption_line(out.assumptions));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("{}: {} requests, {} block accesses -> {} ({}) in {:.3f} s\n", out.name, out.size(),
             out.num_block_accesses(), args.out, args.to, secs);
}

void add(CLI::App& app) {
  CLI::App* cmd = trace_command(app);

  auto sargs = std::make_shared<StatsArgs>();
  auto* st = cmd->add_subcommand("stats", "requests, sessions, turns, blocks, lengths, rate");
  sargs->trace.add(st, true);
  output_file(
      st->add_option("--json", sargs->json, "also write the statistics as one JSON object"));
  st->add_flag("--deep", sargs->deep,
               "also characterize reuse: skew, single- vs multi-turn hits, reuse times per "
               "category with exponential fits, lifespans, the capacity an ideal policy needs");
  st->add_option("--csv-dir", sargs->csv_dir,
                 "--deep: CSV files for studies/plot_characterization.py");
  st->add_option("--turn-buckets", sargs->turn_buckets,
                 "--deep: category = request type x turn bucket 1, 2, ..., n+")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  st->add_option("--model", sargs->model, "--deep: model whose KV bytes per token size GB figures")
      ->capture_default_str();
  st->add_option("--kv-bytes-per-token", sargs->kv_bytes_per_token,
                 "--deep: KV bytes per token (overrides --model)");
  st->callback([sargs] { stats(*sargs); });

  auto cargs = std::make_shared<ConvertArgs>();
  auto* cv = cmd->add_subcommand("convert", "write a trace as a native cache or oracleGeneral");
  cargs->trace.add(cv, true);
  cv->add_option("--to", cargs->to, "output format")
      ->required()
      ->check(CLI::IsMember({"native", "oracle-general"}));
  output_file(cv->add_option("--out,-o", cargs->out, "output file (.kvtrace, .oracleGeneral)"))
      ->required();
  cv->add_option("--obj-size", cargs->obj_size,
                 "oracleGeneral obj_size of every block (1: libCacheSim sizes count blocks)")
      ->capture_default_str();
  cv->add_option("--repeat", cargs->repeat,
                 "write this many copies one after another, each with fresh block keys (the "
                 "bench's Mooncake x18 is --repeat 18)")
      ->check(CLI::Range(size_t{1}, size_t{100000}))
      ->capture_default_str();
  cv->callback([cargs] { convert(*cargs); });

  auto* fm = cmd->add_subcommand("formats", "list the trace formats");
  fm->callback([] {
    for (auto& f : TraceFormatRegistry::instance().all())
      fmt::print("{:<16} {}\n", f.name, f.description);
  });
}

CommandRegistrar registrar(40, add);

}  // namespace
}  // namespace kvpolicy::cli
