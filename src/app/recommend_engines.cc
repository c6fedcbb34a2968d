// The chosen policy in vLLM, SGLang and LMCache (docs/engines.md): which form each engine takes
// it in (its own native policy, a score strategy, kvpolicy's adapter) or why it cannot, and the
// configuration to paste. The engines' seams and the names are those of docs/engines.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kvpolicy/app/recommend.h"
#include "kvpolicy/core/json_writer.h"

namespace kvpolicy::app {
namespace {

// The request fields a policy may read besides its block accesses.
enum Field : unsigned {
  kSession = 1,
  kTurn = 2,
  kTime = 4,
  kCategory = 8,
  kTokens = 16,  // prompt and output lengths
  kPriority = 32,
};
constexpr unsigned kPredictorFeatures = kTime | kSession | kTurn | kCategory;
constexpr unsigned kTlru = kSession | kTurn | kTokens;
// What each engine hands kvpolicy's adapter: vLLM's kv_transfer_params keys kvpolicy_session,
// kvpolicy_turn, kvpolicy_time; SGLang's backend the clock; LMCache's policy nothing.
constexpr unsigned kVllmFields = kSession | kTurn | kTime;
constexpr unsigned kSglangFields = kTime;

// "session, turn, time": the fields of `bits`, in words.
std::string fields_text(unsigned bits) {
  static const std::pair<unsigned, const char*> names[] = {{kSession, "session"},
                                                           {kTurn, "turn"},
                                                           {kTime, "time"},
                                                           {kCategory, "category"},
                                                           {kTokens, "prompt and output lengths"},
                                                           {kPriority, "priority"}};
  std::string out;
  for (auto [bit, name] : names)
    if (bits & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

// What the engines know of a kvpolicy policy, by name: its native counterpart in each engine,
// and what it reads besides the block accesses. A policy not listed reads only the accesses.
struct Knowledge {
  const char* name;
  const char* sglang_native = nullptr;  // SGLang's own --radix-eviction-policy of that name
  const char* sglang_param = nullptr;   // the one parameter SGLang's config JSON takes for it
  const char* sglang_score = nullptr;   // the score strategy kvpolicy's SGLang plugin registers
  const char* vllm_native = nullptr;    // vLLM's built-in CachePolicy of that name
  const char* lmcache_native = nullptr;
  unsigned reads = 0;        // the request fields it reads (Field bits)
  bool depth_aware = false;  // a term reads the block's depth or prefix path
};

const std::vector<Knowledge>& knowledge() {
  static const std::vector<Knowledge> k = {
      {.name = "lru", .sglang_native = "lru", .vllm_native = "lru", .lmcache_native = "LRU"},
      {.name = "lfu", .sglang_native = "lfu"},
      {.name = "fifo", .sglang_native = "fifo"},
      {.name = "slru", .sglang_native = "slru", .sglang_param = "protected_threshold"},
      // SGLang keeps a node's highest request priority: kvpolicy's combine=max.
      {.name = "priority", .sglang_native = "priority", .reads = kPriority},
      {.name = "gdsf", .sglang_score = "kvp_gdsf", .depth_aware = true},
      {.name = "hpt", .sglang_score = "kvp_hpt", .depth_aware = true},
      {.name = "wa", .reads = kCategory | kTurn | kTime, .depth_aware = true},
      {.name = "tlru", .reads = kTlru},
      {.name = "tlru_end", .reads = kTlru},
      {.name = "tlru_length", .reads = kTlru},
      {.name = "threshold_lru", .reads = kTlru},
      {.name = "laru", .reads = kPredictorFeatures},
      {.name = "fpb", .reads = kPredictorFeatures},
      {.name = "hf", .reads = kPredictorFeatures},
  };
  return k;
}

const Knowledge& knowledge_of(const std::string& name) {
  static const Knowledge none{.name = ""};
  for (const Knowledge& k : knowledge())
    if (name == k.name) return k;
  return none;
}

// What the engines know of the spec: a guarded policy's is its inner policy's (it reads what
// that reads), auto's is every candidate's together (each hears every request), without the
// native forms (neither is an engine's own policy).
Knowledge knowledge_of(const PolicySpec& spec) {
  if (spec.name != "guarded" && spec.name != "auto") return knowledge_of(spec.name);
  const PolicyInfo& info = PolicyRegistry::instance().get(spec.name);
  Params p = Params::parse(spec.params, info.params, "policy " + spec.name);
  Knowledge k{.name = spec.name == "guarded" ? "guarded" : "auto"};
  auto add = [&k](const Knowledge& part) {
    k.reads |= part.reads;
    k.depth_aware = k.depth_aware || part.depth_aware;
  };
  if (spec.name == "guarded") {
    add(knowledge_of(p.get_string("inner")));
  } else {  // candidates "lru|s3fifo|fpb:predictor=reuse": a name ends at ':' or ';'
    std::string list = p.get_string("candidates");
    for (size_t start = 0; start <= list.size();) {
      size_t bar = std::min(list.find('|', start), list.size());
      std::string item = list.substr(start, bar - start);
      add(knowledge_of(item.substr(0, item.find_first_of(":;"))));
      start = bar + 1;
    }
  }
  return k;
}

bool reads_scores(const PolicySpec& spec) {
  const PolicyInfo& info = PolicyRegistry::instance().get(spec.name);
  if (!info.reads_trace_scores_with) return false;
  return info.reads_trace_scores_with(
      Params::parse(spec.params, info.params, "policy " + spec.name));
}

// The spec's parameters as key=value pairs, in order.
std::vector<std::pair<std::string, std::string>> params_of(const PolicySpec& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start < spec.params.size()) {
    size_t end = spec.params.find(',', start);
    if (end == std::string::npos) end = spec.params.size();
    std::string item = spec.params.substr(start, end - start);
    size_t eq = item.find('=');
    out.emplace_back(item.substr(0, eq), eq == std::string::npos ? "" : item.substr(eq + 1));
    start = end + 1;
  }
  return out;
}

// A parameter value as JSON: a number as it is, anything else a string.
std::string json_value(const std::string& v) {
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  bool number = !v.empty() && end == v.c_str() + v.size() && std::isfinite(d);
  return number ? v : json_string(v);
}

// The install lines name the package by a checkout of this repository, ./kvpolicy (it is not
// on PyPI; pip builds it, docs/api.md).

// Single-quoted for a POSIX shell (the JSON and specs hold no single quote).
std::string shell_quoted(const std::string& s) { return "'" + s + "'"; }

// Why no engine can run it, or "" when some can: the future, or a per-request score.
std::string cannot_anywhere(const PolicySpec& spec) {
  if (needs_future(spec))
    return "it reads the trace's future (each block's next use): a replay-only reference that "
           "no engine can run";
  if (reads_scores(spec))
    return "it needs each request's continuation score (LPC's classifier output), which the "
           "engine does not pass to its cache";
  return "";
}

EngineConfig cannot(const char* engine, std::string why) {
  EngineConfig e;
  e.engine = engine;
  e.support = "cannot";
  e.limit = why;
  e.why = std::move(why);
  return e;
}

constexpr const char* kFlat =
    "the tier is flat: every block stands alone (no prefix tree), so leaf-first order does not "
    "apply and any block unpinned may leave";

EngineConfig vllm(const Recommendation& r, const PolicySpec& spec, const Knowledge& k) {
  if (std::string why = cannot_anywhere(spec); !why.empty()) return cannot("vllm", why);
  if (k.reads & kPriority)
    return cannot("vllm",
                  "it needs each request's priority; vLLM's offload tier hears none (no "
                  "kv_transfer_params key carries it), so it would run as LRU");
  EngineConfig e;
  e.engine = "vllm";
  auto config = [&](const std::string& policy, bool module) {
    JsonObject extra;
    extra.add("cpu_bytes_to_use", static_cast<uint64_t>(std::llround(r.kv_bytes_per_block *
                                                                     double(r.capacity_blocks))));
    extra.add("block_size", r.block_tokens);
    extra.add("eviction_policy", policy);
    if (module) extra.add("cache_policy_module_path", "kvpolicy.integrations.vllm");
    JsonObject c;
    c.add("kv_connector", "OffloadingConnector");
    c.add("kv_role", "kv_both");
    c.raw("kv_connector_extra_config", extra.str());
    return c.str();
  };
  bool native = k.vllm_native && spec.params.empty();
  e.support = native ? "native" : "kvpolicy";
  e.config = native ? config(k.vllm_native, false) : config("kvp:" + spec.label(), true);
  if (native) e.alternative = config("kvp:" + spec.label(), true);
  e.install = native ? "pip install vllm" : "pip install ./kvpolicy vllm";
  e.command = "vllm serve MODEL --kv-transfer-config " + shell_quoted(e.config);
  e.requires_version =
      "vLLM with cache_policy_module_path (PR #49114; at 2f41c894, 2026-08-20, and later)";
  std::string why = std::string("the CPU offload tier (OffloadingConnector) runs the policy; ") +
                    kFlat +
                    "; cpu_bytes_to_use is the replay's capacity (vLLM divides it by "
                    "its 4 KiB-aligned bytes per block, so the tier may hold a few blocks less); "
                    "block_size must be a multiple of vLLM's --block-size";
  if (k.depth_aware)
    why += fmt::format("; {}'s depth or path term sees every block at depth 1", spec.name);
  if (k.reads)
    why += fmt::format(
        "; it reads {}: pass kvpolicy_session, kvpolicy_turn and kvpolicy_time (seconds) in each "
        "request's kv_transfer_params, or every request is its own session",
        fields_text(k.reads));
  if (unsigned missing = k.reads & ~kVllmFields) {
    e.partial = true;
    e.missing = fields_text(missing);
    e.limit = fmt::format(
        "it reads {}, which vLLM's adapter does not get (kv_transfer_params "
        "carries session, turn and time only)",
        fields_text(missing));
    why += "; " + e.limit;
  }
  e.why = why;
  return e;
}

EngineConfig sglang(const Recommendation& r, const PolicySpec& spec, const Knowledge& k) {
  if (std::string why = cannot_anywhere(spec); !why.empty()) return cannot("sglang", why);
  EngineConfig e;
  e.engine = "sglang";
  std::string launch = "python -m sglang.launch_server --model-path MODEL ";
  std::string backend = fmt::format(
      "SGLANG_PLUGINS=kvpolicy KVPOLICY_SGLANG_SPEC={} KVPOLICY_SGLANG_BLOCK_TOKENS={} "
      "--radix-cache-backend kvpolicy",
      shell_quoted(spec.label()), r.block_tokens);
  auto params = params_of(spec);
  // SGLang's own policy: no parameter, or only the one its config JSON takes.
  bool native = k.sglang_native && (params.empty() || (params.size() == 1 && k.sglang_param &&
                                                       params[0].first == k.sglang_param));
  if (spec.name == "priority")  // SGLang's priority is kvpolicy's combine=max
    native = params.empty() ||
             (params.size() == 1 && params[0].first == "combine" && params[0].second == "max");
  bool score = !native && k.sglang_score && params.empty();
  std::string why;
  if (native) {
    e.support = "native";
    e.config = fmt::format("--radix-eviction-policy {}", k.sglang_native);
    if (!params.empty() && k.sglang_param) {
      JsonObject c;
      c.raw(k.sglang_param, json_value(params[0].second));
      e.config += " --radix-eviction-policy-config " + shell_quoted(c.str());
      e.requires_version =
          "--radix-eviction-policy-config: SGLang with PR #37795 (merged 2026-09; not in "
          "f1b9a1f4 of 2026-08-20; reported first in release 0.5.20, not verified here)";
    }
    e.install = "pip install sglang";
    why =
        "SGLang's own strategy, scored on whole radix nodes (it evicts a whole leaf node, "
        "kvpolicy's replay one block)";
  } else if (score) {
    e.support = "score";
    e.config = fmt::format("SGLANG_PLUGINS=kvpolicy --radix-eviction-policy {}", k.sglang_score);
    e.install = "pip install ./kvpolicy sglang";
    why =
        "a score strategy registered by kvpolicy's SGLang plugin, called on every evictable "
        "leaf at each eviction";
  } else {
    e.support = "kvpolicy";
    e.config = backend;
    e.install = "pip install ./kvpolicy sglang";
    e.requires_version =
        "SGLang with register_radix_cache_backend and --radix-cache-backend (at f1b9a1f4, "
        "2026-08-20, and later)";
    why =
        "kvpolicy's RadixCache backend decides evictions over the radix tree, in blocks of "
        "KVPOLICY_SGLANG_BLOCK_TOKENS tokens (the replay's block size)";
    if (unsigned missing = k.reads & ~kSglangFields) {
      e.partial = true;
      e.missing = fields_text(missing);
      e.limit = fmt::format(
          "it reads {}: kvpolicy's SGLang backend tells the policy each request's time only, so "
          "every request is a session of its own",
          fields_text(missing));
      why += "; " + e.limit;
    }
  }
  if (native || score) e.alternative = backend;
  // The launch line: the environment first, then the server and its flags.
  size_t flags = e.config.find("--");
  e.command = e.config.substr(0, flags) + launch + e.config.substr(flags);
  why +=
      "; the pool is SGLang's own GPU KV memory (--mem-fraction-static), not the replay's "
      "capacity";
  e.why = why;
  return e;
}

EngineConfig lmcache(const Recommendation& r, const PolicySpec& spec, const Knowledge& k) {
  if (std::string why = cannot_anywhere(spec); !why.empty()) return cannot("lmcache", why);
  if (k.reads)
    return cannot("lmcache",
                  fmt::format("it reads {}; LMCache's eviction policy hears only object keys "
                              "(created, touched, removed): no request field reaches it",
                              fields_text(k.reads)));
  EngineConfig e;
  e.engine = "lmcache";
  bool native = k.lmcache_native && spec.params.empty();
  std::string name = native ? k.lmcache_native : "kvp:" + spec.label();
  e.support = native ? "native" : "kvpolicy";
  e.config = fmt::format(
      "# EvictionConfig (lmcache.v1.distributed.config)\neviction_policy: {}\n"
      "trigger_watermark: 0.8\neviction_ratio: 0.2\n",
      json_string(name));
  double gib = r.kv_bytes_per_block * double(r.capacity_blocks) / double(1ull << 30);
  if (native) {
    e.install = "pip install lmcache";
    e.command = fmt::format(
        "--l1-size-gb {:.2f} --eviction-policy {} --eviction-trigger-watermark 0.8 "
        "--eviction-ratio 0.2",
        gib, k.lmcache_native);
  } else {
    // LMCache's command line accepts only its own names: install() routes LRU to the spec.
    e.install = fmt::format(
        "pip install ./kvpolicy lmcache; then, in the process, before LMCache builds its "
        "controllers: import kvpolicy.integrations.lmcache as k; "
        "k.install(capacity_chunks={}, chunk_tokens={}, replace={{\"LRU\": {}}})",
        r.capacity_blocks, r.block_tokens, json_string(spec.label()));
    e.command = fmt::format(
        "--l1-size-gb {:.2f} --eviction-policy LRU --eviction-trigger-watermark 0.8 "
        "--eviction-ratio 0.2",
        gib);
    e.requires_version =
        "LMCache's multiprocess (distributed) eviction controllers (PR #2824, 2026-03, and "
        "later); install() patches its closed CreateEvictionPolicy factory";
  }
  std::string why = std::string(kFlat) +
                    "; LMCache evicts in batches (eviction_ratio of the tier once its use "
                    "reaches trigger_watermark), so the tier runs below full, not full as in the "
                    "replay; its chunk_size should equal the replay's block size";
  if (k.depth_aware)
    why += fmt::format("; {}'s depth or path term sees every chunk at depth 1", spec.name);
  e.why = why;
  return e;
}

}  // namespace

// The fields `k` reads that the trace varies: one category throughout is nothing to miss.
Knowledge as_fed(Knowledge k, const Recommendation& r) {
  if (!r.varied_categories) k.reads &= ~unsigned(kCategory);
  return k;
}

std::vector<EngineConfig> engine_configs(const Recommendation& r) {
  PolicySpec spec = parse_policy_spec(r.policy);
  Knowledge k = as_fed(knowledge_of(spec), r);
  std::vector<EngineConfig> out = {vllm(r, spec, k), sglang(r, spec, k), lmcache(r, spec, k)};
  for (EngineConfig& e : out) {
    e.policy = r.policy;
    e.block_hit_rate = r.candidates.empty() ? -1 : r.block_hit_rate;
    e.chosen_support = e.partial ? "partial" : e.support;
  }
  // An engine that cannot run the choice with every field it reads runs the best candidate it
  // can (LRU, every engine's own, at worst), said in `why`.
  for (size_t i = 0; i < out.size(); ++i) {
    EngineConfig& e = out[i];
    if (e.support != "cannot" && !e.partial) continue;
    for (const RecommendCandidate& c : r.candidates) {
      if (c.offline || c.policy == r.policy) continue;
      Recommendation alt = r;
      alt.policy = c.policy;
      alt.candidates.clear();
      PolicySpec alt_spec = parse_policy_spec(c.policy);
      Knowledge alt_k = as_fed(knowledge_of(alt_spec), r);
      EngineConfig a = i == 0   ? vllm(alt, alt_spec, alt_k)
                       : i == 1 ? sglang(alt, alt_spec, alt_k)
                                : lmcache(alt, alt_spec, alt_k);
      if (a.support == "cannot" || a.partial) continue;
      a.policy = c.policy;
      a.block_hit_rate = c.block_hit_rate;
      a.chosen_support = e.chosen_support;
      if (e.support != "cannot") a.alternative = e.config;  // the choice, given the fields
      a.why = fmt::format("runs {} instead, the best candidate it runs in full ({} {}: {}); {}",
                          c.policy, r.policy, e.partial ? "would run partially" : "cannot run",
                          e.limit, a.why);
      e = std::move(a);
      break;
    }
  }
  return out;
}

std::string engine_matrix_markdown() {
  std::string out = "| policy | vLLM | SGLang | LMCache |\n|---|---|---|---|\n";
  Recommendation r;
  r.capacity_blocks = 1024;
  r.block_tokens = 16;
  r.kv_bytes_per_block = 1 << 20;
  std::vector<std::string> specs;
  for (const PolicyInfo& info : PolicyRegistry::instance().all()) specs.push_back(info.name);
  // Variants whose support differs from their policy's default: an online learned predictor,
  // SGLang's own slru with its threshold (a registered policy's only).
  for (const char* variant : {"laru:predictor=reuse", "slru:protected_threshold=4"}) {
    PolicySpec v = parse_policy_spec(variant);
    const auto& names = PolicyRegistry::instance().names();
    if (std::find(names.begin(), names.end(), v.name) != names.end()) specs.push_back(variant);
  }
  for (const std::string& spec : specs) {
    r.policy = spec;
    out += "| `" + spec + "` |";
    for (const EngineConfig& e : engine_configs(r)) {
      std::string cell = e.support;
      if (e.support == "score") {
        cell += " (`" + e.config.substr(e.config.rfind(' ') + 1) + "`)";
      } else if (e.support == "cannot") {
        // The reason's first clause: "it reads the trace's future (...)".
        std::string why = e.why.substr(0, e.why.find_first_of(":;"));
        if (why.rfind("it ", 0) == 0) why = why.substr(3);
        cell += ": " + why;
      } else if (e.partial) {
        cell += " (partial: no " + e.missing + ")";
      } else if (e.why.find("kvpolicy_session") != std::string::npos) {
        cell += " (session, turn, time from kv_transfer_params)";
      }
      out += " " + cell + " |";
    }
    out += "\n";
  }
  return out;
}

}  // namespace kvpolicy::app
