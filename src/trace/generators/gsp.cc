// GSP: groups of prompts sharing a prefix (SGLang's generated-shared-prefix benchmark, with the
// KVRouting defaults; `kvpolicy trace generate --help` lists them).
#include <fmt/format.h>

#include <algorithm>

#include "generator_limits.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/strings.h"
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
  const uint32_t B = p.block_tokens;
  double mean_blocks = 0, prefix_tokens = 0;
  for (uint32_t len : p.lengths) mean_blocks += std::ceil(double(len) / B) / p.lengths.size();
  for (uint32_t g = 0; g < std::min<size_t>(p.groups, p.lengths.size()); ++g)
    prefix_tokens += p.shared_fraction * p.lengths[g];
  const double requests = double(p.groups) * p.prompts_per_group;
  check_generator_size("gsp", fmt::format("groups={} x prompts={}", p.groups, p.prompts_per_group),
                       requests, mean_blocks,
                       requests * 8 + prefix_tokens * 4 * (double(p.groups) / p.lengths.size()));
  Rng rng(seed);

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
    t.add_request(generated_time(now_s, "gsp"), ids, len, p.output_tokens, g, ++issued[g], 0);
  }
  return t;
}

namespace {
const ParamRange kCount{.min = 1, .max = UINT32_MAX};
}  // namespace

std::vector<ParamSpec> gsp_param_specs() {
  return {
      param_int("groups", 128, kCount, "prompt groups, each with its own shared prefix"),
      param_int("prompts", 32, kCount, "prompts per group"),
      param_string("lengths", "512/1024/2048/4096/8192",
                   "total prompt tokens, '/'-separated; group g uses entry g mod n"),
      param_double("shared_fraction", 0.5, {.min = 0, .max = 1},
                   "share of a prompt that is the group's prefix"),
      param_int("output_tokens", 4, {.min = 0, .max = UINT32_MAX}, "output tokens per request"),
      param_double("rate", 12, {.min = 0, .min_exclusive = true},
                   "Poisson arrival rate, requests per second"),
      // round-robin: the spelling older command lines used.
      param_choice("order", "random", {"random", "round_robin", "round-robin", "grouped"},
                   "random; round_robin: for each prompt, each group; grouped"),
      param_int("block_tokens", 16, kCount, "tokens per KV block"),
  };
}

GspParams gsp_params(const Params& params) {
  auto u32 = [&](const char* name) { return static_cast<uint32_t>(params.get_int(name)); };
  GspParams p;
  p.groups = u32("groups");
  p.prompts_per_group = u32("prompts");
  p.lengths.clear();
  std::string list = params.get_string("lengths");
  for (const std::string& item : split_list(list, '/')) {
    char* end = nullptr;
    unsigned long v = std::strtoul(item.c_str(), &end, 10);
    if (*end != '\0' || v == 0 || v > (1u << 24))
      throw ConfigError("gsp: lengths must be positive token counts separated by '/', got '" +
                        list + "'");
    p.lengths.push_back(static_cast<uint32_t>(v));
  }
  p.shared_fraction = params.get_double("shared_fraction");
  p.output_tokens = u32("output_tokens");
  p.rate = params.get_double("rate");
  std::string order = params.get_string("order");
  p.order = order == "random"    ? GspOrder::kRandom
            : order == "grouped" ? GspOrder::kGrouped
                                 : GspOrder::kRoundRobin;
  p.block_tokens = u32("block_tokens");
  return p;
}

}  // namespace kvpolicy
