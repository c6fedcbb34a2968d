// GSP: groups of prompts sharing a prefix (SGLang's generated-shared-prefix benchmark, with the
// KVRouting defaults of ALGORITHMS.md section 5).
#include <fmt/format.h>

#include <algorithm>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/generators.h"

namespace kvpolicy {

uint64_t hash_tokens(const uint32_t* tokens, size_t count) {
  uint64_t h = 0x243f6a8885a308d3ULL ^ count;
  for (size_t i = 0; i < count; ++i) h = mix64(h ^ (uint64_t{tokens[i]} + 0x9e3779b97f4a7c15ULL));
  return h;
}

Trace generate_gsp(const GspParams& p, uint64_t seed) {
  if (p.groups == 0 || p.prompts_per_group == 0 || p.lengths.empty() || p.block_tokens == 0 ||
      p.rate <= 0 || p.shared_fraction < 0 || p.shared_fraction > 1)
    throw ConfigError(
        "gsp: groups, prompts, lengths, block_tokens and rate must be positive, "
        "shared_fraction in [0, 1]");
  Rng rng(seed);
  const uint32_t B = p.block_tokens;

  // Shared prefixes, drawn once per group.
  std::vector<std::vector<uint32_t>> prefix(p.groups);
  for (uint32_t g = 0; g < p.groups; ++g) {
    uint32_t len = p.lengths[g % p.lengths.size()];
    prefix[g].resize(static_cast<size_t>(std::llround(p.shared_fraction * len)));
    for (auto& t : prefix[g]) t = static_cast<uint32_t>(rng.next());
  }

  // Issue order of (group, prompt index) pairs.
  std::vector<std::pair<uint32_t, uint32_t>> order;
  order.reserve(size_t{p.groups} * p.prompts_per_group);
  if (p.order == GspOrder::kGrouped) {
    for (uint32_t g = 0; g < p.groups; ++g)
      for (uint32_t i = 0; i < p.prompts_per_group; ++i) order.push_back({g, i});
  } else {
    for (uint32_t i = 0; i < p.prompts_per_group; ++i)
      for (uint32_t g = 0; g < p.groups; ++g) order.push_back({g, i});
    if (p.order == GspOrder::kRandom)
      for (size_t k = order.size(); k > 1; --k) std::swap(order[k - 1], order[rng.below(k)]);
  }

  Trace t;
  t.name = fmt::format("gsp(seed={})", seed);
  t.block_tokens = B;
  std::vector<uint32_t> issued(p.groups, 0);
  std::vector<uint32_t> tokens;
  std::vector<uint64_t> ids;
  double now_s = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    auto [g, i] = order[k];
    if (k > 0) now_s += rng.exponential(1.0 / p.rate);
    uint32_t len = p.lengths[g % p.lengths.size()];
    tokens.assign(prefix[g].begin(), prefix[g].end());
    while (tokens.size() < len) tokens.push_back(static_cast<uint32_t>(rng.next()));
    ids.clear();
    for (size_t b = 0; b < tokens.size(); b += B)
      ids.push_back(hash_tokens(tokens.data() + b, std::min<size_t>(B, tokens.size() - b)));
    Time now = static_cast<Time>(std::llround(now_s * kMicrosPerSecond));
    t.add_request(now, ids, len, p.output_tokens, g, ++issued[g], 0);
  }
  return t;
}

std::vector<ParamSpec> gsp_param_specs() {
  return {
      {"groups", "128", "prompt groups, each with its own shared prefix"},
      {"prompts", "32", "prompts per group"},
      {"lengths", "512/1024/2048/4096/8192", "total prompt tokens; group g uses entry g mod n"},
      {"shared_fraction", "0.5", "share of a prompt that is the group's prefix"},
      {"output_tokens", "4", "output tokens per request"},
      {"rate", "12", "Poisson arrival rate, requests per second"},
      {"order", "random", "random | round_robin (for each prompt, each group) | grouped"},
      {"block_tokens", "16", "tokens per KV block"},
  };
}

namespace {
uint32_t positive_u32(const Params& params, const std::string& name) {
  int64_t v = params.get_int(name);
  if (v <= 0 || v > UINT32_MAX) throw ConfigError("gsp: " + name + " must be a positive integer");
  return static_cast<uint32_t>(v);
}
}  // namespace

GspParams gsp_params(const Params& params) {
  GspParams p;
  p.groups = positive_u32(params, "groups");
  p.prompts_per_group = positive_u32(params, "prompts");
  p.lengths.clear();
  std::string list = params.get_string("lengths");
  for (size_t start = 0; start <= list.size();) {
    size_t slash = list.find('/', start);
    std::string item =
        list.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    start = slash == std::string::npos ? list.size() + 1 : slash + 1;
    char* end = nullptr;
    unsigned long v = std::strtoul(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v == 0 || v > (1u << 24))
      throw ConfigError("gsp: lengths must be positive token counts separated by '/', got '" +
                        list + "'");
    p.lengths.push_back(static_cast<uint32_t>(v));
  }
  p.shared_fraction = params.get_double("shared_fraction");
  if (p.shared_fraction < 0 || p.shared_fraction > 1)
    throw ConfigError("gsp: shared_fraction must be in [0, 1]");
  int64_t out = params.get_int("output_tokens");
  if (out < 0 || out > UINT32_MAX) throw ConfigError("gsp: output_tokens must be >= 0");
  p.output_tokens = static_cast<uint32_t>(out);
  p.rate = params.get_double("rate");
  if (p.rate <= 0) throw ConfigError("gsp: rate must be positive");
  std::string order = params.get_string("order");
  if (order == "random") {
    p.order = GspOrder::kRandom;
  } else if (order == "round_robin" || order == "round-robin") {
    p.order = GspOrder::kRoundRobin;
  } else if (order == "grouped") {
    p.order = GspOrder::kGrouped;
  } else {
    throw ConfigError("gsp: order must be random, round_robin or grouped, got '" + order + "'");
  }
  p.block_tokens = positive_u32(params, "block_tokens");
  return p;
}

}  // namespace kvpolicy
