// Zipf prefix workload: popular shared prefixes plus unique suffixes, cheap to make at 10 M+
// block accesses for speed tests.
#include <fmt/format.h>

#include <algorithm>

#include "generator_limits.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/generators.h"

namespace kvpolicy {

ZipfSampler::ZipfSampler(size_t n, double alpha) : cdf_(std::max<size_t>(n, 1)) {
  double sum = 0;
  for (size_t i = 0; i < cdf_.size(); ++i) cdf_[i] = sum += std::pow(double(i + 1), -alpha);
  for (double& c : cdf_) c /= sum;
  cdf_.back() = 1.0;
}

size_t ZipfSampler::operator()(Rng& rng) const {
  double u = rng.uniform();
  return std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin();
}

void generate_zipf_requests(const ZipfParams& p, uint64_t seed, const ZipfSink& emit) {
  if (p.requests == 0 || p.requests > UINT32_MAX || p.prefixes == 0 || p.alpha < 0 ||
      p.prefix_blocks + uint64_t{p.suffix_blocks} == 0 || p.rate <= 0 || p.block_tokens == 0)
    throw ConfigError("zipf: parameters out of range (see `kvpolicy trace generate`)");
  // The prefixes' keys and their popularity are held; the requests go to `emit`.
  generated_time(double(p.requests - 1) / p.rate, "zipf");
  check_generator_size("zipf",
                       fmt::format("prefixes={} x prefix_blocks={}", p.prefixes, p.prefix_blocks),
                       0, 0, double(p.prefixes) * (p.prefix_blocks + 1) * 8);
  Rng rng(seed);
  ZipfSampler pick(p.prefixes, p.alpha);

  // Chained keys of every prefix, computed once.
  std::vector<BlockKey> prefix_keys(size_t{p.prefixes} * p.prefix_blocks);
  uint64_t salt = mix64(seed ^ 0x7a697066ULL);
  for (uint32_t d = 0; d < p.prefixes; ++d) {
    BlockKey k = kRootKey;
    for (uint32_t j = 0; j < p.prefix_blocks; ++j)
      prefix_keys[size_t{d} * p.prefix_blocks + j] = k =
          chain_key(k, salt ^ (uint64_t{d} << 24 | j));
  }

  const uint32_t n_blocks = p.prefix_blocks + p.suffix_blocks;
  const uint32_t tokens = n_blocks * p.block_tokens;
  std::vector<BlockKey> keys(n_blocks);
  for (uint64_t r = 0; r < p.requests; ++r) {
    size_t d = pick(rng);
    std::copy_n(prefix_keys.begin() + d * p.prefix_blocks, p.prefix_blocks, keys.begin());
    BlockKey k = p.prefix_blocks ? keys[p.prefix_blocks - 1] : kRootKey;
    for (uint32_t j = 0; j < p.suffix_blocks; ++j)  // the request index makes them unique
      keys[p.prefix_blocks + j] = k = chain_key(k, ~salt ^ (r << 16 | j));
    emit(generated_time(double(r) / p.rate, "zipf"), keys, tokens);
  }
}

Trace generate_zipf(const ZipfParams& p, uint64_t seed) {
  Trace t;
  t.name = fmt::format("zipf(seed={})", seed);
  t.block_tokens = p.block_tokens;
  const uint64_t n_blocks = uint64_t{p.prefix_blocks} + p.suffix_blocks;
  check_generator_size("zipf", fmt::format("requests={} of {} blocks", p.requests, n_blocks),
                       double(p.requests), double(n_blocks), 0);
  t.reserve(p.requests, p.requests * n_blocks);
  generate_zipf_requests(p, seed, [&](Time now, std::span<const BlockKey> keys, uint32_t tokens) {
    t.add_request_keys(now, keys, tokens, 1);
  });
  return t;
}

std::vector<ParamSpec> zipf_param_specs() {
  return {
      param_int("requests", 100000, {.min = 1, .max = UINT32_MAX - 1}, "requests in the trace"),
      param_int("prefixes", 10000, {.min = 1, .max = 1 << 30},
                "distinct shared prefixes (documents)"),
      param_double("alpha", 0.9, {.min = 0},
                   "Zipf exponent of prefix popularity (prefix 0 most popular)"),
      param_int("prefix_blocks", 16, {.min = 0, .max = 1 << 20}, "blocks per prefix"),
      param_int("suffix_blocks", 4, {.min = 0, .max = 1 << 16},
                "unique blocks after the prefix in each request"),
      param_double("rate", 1000, {.min = 0, .min_exclusive = true},
                   "requests per second, evenly spaced"),
      param_int("block_tokens", 16, {.min = 1, .max = 1 << 20}, "tokens per KV block"),
  };
}

ZipfParams zipf_params(const Params& params) {
  auto u32 = [&](const char* name) { return static_cast<uint32_t>(params.get_int(name)); };
  ZipfParams p;
  p.requests = static_cast<uint64_t>(params.get_int("requests"));
  p.prefixes = u32("prefixes");
  p.alpha = params.get_double("alpha");
  p.prefix_blocks = u32("prefix_blocks");
  p.suffix_blocks = u32("suffix_blocks");
  if (p.prefix_blocks + p.suffix_blocks == 0)
    throw ConfigError("zipf: a request needs at least one block");
  p.rate = params.get_double("rate");
  p.block_tokens = u32("block_tokens");
  return p;
}

}  // namespace kvpolicy
