// `kvpolicy embed generate|bench|load-redis`: the DLRM embedding cache of the LCR paper
// (docs/results/embed.md): workloads, the SLS benchmark over the set-associative cache with the
// in-memory or the Redis store, and filling Redis.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/capacity.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/resumable.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/embed/redis_server.h"
#include "kvpolicy/embed/sls.h"
#include "kvpolicy/embed/stores.h"
#include "kvpolicy/embed/workload.h"

namespace kvpolicy::cli {
namespace {

using namespace kvpolicy::embed;

// Where the workload comes from: a trace file (the user format), or a generator.
struct WorkloadArgs {
  std::string trace;
  std::string kind = "dlrm";
  std::string stats;  // locality statistics file (default: KVPOLICY_DATA's 2021 file)
  uint32_t block = 0;
  uint64_t samples = 100000;
  uint32_t tables = 8;
  double pooling = 50;
  double drift = 0;
  uint64_t keys = 1000000;  // zipf
  double alpha = 0.9;       // zipf
  uint64_t seed = 1;
  bool skip_bad_lines = false;

  void add(CLI::App* cmd) {
    input_file(cmd->add_option(
        "--trace,-t", trace,
        "embedding lookups as CSV (timestamp_us,table,index,sample); default: generate"));
    cmd->add_option("--kind", kind, "generator when no --trace: dlrm or zipf")
        ->check(CLI::IsMember({"dlrm", "zipf"}))
        ->capture_default_str();
    input_file(cmd->add_option("--stats", stats,
                               "dlrm: Meta's locality statistics file (default: "
                               "$KVPOLICY_DATA/dlrm-locality/locality_stats_2021_t856.txt)"));
    cmd->add_option("--block", block, "dlrm: which block of the statistics file")
        ->capture_default_str();
    cmd->add_option("--samples", samples, "samples to generate")
        ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}))
        ->capture_default_str();
    cmd->add_option("--tables", tables, "embedding tables")
        ->check(CLI::Range(1u, 1u << 20))
        ->capture_default_str();
    cmd->add_option("--pooling", pooling, "mean lookups per sample")
        ->check(finite_in(1, 1e6))
        ->capture_default_str();
    cmd->add_option("--drift", drift, "dlrm: share of the hot set replaced over the trace, 0..1")
        ->check(finite_in(0, 1))
        ->capture_default_str();
    cmd->add_option("--keys", keys, "zipf: distinct keys")
        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40))
        ->capture_default_str();
    cmd->add_option("--alpha", alpha, "zipf: skew")->check(finite_in(0, 10))->capture_default_str();
    cmd->add_option("--seed", seed, "generator seed")->capture_default_str();
    cmd->add_flag("--skip-bad-lines", skip_bad_lines, "skip and count bad CSV rows");
  }

  std::string stats_path() const {
    if (!stats.empty()) return stats;
    const char* data = std::getenv("KVPOLICY_DATA");
    std::string path = std::string(data ? data : "../shared/traces") +
                       "/dlrm-locality/locality_stats_2021_t856.txt";
    if (!std::filesystem::exists(path))
      throw ConfigError("no locality statistics at " + path +
                        ": give --stats FILE, set KVPOLICY_DATA, or use --kind zipf");
    return path;
  }

  EmbeddingTrace load(std::optional<ReuseHistogram>* target = nullptr) const {
    if (!trace.empty()) {
      EmbeddingCsvReport report;
      EmbeddingTrace t = read_embedding_csv(trace, skip_bad_lines, &report);
      if (report.skipped_rows)
        fmt::print(stderr, "kvpolicy: skipped {} bad row(s) of {}; first: {}\n",
                   report.skipped_rows, report.rows + report.skipped_rows, report.first_skipped);
      return t;
    }
    if (kind == "zipf") return generate_zipf(keys, alpha, samples, pooling, tables, seed);
    std::vector<ReuseHistogram> blocks = read_locality_stats(stats_path());
    if (block >= blocks.size())
      throw ConfigError(
          fmt::format("--block {}: the statistics file has {} blocks", block, blocks.size()));
    DlrmOptions o;
    o.target = blocks[block];
    o.tables = tables;
    o.samples = samples;
    o.pooling = pooling;
    o.drift = drift;
    o.seed = seed;
    if (target) *target = o.target;
    return generate_dlrm(o);
  }
};

void print_histogram(const EmbeddingTrace& t, const std::optional<ReuseHistogram>& target) {
  ReuseHistogram got = reuse_histogram(t);
  fmt::print("{}: {} samples, {} lookups, {} distinct keys, mean reuse {:.2f}{}\n", t.name,
             t.samples(), t.lookups(), count_unique_keys(t), got.avg_reuse,
             target ? fmt::format(" (target {:.2f}, {})", target->avg_reuse, target->source) : "");
  fmt::print("reuse count   keys %   lookups %{}\n", target ? "   target keys %" : "");
  for (size_t b = 0; b < got.key_share.size(); ++b) {
    double want = target && b < target->key_share.size() ? target->key_share[b] : 0;
    if (got.key_share[b] == 0 && want == 0) continue;
    fmt::print("{:<12} {:>7.2f} {:>11.2f}", reuse_bin_label(b), 100 * got.key_share[b],
               100 * got.lookup_share[b]);
    if (target) fmt::print(" {:>16.2f}", 100 * want);
    fmt::print("\n");
  }
}

// Redis: a server given by address, or one started here for the run (a temporary directory
// and unix socket, stopped at the end).
struct RedisArgs {
  std::string address;  // host:port or a redis:// URL
  std::string socket;
  std::string password;
  uint32_t retries = 0;

  void add(CLI::App* cmd) {
    cmd->add_option("--redis", address,
                    "Redis at HOST:PORT or redis://[[USER]:PASSWORD@]HOST[:PORT]/ (default: "
                    "start one on a unix socket)");
    cmd->add_option("--redis-socket", socket, "Redis at this unix socket");
    cmd->add_option("--redis-password", password,
                    "AUTH with this password (a server with requirepass); a password in the "
                    "--redis URL is the same");
    cmd->add_option("--redis-retries", retries,
                    "reconnect attempts with backoff when Redis fails mid-run")
        ->capture_default_str();
  }
  bool given() const { return !address.empty() || !socket.empty(); }
  RedisOptions options(const std::string& started_socket) const {
    RedisOptions o;
    if (!socket.empty() || !started_socket.empty()) {
      o.unix_socket = socket.empty() ? started_socket : socket;
    } else {
      o = parse_redis_address(address, "--redis");
    }
    if (!password.empty()) {
      if (!o.password.empty() && o.password != password)
        throw ConfigError("--redis-password and the --redis URL give different passwords");
      o.password = password;
    }
    if (!o.password.empty() && !started_socket.empty() && socket.empty())
      throw ConfigError("--redis-password: the Redis started for this run has no password");
    o.retries = retries;
    return o;
  }
};

std::vector<double> parse_ratios(const std::string& text) {
  std::vector<double> out;
  for (const std::string& item : split_list(text)) {
    CapacitySpec c = parse_capacity(item);
    if (!c.is_fraction() || !(c.value > 0))
      throw ConfigError("--ratio '" + item + "': a share of the distinct keys, like 1% or 0.02");
    out.push_back(c.value);
  }
  return out;
}

std::vector<uint32_t> parse_batches(const std::string& text) {
  std::vector<uint32_t> out;
  for (const std::string& item : split_list(text)) {
    out.push_back(
        static_cast<uint32_t>(checked_uint(item, 1, 1000000, "--batch (samples per query)")));
  }
  return out;
}

struct BenchArgs {
  WorkloadArgs workload;
  RedisArgs redis;
  std::string policies = "lru,fpb,hf,laru";
  std::string predictor = "gbm";
  double noise = 0;
  std::string ratios = "1%,2%,3%";
  std::string batches = "128,512,2048";
  std::string stores = "memory";
  uint32_t dim = 128;
  bool sync = false;
  std::string json;
};

void bench(const BenchArgs& a) {
  std::vector<SetPolicy> policies;
  for (const std::string& p : split_list(a.policies)) policies.push_back(parse_set_policy(p));
  PredictorKind predictor = parse_predictor(a.predictor);
  std::vector<double> ratios = parse_ratios(a.ratios);
  std::vector<uint32_t> batches = parse_batches(a.batches);
  std::vector<std::string> stores = split_list(a.stores);
  for (auto& s : stores)
    if (s != "memory" && s != "redis") throw ConfigError("--store '" + s + "': memory or redis");
  ResultsFile json;
  if (!a.json.empty()) json = ResultsFile(a.json, true);

  std::optional<ReuseHistogram> target;
  EmbeddingTrace trace = a.workload.load(&target);
  size_t distinct = count_unique_keys(trace);
  fmt::print("workload {}: {} samples, {} lookups, {} distinct keys; rows of {} floats\n",
             trace.name, trace.samples(), trace.lookups(), distinct, a.dim);
  std::vector<EmbKey> keys(trace.keys);
  for (const std::string& store_name : stores) {
    std::unique_ptr<EmbeddingStore> store;
    std::unique_ptr<RedisServer> server;
    if (store_name == "memory") {
      store = std::make_unique<MemoryStore>(keys, a.dim);
    } else {
      if (!a.redis.given()) server = std::make_unique<RedisServer>();
      auto redis = std::make_unique<RedisStore>(
          a.redis.options(server ? server->socket() : std::string()), a.dim);
      if (server) load_synthetic(*redis, keys);  // a server of our own starts empty
      store = std::move(redis);
    }
    fmt::print("\nstore {}; predictor {}{} ({}); latency = wall time of one SLS query\n",
               store->name(), predictor_name(predictor),
               predictor == PredictorKind::kNoisy ? fmt::format(" p={}", a.noise) : "",
               a.sync ? "sync" : "async, as in the paper");
    for (double ratio : ratios) {
      for (uint32_t batch : batches) {
        size_t capacity = std::max<size_t>(1, static_cast<size_t>(ratio * double(distinct)));
        fmt::print("\ncache {:g}% of distinct keys ({} rows), batch {} samples\n", ratio * 100,
                   capacity, batch);
        fmt::print("  {:<6} {:>7} {:>10} {:>10} {:>14} {:>10}\n", "policy", "hit %", "mean ms",
                   "P99 ms", "samples/s", "vs LRU");
        double lru_mean = 0;
        for (SetPolicy p : policies) {
          SlsOptions o;
          o.capacity = capacity;
          o.policy = p;
          o.predictor = predictor;
          o.noise_p = a.noise;
          o.async = !a.sync;
          o.batch = batch;
          o.seed = a.workload.seed;
          Progress progress(fmt::format("sls {}", set_policy_name(p)));
          o.progress = [&](double f) { progress.update(f); };
          SlsResult r = run_sls(trace, *store, o);
          if (p == SetPolicy::kLru) lru_mean = r.mean_latency_ms;
          std::string vs = lru_mean > 0 && p != SetPolicy::kLru
                               ? fmt::format("{:+.1f}%", 100 * (r.mean_latency_ms / lru_mean - 1))
                               : "";
          fmt::print("  {:<6} {:>7.2f} {:>10.3f} {:>10.3f} {:>14.0f} {:>10}\n", r.policy,
                     100 * r.hit_rate, r.mean_latency_ms, r.p99_latency_ms, r.throughput, vs);
          if (json.is_open()) json.append(r.to_json());
        }
      }
    }
  }
}

void add(CLI::App& app) {
  auto* embed = app.add_subcommand(
      "embed", "the DLRM embedding cache (LCR paper): workloads, the SLS benchmark, Redis");
  embed->require_subcommand(1);

  auto gen = std::make_shared<WorkloadArgs>();
  auto out = std::make_shared<std::string>();
  auto* g = embed->add_subcommand("generate", "generate embedding lookups and write them as CSV");
  gen->add(g);
  output_file(g->add_option("--out,-o", *out, "output CSV"))->required();
  g->callback([gen, out] {
    std::optional<ReuseHistogram> target;
    EmbeddingTrace t = gen->load(&target);
    write_embedding_csv(t, *out);
    print_histogram(t, target);
    fmt::print("wrote {}\n", *out);
  });

  auto b = std::make_shared<BenchArgs>();
  auto* bc = embed->add_subcommand(
      "bench", "SLS through the set-associative cache: hit rate, latency, throughput per policy");
  b->workload.add(bc);
  b->redis.add(bc);
  bc->add_option("--policy,-p", b->policies, "lru, fpb, hf, laru (comma-separated)")
      ->capture_default_str();
  bc->add_option("--predictor", b->predictor,
                 "gbm (4 features, the paper's), weak (1 feature, 1 tree), oracle, noisy")
      ->capture_default_str();
  bc->add_option("--noise", b->noise, "noisy: share of answers replaced by the adversary")
      ->check(finite_in(0, 1))
      ->capture_default_str();
  bc->add_option("--ratio", b->ratios, "cache sizes as shares of the distinct keys")
      ->capture_default_str();
  bc->add_option("--batch", b->batches, "samples per SLS query")->capture_default_str();
  bc->add_option("--store", b->stores, "memory, redis, or both (comma-separated)")
      ->capture_default_str();
  bc->add_option("--dim", b->dim, "floats per row")
      ->check(CLI::Range(1u, 65536u))
      ->capture_default_str();
  bc->add_flag("--sync", b->sync, "predict inline (deterministic) instead of in the background");
  output_file(bc->add_option("--json", b->json, "one JSON line per result"));
  bc->footer(
      "hit % = share of a query's distinct keys found cached; latency = wall time of one query "
      "(dedup, cache probes, store fetch of the misses, inserts, pooling); samples/s = samples "
      "over the summed query time. Paper: LCR (LARU), section 4, Figures 9 and 10.");
  bc->callback([b] { bench(*b); });

  auto load = std::make_shared<WorkloadArgs>();
  auto lr = std::make_shared<RedisArgs>();
  auto dim = std::make_shared<uint32_t>(128);
  auto* l = embed->add_subcommand("load-redis", "store the rows of a workload's keys in Redis");
  load->add(l);
  lr->add(l);
  l->add_option("--dim", *dim, "floats per row")->check(CLI::Range(1u, 65536u));
  l->callback([load, lr, dim] {
    if (!lr->given()) throw ConfigError("load-redis needs --redis HOST:PORT or --redis-socket");
    EmbeddingTrace t = load->load();
    RedisStore store(lr->options(""), *dim);
    load_synthetic(store, t.keys);
    fmt::print("stored the rows of {} distinct keys in {} ({} round trips)\n", count_unique_keys(t),
               store.name(), store.round_trips());
  });
}

CommandRegistrar registrar(58, add);

}  // namespace
}  // namespace kvpolicy::cli
