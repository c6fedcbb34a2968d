// `kvpolicy trace stats|convert|formats`: characterize a trace, convert it, list the readers.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "command.h"
#include "common.h"
#include "kvpolicy/error.h"
#include "kvpolicy/sim.h"
#include "kvpolicy/trace_io.h"

namespace kvpolicy::cli {
namespace {

struct Distribution {
  double mean = 0;
  uint64_t p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// Nearest-rank percentiles.
Distribution distribution(std::vector<uint64_t> v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (uint64_t x : v) sum += static_cast<double>(x);
  d.mean = sum / static_cast<double>(v.size());
  auto rank = [&](double p) {
    size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::clamp<size_t>(k, 1, v.size()) - 1];
  };
  d.p50 = rank(0.50);
  d.p90 = rank(0.90);
  d.p99 = rank(0.99);
  d.max = v.back();
  return d;
}

std::string json_of(const Distribution& d) {
  return fmt::format(R"({{"mean":{:.3f},"p50":{},"p90":{},"p99":{},"max":{}}})", d.mean, d.p50,
                     d.p90, d.p99, d.max);
}

// Loads the trace with timing (for the load-speed line) and optional session inference.
struct Loaded {
  Trace trace;
  double seconds = 0;
  uint64_t file_bytes = 0;
  size_t continued = 0;  // requests that inference put in an earlier request's session
};

Loaded load_timed(const TraceArgs& args, bool infer, uint32_t min_parent_blocks) {
  Loaded l;
  std::error_code ec;
  l.file_bytes = std::filesystem::file_size(args.path, ec);
  if (ec) l.file_bytes = 0;
  auto start = std::chrono::steady_clock::now();
  l.trace = args.load();
  l.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (infer) l.continued = infer_sessions(l.trace, min_parent_blocks);
  return l;
}

struct StatsArgs {
  TraceArgs trace;
  bool infer = false;
  uint32_t min_parent_blocks = 2;
  std::string json;
};

void stats(const StatsArgs& args) {
  Loaded l = load_timed(args.trace, args.infer, args.min_parent_blocks);
  const Trace& t = l.trace;
  TraceFacts facts = trace_facts(t);
  const size_t n = t.size();

  // Sessions and turns.
  std::vector<uint64_t> per_session;  // requests per session id
  size_t with_session = 0;
  std::array<uint64_t, 5> turns{};  // 1, 2, 3, 4, 5+
  size_t later_turns = 0;
  for (size_t r = 0; r < n; ++r) {
    ++turns[std::min<uint32_t>(std::max<uint32_t>(t.turn[r], 1), 5) - 1];
    later_turns += t.turn[r] > 1;
    if (t.session[r] == kNoSession) continue;
    ++with_session;
    if (t.session[r] >= per_session.size()) per_session.resize(t.session[r] + 1, 0);
    ++per_session[t.session[r]];
  }
  size_t sessions = 0, multi_turn_sessions = 0;
  for (uint64_t c : per_session) {
    sessions += c > 0;
    multi_turn_sessions += c > 1;
  }

  std::vector<uint64_t> tokens(t.prompt_tokens.begin(), t.prompt_tokens.end());
  std::vector<uint64_t> blocks(n);
  for (size_t r = 0; r < n; ++r) blocks[r] = t.prompt_blocks(r);
  Distribution tok = distribution(tokens), blk = distribution(blocks);
  double output_mean = 0;
  for (uint32_t o : t.output_tokens) output_mean += o;
  output_mean = n ? output_mean / n : 0;
  double duration = n ? double(t.time.back() - t.time.front()) / kMicrosPerSecond : 0;
  double rate = duration > 0 ? n / duration : 0;
  double mb_per_s = l.seconds > 0 ? l.file_bytes / 1e6 / l.seconds : 0;
  auto share = [](double a, double b) { return b > 0 ? a / b : 0.0; };

  fmt::print("trace {}: {} requests, blocks of {} tokens\n", t.name, n, t.block_tokens);
  fmt::print("load: {:.3f} s ({:.1f} MB, {:.0f} MB/s)\n", l.seconds, l.file_bytes / 1e6, mb_per_s);
  if (with_session == 0) {
    fmt::print("sessions: unknown (none in the trace; --infer-sessions infers them)\n");
  } else {
    fmt::print("sessions: {} ({} of them multi-turn, {:.1f}%)", sessions, multi_turn_sessions,
               100 * share(multi_turn_sessions, sessions));
    if (args.infer) fmt::print("; inferred: {} requests continue an earlier one", l.continued);
    fmt::print("\n");
  }
  fmt::print("turns: 1: {}, 2: {}, 3: {}, 4: {}, 5+: {}; requests after the first turn: {:.1f}%\n",
             turns[0], turns[1], turns[2], turns[3], turns[4], 100 * share(later_turns, n));
  fmt::print("blocks: {} accesses, {} unique; infinite-cache hit rate {:.2f}%\n",
             facts.block_accesses, facts.unique_blocks, 100 * facts.infinite_hit_rate);
  fmt::print("prompt tokens: mean {:.1f}, p50 {}, p90 {}, p99 {}, max {}\n", tok.mean, tok.p50,
             tok.p90, tok.p99, tok.max);
  fmt::print("prompt blocks: mean {:.2f}, p50 {}, p90 {}, p99 {}, max {}\n", blk.mean, blk.p50,
             blk.p90, blk.p99, blk.max);
  fmt::print("output tokens: mean {:.1f}\n", output_mean);
  fmt::print("duration {:.1f} s, {:.3f} requests/s\n", duration, rate);
  if (!t.category_names.empty()) {
    std::vector<uint64_t> per_cat(t.category_names.size(), 0);
    for (CategoryId c : t.category) ++per_cat[c];
    fmt::print("categories:");
    for (size_t c = 0; c < per_cat.size(); ++c)
      fmt::print(" {}: {}{}", t.category_names[c], per_cat[c], c + 1 < per_cat.size() ? "," : "");
    fmt::print("\n");
  }

  if (!args.json.empty()) {
    auto out = open_output(args.json);
    std::string cats;
    for (auto& c : t.category_names) {
      std::string esc;
      for (char ch : c) {
        if (ch == '"' || ch == '\\') esc += '\\';
        if (static_cast<unsigned char>(ch) >= 0x20) esc += ch;
      }
      cats += (cats.empty() ? "\"" : ",\"") + esc + "\"";
    }
    out << fmt::format(
               R"({{"requests":{},"block_tokens":{},"sessions":{},"multi_turn_sessions":{},)"
               R"("multi_turn_session_share":{:.6f},"later_turn_request_share":{:.6f},)"
               R"("sessions_inferred":{},"continued_requests":{},"turns":[{},{},{},{},{}],)"
               R"("block_accesses":{},"unique_blocks":{},"infinite_hit_rate":{:.6f},)"
               R"("prompt_tokens":{},"prompt_blocks":{},"output_tokens_mean":{:.3f},)"
               R"("duration_s":{:.3f},"request_rate":{:.6f},"load_seconds":{:.6f},"file_bytes":{},)"
               R"("categories":[{}]}})",
               n, t.block_tokens, sessions, multi_turn_sessions,
               share(multi_turn_sessions, sessions), share(later_turns, n), args.infer, l.continued,
               turns[0], turns[1], turns[2], turns[3], turns[4], facts.block_accesses,
               facts.unique_blocks, facts.infinite_hit_rate, json_of(tok), json_of(blk),
               output_mean, duration, rate, l.seconds, l.file_bytes, cats)
        << '\n';
  }
}

struct ConvertArgs {
  TraceArgs trace;
  std::string to;
  std::string out;
  bool infer = false;
  uint32_t min_parent_blocks = 2;
  uint32_t obj_size = 1;
};

void convert(const ConvertArgs& args) {
  Loaded l = load_timed(args.trace, args.infer, args.min_parent_blocks);
  auto start = std::chrono::steady_clock::now();
  if (args.to == "native")
    write_native(l.trace, args.out);
  else
    write_oracle_general(l.trace, args.out, args.obj_size);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("{}: {} requests, {} block accesses -> {} ({}) in {:.3f} s\n", l.trace.name,
             l.trace.size(), l.trace.num_block_accesses(), args.out, args.to, secs);
}

void add(CLI::App& app) {
  auto* cmd = app.add_subcommand("trace", "characterize, convert and list trace formats");
  cmd->require_subcommand(1);

  auto sargs = std::make_shared<StatsArgs>();
  auto* st = cmd->add_subcommand("stats", "requests, sessions, turns, blocks, lengths, rate");
  sargs->trace.add(st, true);
  st->add_flag("--infer-sessions", sargs->infer, "infer sessions from shared prompt prefixes");
  st->add_option("--session-min-blocks", sargs->min_parent_blocks,
                 "full blocks a request needs before a later one can continue it")
      ->capture_default_str();
  st->add_option("--json", sargs->json, "also write the statistics as one JSON object");
  st->callback([sargs] { stats(*sargs); });

  auto cargs = std::make_shared<ConvertArgs>();
  auto* cv = cmd->add_subcommand("convert", "write a trace as a native cache or oracleGeneral");
  cargs->trace.add(cv, true);
  cv->add_option("--to", cargs->to, "output format")
      ->required()
      ->check(CLI::IsMember({"native", "oracle-general"}));
  cv->add_option("--out,-o", cargs->out, "output file (.kvtrace, .oracleGeneral)")->required();
  cv->add_flag("--infer-sessions", cargs->infer, "infer sessions before writing (native)");
  cv->add_option("--session-min-blocks", cargs->min_parent_blocks,
                 "full blocks a request needs before a later one can continue it")
      ->capture_default_str();
  cv->add_option("--obj-size", cargs->obj_size,
                 "oracleGeneral obj_size of every block (1: libCacheSim sizes count blocks)")
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
