// recommend's object, its fields declared once (docs/formats.md), its JSON and its printed form.
#include <fmt/format.h>

#include "kvpolicy/app/recommend.h"
#include "kvpolicy/core/json_writer.h"

namespace kvpolicy::app {
namespace {

using R = Recommendation;
using E = EngineConfig;

// A field written by `write` only (recommend's object is an answer, never read back).
template <typename T>
ResultFieldOf<T> out(std::string name, std::string type, std::string unit, std::string desc,
                     std::function<void(const T&, JsonObject&)> write) {
  return {std::move(name), std::move(type), std::move(unit), std::move(desc), std::move(write), {}};
}

std::string candidates_json(const std::vector<RecommendCandidate>& cs) {
  std::string s = "[";
  for (const RecommendCandidate& c : cs) {
    JsonObject o;
    o.add("policy", c.policy);
    o.add("block_hit_rate", c.block_hit_rate);
    o.raw("offline", c.offline ? "true" : "false");
    s += (s.size() > 1 ? "," : "") + o.str();
  }
  return s + "]";
}

std::string engine_json(const EngineConfig& e) {
  JsonObject o;
  for (const auto& f : engine_config_fields()) f.write(e, o);
  return o.str();
}

}  // namespace

const std::vector<ResultFieldOf<EngineConfig>>& engine_config_fields() {
  using namespace result_fields;
  static const std::vector<ResultFieldOf<E>> fields = {
      text<E>("policy", &E::policy,
              "what this engine's configuration runs: the chosen policy, or the best candidate "
              "the engine runs in full when it cannot"),
      out<E>("block_hit_rate", "number or null", "",
             "that policy's block hit rate in the replay; null when not measured",
             [](const E& e, JsonObject& o) {
               if (e.block_hit_rate < 0)
                 o.add_null("block_hit_rate");
               else
                 o.add("block_hit_rate", e.block_hit_rate);
             }),
      text<E>("support", &E::support,
              "how the engine runs policy: native (its own policy), score (a score strategy of "
              "kvpolicy's plugin), kvpolicy (kvpolicy's adapter), or cannot"),
      text<E>("chosen_support", &E::chosen_support,
              "how it runs the chosen policy: as support, partial (without request fields it "
              "reads), or cannot"),
      text<E>("install", &E::install, "the install line; empty when it cannot"),
      text<E>("config", &E::config,
              "vLLM: the --kv-transfer-config JSON; SGLang: the environment and flags; LMCache: "
              "the EvictionConfig YAML keys; empty when it cannot"),
      text<E>("command", &E::command, "the engine's launch line (or flags) with it; MODEL to fill"),
      text<E>("alternative", &E::alternative,
              "the kvpolicy-adapter form when config is the engine's own or a score; when the "
              "engine runs another policy than the chosen one partially, the chosen one's; else "
              "empty"),
      text<E>("requires_version", &E::requires_version,
              "the engine version or change the configuration needs; empty when any"),
      text<E>("why", &E::why,
              "why it cannot, or what running in the engine changes against the replay"),
  };
  return fields;
}

const std::vector<ResultFieldOf<Recommendation>>& recommend_fields() {
  using namespace result_fields;
  static const std::vector<ResultFieldOf<R>> fields = {
      text<R>("source", &R::source, "trace (replayed here) or results (read from a file)"),
      text<R>("input", &R::input, "the trace or result file read"),
      text<R>("trace", &R::trace, "the trace's name (its path as replayed)"),
      text<R>("policy", &R::policy, "the chosen policy's spec, name[:key=value,...]"),
      flag<R>("forced", &R::forced, "chosen by --policy rather than by hit rate"),
      flag<R>("randomized", &R::randomized, "the policy's decisions depend on its seed"),
      integer<R>("capacity_blocks", &R::capacity_blocks, "blocks", "the capacity compared at"),
      number<R>("capacity_gb", &R::capacity_gb, 3, -1, "GB", "the same as KV memory"),
      number_or_null<R>("capacity_share", &R::capacity_share,
                        "the same as a share of the trace's unique blocks; null when unknown"),
      integer<R>("block_tokens", &R::block_tokens, "tokens", "tokens per block"),
      number<R>("kv_bytes_per_block", &R::kv_bytes_per_block, 0, -1, "bytes",
                "KV bytes of one block (cost model, KV dtype, block tokens)"),
      text<R>("cost_model", &R::cost_model, "the cost model that turned blocks into bytes"),
      integer<R>("block_accesses", &R::block_accesses, "", "prompt blocks of the trace"),
      number<R>("block_hit_rate", &R::block_hit_rate, 6, -1, "", "the chosen policy's"),
      number<R>("lru_hit_rate", &R::lru_hit_rate, 6, -1, "", "LRU's at the same capacity"),
      number<R>("margin_points", &R::margin_points, 3, -1, "points",
                "(block_hit_rate - lru_hit_rate) x 100"),
      number<R>("noise_points", &R::noise_points, 3, -1, "points",
                "margins below this are noise: two standard errors of a difference of two hit "
                "rates over block_accesses, at least 0.1, and a randomized policy's seed spread"),
      number_or_null<R>("seed_spread_points", &R::seed_spread_points,
                        "a randomized policy's hit rate spread over three seeds, points (trace "
                        "only); null when not run"),
      flag<R>("within_noise", &R::within_noise, "|margin_points| < noise_points"),
      out<R>("candidates", "array", "",
             "every policy compared, best first: objects with policy, block_hit_rate, offline",
             [](const R& r, JsonObject& o) { o.raw("candidates", candidates_json(r.candidates)); }),
      out<R>("engines", "object", "",
             "vllm, sglang and lmcache: each an object of the fields below",
             [](const R& r, JsonObject& o) {
               JsonObject e;
               for (const EngineConfig& c : r.engines) e.raw(c.engine, engine_json(c));
               o.raw("engines", e.str());
             }),
  };
  return fields;
}

std::string Recommendation::to_json() const {
  JsonObject o;
  for (const auto& f : recommend_fields()) f.write(*this, o);
  return o.str();
}

std::string Recommendation::text() const {
  std::string s;
  s += fmt::format("recommend: {} ({}), capacity {} blocks", trace,
                   source == "trace" ? "replayed" : "rows of " + input, capacity_blocks);
  if (capacity_share >= 0) s += fmt::format(" = {:.2f} % of unique blocks", capacity_share * 100);
  s += fmt::format(" = {:.3g} GB of KV ({}), blocks of {} tokens\n\n", capacity_gb, cost_model,
                   block_tokens);
  size_t w = 16;
  for (const auto& c : candidates) w = std::max(w, c.policy.size() + 2);
  s += fmt::format("{:<{}}{:>12}\n", "policy", w, "block hit %");
  for (const auto& c : candidates) {
    std::string mark = c.policy == policy ? "  <- chosen" : c.offline ? "  (offline)" : "";
    s += fmt::format("{:<{}}{:>12.2f}{}\n", c.policy, w, c.block_hit_rate * 100, mark);
  }
  s += fmt::format(
      "\n{} {}: {:+.2f} points over LRU; noise {:.2f} points{}: {}\n", forced ? "forced" : "chosen",
      policy, margin_points, noise_points,
      seed_spread_points >= 0 ? fmt::format(" (seed spread {:.2f})", seed_spread_points) : "",
      within_noise ? "within noise, LRU does as well" : "a margin beyond noise");
  const char* names[] = {"vLLM", "SGLang", "LMCache"};
  for (size_t i = 0; i < engines.size(); ++i) {
    const EngineConfig& e = engines[i];
    s += fmt::format("\n{}: {} ({}){}:\n", i < 3 ? names[i] : e.engine.c_str(), e.policy, e.support,
                     e.policy == policy ? "" : ", instead of " + policy);
    if (e.support == "cannot") {
      s += "  cannot: " + e.why + "\n";
      continue;
    }
    s += "  install: " + e.install + "\n";
    // A multi-line configuration (LMCache's YAML) is not in the launch line: shown on its own.
    if (e.config.find('\n') != std::string::npos) {
      std::string config = e.config;
      for (size_t at = 0;
           (at = config.find('\n', at)) != std::string::npos && at + 1 < config.size(); at += 5)
        config.replace(at, 1, "\n    ");
      s += "  config:\n    " + config;
    }
    s += "  run:     " + e.command + "\n";
    if (!e.alternative.empty())
      s += (e.policy == policy ? "  or, with kvpolicy's adapter: "
                               : "  or, with the request fields " + policy + " reads: ") +
           e.alternative + "\n";
    if (!e.requires_version.empty()) s += "  needs:   " + e.requires_version + "\n";
    s += "  note:    " + e.why + "\n";
  }
  return s;
}

}  // namespace kvpolicy::app
