// SampledShadow and KeySampler (sampled_shadow.h).
#include "sampled_shadow.h"

#include <algorithm>
#include <cmath>

namespace kvpolicy {

KeySampler::KeySampler(double rate)
    : threshold_(uint64_t(std::llround(std::clamp(rate, 0.0, 1.0) * double(uint64_t{1} << 24)))) {}

namespace {
PolicyContext shadow_context(const PolicyContext& real, const PrefixTree& tree, size_t capacity) {
  PolicyContext ctx = real;
  ctx.tree = &tree;
  ctx.capacity_blocks = capacity;
  ctx.future.reset();  // candidates are online: they never read it
  return ctx;
}
}  // namespace

SampledShadow::SampledShadow(const PolicySpec& spec, const PolicyContext& real, size_t capacity)
    : tree_(std::min<size_t>(capacity + 64, size_t{1} << 20)),
      walk_(tree_, capacity, 0),
      policy_(make_policy(spec, shadow_context(real, tree_, capacity))) {
  walk_.attach(*policy_, nullptr);
}

uint32_t SampledShadow::access(const RequestView& r, std::span<const BlockKey> sampled) {
  RequestView v = r;
  v.blocks = sampled;
  AccessResult a = policy_->access_in(walk_, v);
  hits_ += a.hit_blocks;
  accesses_ += sampled.size();
  return a.hit_blocks;
}

size_t SampledShadow::memory_bytes() const {
  return tree_.memory_bytes() + walk_.memory_bytes() + policy_->memory_bytes();
}

}  // namespace kvpolicy
