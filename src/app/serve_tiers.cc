// ServeSpec's memory tiers (docs/serve.md, "Memory tiers"): sizes as multiples of HBM or as
// capacities in any unit, each tier's policy, admission filter and link.
#include <cmath>

#include "kvpolicy/app/serve.h"
#include "kvpolicy/core/capacity.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"

namespace kvpolicy::app {
namespace {

// "2", "0.5x": a multiple of `base` blocks; "100000b" / "100000blocks": blocks; anything else a
// capacity as `-c` takes it (tokens, KV memory, a share of the trace's unique blocks).
size_t tier_blocks(const std::string& text, const std::string& flag, size_t base,
                   size_t unique_blocks, uint32_t block_tokens, double kv_bytes_per_block) {
  size_t digits = number_length(text);
  std::string unit = text.substr(digits);
  std::optional<double> v = digits ? read_number(text.substr(0, digits)) : std::nullopt;
  auto bad = [&](const std::string& why) -> size_t {
    throw ConfigError(flag + " '" + text + "': " + why +
                      " (write a multiple of HBM like 2 or 0.5x, blocks like 100000b, tokens "
                      "like 2000000t, or memory like 64GB or 1TiB)");
  };
  if (!v || !(*v > 0) || !std::isfinite(*v)) return bad("not a positive number");
  if (unit.empty() || unit == "x") {
    double blocks = std::llround(*v * double(base));
    if (blocks < 1) return bad("less than one block");
    return static_cast<size_t>(blocks);
  }
  if (unit == "b" || unit == "blocks") {
    if (*v != std::floor(*v)) return bad("a number of blocks must be whole");
    return static_cast<size_t>(*v);
  }
  try {
    return parse_capacity(text).blocks(unique_blocks, block_tokens, kv_bytes_per_block);
  } catch (const ConfigError& e) {
    throw ConfigError(flag + ": " + e.what());
  }
}

}  // namespace

std::vector<TierSpec> ServeSpec::tier_specs(size_t hbm_blocks, uint32_t workers,
                                            size_t unique_blocks, uint32_t block_tokens,
                                            double kv_bytes_per_block) const {
  std::vector<TierSpec> out;
  struct Given {
    const char* name;
    const std::string& size;
    const std::string& policy;
    const std::string& admit;
    const std::string& link;
    size_t base;
  };
  const Given given[] = {
      {"dram", dram, dram_policy, dram_admit, dram_link, hbm_blocks},
      {"ssd", ssd, ssd_policy, ssd_admit, ssd_link, hbm_blocks},
      {"remote", remote, remote_policy, remote_admit, remote_link, hbm_blocks * workers},
  };
  for (const Given& g : given) {
    if (g.size.empty() || g.size == "0") continue;  // as simulate's --dram 0: no such tier
    const std::string flag = std::string("--") + g.name;
    TierSpec t;
    t.name = g.name;
    t.capacity_blocks =
        tier_blocks(g.size, flag, g.base, unique_blocks, block_tokens, kv_bytes_per_block);
    t.policy = parse_policy_spec(g.policy);
    PolicyRegistry::instance().get(t.policy.name);
    t.admission = parse_admission(g.admit, flag + "-admit");
    t.link = find_link(g.link);
    out.push_back(t);
  }
  return out;
}

}  // namespace kvpolicy::app
